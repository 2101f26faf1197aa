#include "client/cli/interrupt_watcher.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace dvexport::cli {

InterruptWatcher::InterruptWatcher() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGHUP);
  sigaddset(&signals_, kWakeSignal);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

void InterruptWatcher::Start(client::ExportClient* client) {
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

void InterruptWatcher::Stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  pthread_kill(thread_.native_handle(), kWakeSignal);
  thread_.join();
}

void InterruptWatcher::DieIfInterrupted(const char* what_is_left) {
  const int signo = received();
  if (signo == 0) return;
  std::fprintf(stderr, "dvexport: interrupted by SIG%s; %s\n", sigabbrev_np(signo), what_is_left);
  std::fflush(nullptr);
  ::signal(signo, SIG_DFL);
  pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
  raise(signo);
  _exit(128 + signo);
}

}  // namespace dvexport::cli
