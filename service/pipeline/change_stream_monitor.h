#ifndef DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_MONITOR_H_
#define DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_MONITOR_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "service/db/change_stream_admin.h"
#include "service/db/connection_pool.h"
#include "service/db/read_session.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/change_stream_observer.h"

namespace dvexport::pipeline {

struct ChangeStreamMonitorOptions {
  // The publication change streams read (--change_publication), as the support probe checks it.
  std::string publication = db::kDefaultChangePublication;
  // Between polls (--change_stream_poll_s); 0: the monitor never polls.
  std::chrono::seconds interval{0};
  // A stream that retains more WAL than this is logged as a warning (--change_stream_warn_wal_mb).
  int64_t warn_wal_bytes = int64_t{1024} << 20;
};

// Watches the database's change streams (docs/SYNC.md) in the background: every interval, one
// short READ ONLY transaction on a pool connection (db::ReadChangeStreamState) reads whether
// stream tokens are possible and every dvexport slot; the observer gets the gauges, and the log
// (CallLog::WriteEvent) gets
//   {"event":"change_tokens","kind":"stream","publication":"dvexport",
//    "message":"change tokens: stream (publication dvexport)"}
// at the first poll and whenever the kind changes (for "snapshot", the message ends
// "; change streams unavailable: <reason>"), a warning when a slot is lost or starts to retain
// more than warn_wal_bytes (once each, until it recovers), and one line when polls start to fail.
//
// A poll waits at most 2 s for a pool connection (it never holds an export up for long) and ends
// within min(interval, 10 s), at least 1 s; Stop cancels the poll in flight (about 100 ms, 1 s on
// a silent database). Thread-safe.
class ChangeStreamMonitor {
 public:
  // "*pool", "*observer" and "*log" (both may be null) must outlive the monitor.
  ChangeStreamMonitor(db::ConnectionPool* pool, const db::ReadSessionOptions& session,
                      ChangeStreamMonitorOptions options, ChangeStreamObserver* observer,
                      CallLog* log);
  // Stop().
  ~ChangeStreamMonitor();
  ChangeStreamMonitor(const ChangeStreamMonitor&) = delete;
  ChangeStreamMonitor& operator=(const ChangeStreamMonitor&) = delete;

  // Starts the polling thread (the first poll at once); nothing when the interval is 0. Once.
  void Start();
  // Ends the poll in flight and joins the thread; later polls do nothing. Repeatable.
  void Stop();

  // One poll on the calling thread (the polling thread's step; tests call it to poll now).
  absl::Status PollOnce();

  // The idle seconds of slot "name" (ChangeStreamGauges::idle_seconds) as of now; -1 when no
  // poll has seen it (the monitor is off, or the slot is newer than the last poll).
  int64_t IdleSeconds(const std::string& name) const;

 private:
  struct Seen {
    uint64_t confirmed_lsn = 0;
    std::chrono::steady_clock::time_point moved;
    bool lost = false;
    bool over_warning = false;
  };

  void Run();
  // What a successful poll read: the gauges, the log lines.
  void Observe(const db::ChangeStreamState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(poll_mu_);

  db::ConnectionPool* const pool_;
  db::ReadSessionOptions session_options_;
  const ChangeStreamMonitorOptions options_;
  ChangeStreamObserver* const observer_;
  CallLog* const log_;

  std::mutex run_mu_;
  std::condition_variable wake_;
  bool stopping_ ABSL_GUARDED_BY(run_mu_) = false;
  // The poll in flight's session, for Stop's cancel.
  db::ReadSession* polling_ ABSL_GUARDED_BY(run_mu_) = nullptr;
  std::thread thread_;

  // One poll at a time (the thread, or a test's PollOnce).
  std::mutex poll_mu_;
  // What the last poll logged: its kind ("" before the first), whether polls are failing.
  std::string logged_kind_ ABSL_GUARDED_BY(poll_mu_);
  bool failing_ ABSL_GUARDED_BY(poll_mu_) = false;

  mutable std::mutex seen_mu_;
  absl::flat_hash_map<std::string, Seen> seen_ ABSL_GUARDED_BY(seen_mu_);
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_MONITOR_H_
