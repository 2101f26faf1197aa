#ifndef DVEXPORT_SERVICE_PIPELINE_EXPORT_PIPELINE_H_
#define DVEXPORT_SERVICE_PIPELINE_EXPORT_PIPELINE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "service/auth/authenticator.h"
#include "service/auth/client_identities.h"
#include "service/db/read_session_options.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/change_stream_observer.h"
#include "service/pipeline/dhis2_version_gate.h"
#include "service/pipeline/export_slots.h"

namespace dvexport::db {
class ConnectionPool;
class ReadSession;
}  // namespace dvexport::db

namespace dvexport::pipeline {

class ChangeStreamMonitor;
struct ChangeStreamMonitorOptions;

// How calls are authenticated (--auth).
enum class AuthMode {
  // Every call but health needs a DHIS2 identity: a personal access token, a password, or a
  // client certificate listed in --client_identities (docs/SECURITY.md).
  kDhis2,
  // No identity is asked: whoever reaches the port reads everything (a trusted network only).
  kNone,
};

struct PipelineOptions {
  // Bytes of rendered (uncompressed) output per data chunk sent.
  size_t chunk_size = 256 * 1024;
  // Serialized bytes of a StreamDataValues batch, at most (a single larger
  // value makes a batch of its own).
  size_t batch_bytes = 256 * 1024;
  // Exports running at once; the next ones wait for a slot (each user's first come first served,
  // the users in turn: ExportSlots).
  int max_concurrent_exports = 4;
  // Slots one user (a DHIS2 username, or the peer's address) holds at most; 0: every slot (the
  // server's --max_exports_per_user defaults to max(1, max_concurrent_exports - 1)).
  int max_exports_per_user = 0;
  // Exports waiting for a slot at most; one more is refused with RESOURCE_EXHAUSTED. 0: none wait.
  int max_queued_exports = 64;
  // Exports of one user waiting at most; one more is refused with RESOURCE_EXHAUSTED. 0: the
  // whole queue (the server's --max_queued_exports_per_user defaults to half of it).
  int max_queued_exports_per_user = 0;
  // How long an export waits for a slot at most (never past its deadline); then it is refused
  // with RESOURCE_EXHAUSTED. 0: none wait.
  std::chrono::milliseconds max_queue_wait{30000};
  // How long a call waits for a pooled database connection.
  std::chrono::milliseconds connection_wait{10000};
  // PostgreSQL statement_timeout for a call's statements; 0: the role's or
  // database's setting.
  std::chrono::milliseconds statement_timeout{0};
  // A streaming export whose client takes nothing for this long (no write completes while
  // messages wait) is ended with DEADLINE_EXCEEDED, and its transaction, snapshot, slot and
  // connections are released. The timeout runs from the time a reader at stall_min_rate would
  // have read every byte the client's transport took (at most stall_max_unread of them counted):
  // a transport may take nothing more until its client has read what it holds, however large its
  // receive window.
  std::chrono::milliseconds stall_timeout{60000};
  // The stall timeout while an export of another user waits for a slot (that the stalled export
  // could give up): the client's credit counts for at most as long, so that such a client holds
  // its slot at most twice this long after its last progress.
  std::chrono::milliseconds stall_timeout_contended{5000};
  // The highest zstd compression_level accepted (1 to 19); a higher one is refused with
  // INVALID_ARGUMENT. Up to 9 zstd is at least as fast as zlib's level 9; levels 16-19 compress
  // at a few MB/s, so that one cheap request would hold an export slot and a core for minutes.
  int max_zstd_level = 9;
  // Bytes per second: a client that reads at least this fast is never ended by stall_timeout.
  int64_t stall_min_rate = 64 * 1024;
  // The unread bytes a client is given time for, at most.
  int64_t stall_max_unread = 16 * 1024 * 1024;
  // How a large export is read with several connections at once (slices of
  // the table, one snapshot; see db::PlanBlockSlices); extra connections are
  // taken only when the pool can spare them. max_streams 1: one COPY always.
  db::ReadPlanOptions read_plan;
  // How calls are authenticated; kDhis2 unless a trusted network is meant.
  AuthMode auth = AuthMode::kDhis2;
  // The identity cache, the verification workers and the limits on failed attempts (kDhis2).
  auth::AuthenticatorOptions authentication;
  // Client certificates that stand for DHIS2 usernames (--client_identities); none if null. Must
  // outlive the service.
  const auth::ClientIdentities* client_identities = nullptr;
  // The publication change streams read (--change_publication, docs/SYNC.md).
  std::string change_publication = db::kDefaultChangePublication;
  // How often the change stream monitor polls the database's slots; 0: never (the server's
  // --change_stream_poll_s defaults to 30).
  std::chrono::seconds change_stream_poll{0};
  // A change stream retaining more WAL than this is logged as a warning
  // (--change_stream_warn_wal_mb).
  int64_t change_stream_warn_wal_bytes = int64_t{1024} << 20;

  // The database side of each call.
  db::ReadSessionOptions session() const {
    return {.connection_wait = connection_wait,
            .statement_timeout = statement_timeout,
            .read_plan = read_plan,
            .change_publication = change_publication};
  }

  // The change stream monitor's settings.
  ChangeStreamMonitorOptions change_streams() const;

  // The export slots and their queue.
  ExportSlotOptions slots() const {
    return {.slots = max_concurrent_exports,
            .max_queued = max_queued_exports,
            .max_wait = max_queue_wait,
            .max_per_user = max_exports_per_user,
            .max_queued_per_user = max_queued_exports_per_user};
  }
};

// What every export of the process shares, whichever door it came through (gRPC, HTTP): the
// pool, the options, the export slots and their queue, the authenticator, the call log. Created
// before the doors open, destroyed after they closed (WaitForCalls). Thread-safe.
class ExportPipeline {
 public:
  // "*pool", "*log", "*slot_observer", "*auth_observer" and "*change_stream_observer" (all but
  // the pool may be null) must outlive the pipeline. With options.auth kDhis2 every call is
  // authenticated (an auth::Authenticator of the pipeline's own, on "pool"). The change stream
  // monitor is created stopped: the server starts it (change_streams().Start()).
  ExportPipeline(db::ConnectionPool* pool, const PipelineOptions& options, CallLog* log,
                 SlotObserver* slot_observer = nullptr, auth::AuthObserver* auth_observer = nullptr,
                 ChangeStreamObserver* change_stream_observer = nullptr);
  ~ExportPipeline();
  ExportPipeline(const ExportPipeline&) = delete;
  ExportPipeline& operator=(const ExportPipeline&) = delete;

  db::ConnectionPool* pool() const { return pool_; }
  const PipelineOptions& options() const { return options_; }
  // The export slots (ExportFile and StreamDataValues; counts take none).
  ExportSlots& slots() { return *slots_; }
  CallLog* log() const { return log_; }
  // Authenticates the calls; null with AuthMode::kNone.
  auth::Authenticator* authenticator() const { return authenticator_.get(); }
  // Watches the database's change streams (idle times for ListChangeStreams, the metrics).
  ChangeStreamMonitor& change_streams() { return *change_streams_; }
  // Where calls wait while the database's DHIS2 is not known.
  Dhis2VersionGate& version_gate() { return version_gate_; }
  // Opens a connection, which reads the database's DHIS2 version (the pool keeps it), within
  // "timeout"; cancelled when the pipeline goes. Its failure is the calls' to report. The version
  // gate's attempt, and the server's health probe while no connection read a version it serves.
  void ReadDhis2Version(std::chrono::milliseconds timeout);

  // Exports holding a slot now, and waiting for one.
  int active_exports() const { return slots_->running(); }
  int queued_exports() const { return slots_->queued(); }

  // Exports that were read with more than one connection so far.
  int64_t sliced_exports() const { return sliced_exports_.load(); }
  void CountSlicedExport() { sliced_exports_.fetch_add(1); }

  // Every call registers while it lives (its reader threads joined when it ends), so that
  // whoever destroys the pipeline can wait for the last one, through a lock that
  // ThreadSanitizer sees (gRPC's own Server::Wait is not instrumented).
  void CallStarted();
  void CallEnded();
  // True once no call is alive, false if "timeout" passed first.
  bool WaitForCalls(std::chrono::milliseconds timeout);
  // Calls alive now.
  int live_calls() const;

  // Shutdown: from now on every new call of either door is refused (UNAVAILABLE, "the server is
  // shutting down") before it authenticates; calls already admitted run on.
  void StopAdmitting() { admitting_.store(false); }
  bool admitting() const { return admitting_.load(); }

 private:
  db::ConnectionPool* const pool_;
  const PipelineOptions options_;
  std::unique_ptr<ExportSlots> slots_;
  CallLog* const log_;
  std::unique_ptr<auth::Authenticator> authenticator_;
  std::unique_ptr<ChangeStreamMonitor> change_streams_;
  // The sessions of ReadDhis2Version running, which StopLearningDhis2Version cancels.
  void StopLearningDhis2Version();
  std::mutex learning_mu_;
  std::vector<db::ReadSession*> learning_ ABSL_GUARDED_BY(learning_mu_);
  bool learning_stopped_ ABSL_GUARDED_BY(learning_mu_) = false;
  Dhis2VersionGate version_gate_;
  std::atomic<int64_t> sliced_exports_{0};
  std::atomic<bool> admitting_{true};

  mutable std::mutex calls_mu_;
  std::condition_variable calls_ended_;
  int live_calls_ ABSL_GUARDED_BY(calls_mu_) = 0;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_EXPORT_PIPELINE_H_
