#include "client/cli/export_command.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cli/connection.h"
#include "client/cli/interrupt_watcher.h"
#include "client/cli/progress_line.h"
#include "client/export_client.h"
#include "client/replacement_file.h"

namespace dvexport::cli {

// Opened without blocking and refused unless a regular file: a FIFO would wait for a writer
// forever.
absl::StatusOr<std::string> ReadSyncState(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::string();
    return absl::FailedPreconditionError(
        absl::StrCat("--state ", path, ": cannot be read: ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat("--state ", path, ": not a regular file"));
  }
  std::string contents;
  char buffer[4096];
  ssize_t got;
  // A token is one short line; what follows its line is not read.
  while (contents.find('\n') == std::string::npos && contents.size() < (1 << 20) &&
         (got = ::read(fd, buffer, sizeof buffer)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat("--state ", path, ": cannot be read: ", std::strerror(error)));
    }
    contents.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return contents.substr(0, contents.find('\n'));
}

namespace {

// Replaces the state file with "token" atomically (a synced temporary file renamed over it).
absl::Status WriteSyncState(const std::string& path, const std::string& token) {
  client::ReplacementFile file(path);
  absl::Status status = file.Create();
  if (!status.ok()) return status;
  const std::string line = token + "\n";
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(file.fd(), line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError(
          absl::StrCat("--state ", path, ": cannot be written: ", std::strerror(errno)));
    }
    written += static_cast<size_t>(n);
  }
  return file.Commit();
}

}  // namespace

int RunExport(const CommandLine& input) {
  const bool sync = input.action == CommandLine::Action::kSync;
  CommandLine command = input;
  if (sync) {
    absl::StatusOr<std::string> token = ReadSyncState(command.state_file);
    if (!token.ok()) return PrintError(token.status());
    if (!token->empty()) {
      command.request.mutable_query()->set_changes_since(*token);
    } else {
      command.request.mutable_query()->set_start_change_stream(command.start_change_stream);
    }
  }

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
  options.credentials = command.credentials;
  options.write_back_bytes = command.write_back_bytes;
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
    // Not for a sync's delta: a count of a snapshot delta scans the table as the delta does, and
    // one of a change stream would read the stream beside it.
    if (!sync || command.request.query().changes_since().empty()) {
      counter = StartCounting(client, command, &*progress_line);
    }
  }

  const bool to_stdout = command.output == kStandardOutput;
  const bool in_place = !to_stdout && client::ReplacementFile::IsWrittenInPlace(command.output);
  absl::StatusOr<client::ExportSummary> summary =
      to_stdout ? client.ExportToFd(command.request, STDOUT_FILENO, options)
                : client.ExportToFile(command.request, command.output, options);
  StopCounting(client, &counter);
  interrupts.Stop();
  if (progress_line.has_value()) progress_line->Clear();

  if (!summary.ok()) {
    // A FIFO or device: the message says what reached it.
    const std::string in_place_left(summary.status().message());
    interrupts.DieIfInterrupted(to_stdout  ? "the output is incomplete"
                                : in_place ? in_place_left.c_str()
                                           : "the file is left as it was");
    const int exit_code = PrintError(summary.status());
    if (sync && summary.status().code() == absl::StatusCode::kFailedPrecondition &&
        absl::StartsWith(summary.status().message(), "changes_since:")) {
      std::fprintf(stderr,
                   "dvexport: %s holds a token this server cannot judge; it is left as it was: "
                   "remove it, and the next sync exports everything again (if it names a change "
                   "stream that still exists, `dvexport streams drop --state FILE` first)\n",
                   command.state_file.c_str());
    }
    return exit_code;
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
  if (sync) {
    // Only now that the output is in place: a failure before this repeats the delta next time.
    if (summary->change_token.empty()) {
      return PrintError(absl::FailedPreconditionError(
          "the server sent no change token (does it support sync?); the state file is left as "
          "it was"));
    }
    absl::Status status = WriteSyncState(command.state_file, summary->change_token);
    if (!status.ok()) return PrintError(status);
    // Versions 2 and 3 of the token (base64url of its first byte): "Ag".."Av" and "Aw".."A_".
    const std::string& token = summary->change_token;
    const bool stream = token.size() > 2 && token[0] == 'A' &&
                        std::string_view("wxyz0123456789-_").find(token[1]) != std::string::npos;
    std::fprintf(stderr, "%s: the next sync exports what changed since this one (%s)\n",
                 command.state_file.c_str(),
                 stream ? "a change stream: it reads only what changed"
                        : "a snapshot token: it reads the whole table");
  }
  return kExitOk;
}

}  // namespace dvexport::cli
