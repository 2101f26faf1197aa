#ifndef DVEXPORT_CLIENT_CLI_INTERRUPT_WATCHER_H_
#define DVEXPORT_CLIENT_CLI_INTERRUPT_WATCHER_H_

#include <signal.h>

#include <atomic>
#include <thread>

#include "client/export_client.h"

namespace dvexport::cli {

// Turns SIGINT, SIGTERM and SIGHUP into ExportClient::Cancel(). The signals
// are blocked in every thread and taken by a thread of its own with sigwait,
// so cancelling is ordinary code, not a signal handler.
class InterruptWatcher {
 public:
  // Blocks the signals; must run before any other thread starts, so that all
  // threads inherit the mask.
  InterruptWatcher();

  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  ~InterruptWatcher() { Stop(); }

  // Cancels "client" on each of the signals, from a thread of its own.
  // "client" must outlive Stop().
  void Start(client::ExportClient* client);

  // Ends the thread. Signals that come later stay blocked, pending.
  void Stop();

  // The signal that cancelled the export; 0 if none.
  int received() const { return received_.load(); }

  // If a signal cancelled the export: says so on stderr with "what_is_left" ("the file is left
  // as it was", ...) and dies of that signal, as a shell expects of an interrupted program.
  // Returns otherwise.
  void DieIfInterrupted(const char* what_is_left);

 private:
  // Wakes the watcher to stop; from elsewhere it is ignored.
  static constexpr int kWakeSignal = SIGUSR1;

  sigset_t signals_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> received_{0};
};

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_INTERRUPT_WATCHER_H_
