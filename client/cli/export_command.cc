#include "client/cli/export_command.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <thread>

#include "client/cli/progress_line.h"
#include "client/export_client.h"

namespace dvexport::cli {
namespace {

// Turns SIGINT, SIGTERM and SIGHUP into ExportClient::Cancel(). The signals
// are blocked in every thread and taken by a thread of its own with sigwait,
// so cancelling is ordinary code, not a signal handler.
class InterruptWatcher {
 public:
  // Blocks the signals; must run before any other thread starts, so that all
  // threads inherit the mask.
  InterruptWatcher() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    sigaddset(&signals_, SIGHUP);
    sigaddset(&signals_, kWakeSignal);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  }

  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  ~InterruptWatcher() { Stop(); }

  // Cancels "client" on each of the signals, from a thread of its own.
  // "client" must outlive Stop().
  void Start(client::ExportClient* client) {
    thread_ = std::thread([this, client] {
      for (;;) {
        int signo = 0;
        sigwait(&signals_, &signo);
        if (signo == kWakeSignal) {
          if (stopping_.load()) return;
          continue;
        }
        if (received_.load() == 0) received_.store(signo);
        client->Cancel();
      }
    });
  }

  // Ends the thread. Signals that come later stay blocked, pending.
  void Stop() {
    if (!thread_.joinable()) return;
    stopping_.store(true);
    pthread_kill(thread_.native_handle(), kWakeSignal);
    thread_.join();
  }

  // The signal that cancelled the export; 0 if none.
  int received() const { return received_.load(); }

  // Dies of signal "signo", as a shell expects of an interrupted program.
  [[noreturn]] void DieOf(int signo) {
    std::fflush(nullptr);
    ::signal(signo, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
    raise(signo);
    _exit(128 + signo);
  }

 private:
  // Wakes the watcher to stop; from elsewhere it is ignored.
  static constexpr int kWakeSignal = SIGUSR1;

  sigset_t signals_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> received_{0};
};

}  // namespace

int RunExport(const CommandLine& command) {
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  InterruptWatcher interrupts;

  client::ExportClient client(client::CreateChannel(command.server));
  interrupts.Start(&client);

  std::optional<ProgressLine> progress_line;
  client::ExportOptions options;
  options.timeout = command.timeout;
  if (isatty(STDERR_FILENO)) {
    progress_line.emplace(stderr);
    options.on_progress = [&progress_line](const client::ExportProgress& progress) {
      progress_line->Update(progress);
    };
  }

  const bool to_stdout = command.output == kStandardOutput;
  absl::StatusOr<client::ExportSummary> summary =
      to_stdout ? client.ExportToFd(command.request, STDOUT_FILENO, options)
                : client.ExportToFile(command.request, command.output, options);
  interrupts.Stop();
  if (progress_line.has_value()) progress_line->Clear();

  if (!summary.ok()) {
    if (interrupts.received() != 0) {
      std::fprintf(stderr, "dvexport: interrupted by SIG%s; %s\n",
                   sigabbrev_np(interrupts.received()),
                   to_stdout ? "the output is incomplete" : "the file is left as it was");
      interrupts.DieOf(interrupts.received());
    }
    std::fprintf(stderr, "dvexport: error: %s: %s\n",
                 absl::StatusCodeToString(summary.status().code()).c_str(),
                 std::string(summary.status().message()).c_str());
    return kExitExportFailed;
  }
  std::fprintf(stderr, "%s\n",
               FormatSummary(*summary, to_stdout ? "stdout" : command.output).c_str());
  return kExitOk;
}

}  // namespace dvexport::cli
