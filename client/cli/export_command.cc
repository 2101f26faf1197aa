#include "client/cli/export_command.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "client/cli/connection.h"
#include "client/cli/interrupt_watcher.h"
#include "client/cli/progress_line.h"
#include "client/export_client.h"

namespace dvexport::cli {

int RunExport(const CommandLine& command) {
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  InterruptWatcher interrupts;

  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(command);
  if (!channel.ok()) return PrintError(channel.status());
  client::ExportClient client(*channel);
  interrupts.Start(&client);

  std::optional<ProgressLine> progress_line;
  // On a terminal, the server counts the values meanwhile, for a progress bar.
  std::thread counter;
  client::ExportOptions options;
  options.timeout = command.timeout;
  options.max_attempts = command.channel.max_attempts;
  options.on_retry = [&progress_line, &options](const absl::Status& failure, int next_attempt,
                                                std::chrono::milliseconds wait) {
    if (progress_line.has_value()) progress_line->Clear();
    std::fprintf(stderr, "%s\n",
                 FormatRetry(failure, next_attempt, wait, options.max_attempts).c_str());
  };
  if (isatty(STDERR_FILENO)) {
    progress_line.emplace(stderr);
    options.on_progress = [&progress_line](const client::ExportProgress& progress) {
      progress_line->Update(progress);
    };
    counter = StartCounting(client, command, &*progress_line);
  }

  const bool to_stdout = command.output == kStandardOutput;
  absl::StatusOr<client::ExportSummary> summary =
      to_stdout ? client.ExportToFd(command.request, STDOUT_FILENO, options)
                : client.ExportToFile(command.request, command.output, options);
  StopCounting(client, &counter);
  interrupts.Stop();
  if (progress_line.has_value()) progress_line->Clear();

  if (!summary.ok()) {
    interrupts.DieIfInterrupted(to_stdout ? "the output is incomplete"
                                          : "the file is left as it was");
    return PrintError(summary.status());
  }
  std::fprintf(stderr, "%s\n",
               FormatSummary(*summary, to_stdout ? "stdout" : command.output).c_str());
  if (summary->in_place) {
    std::fprintf(stderr,
                 "dvexport: %s is not a regular file: it was written in place, without a "
                 "temporary file; the bytes matched the server's trailer (length and CRC-32) "
                 "once all were written\n",
                 command.output.c_str());
  }
  return kExitOk;
}

}  // namespace dvexport::cli
