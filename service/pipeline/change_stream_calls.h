#ifndef DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_CALLS_H_
#define DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_CALLS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/db/change_stream_admin.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/call_session.h"
#include "service/pipeline/export.h"
#include "service/pipeline/export_pipeline.h"

namespace dvexport::pipeline {

// ListChangeStreams and DropChangeStream (docs/SYNC.md): authenticated as an export is (with
// AuthMode::kNone the caller is user 0, not a superuser), then run on a thread of their own
// (never a door's) in one short READ ONLY transaction (db::ReadSession::Lookup: a pool
// connection waited for at most --connection_wait_ms, every wait bounded by the call's deadline
// and Cancel), without an export slot. A caller sees and drops the streams it started (their
// slot names carry its DHIS2 user id); a DHIS2 superuser every one. Logged as calls are
// (CallLog), without the change token.
class ChangeStreamCall {
 public:
  using ListDone = std::function<void(absl::StatusOr<dvexport::v1::ListChangeStreamsResponse>)>;
  using DropDone = std::function<void(absl::StatusOr<dvexport::v1::DropChangeStreamResponse>)>;

  // "done" is called exactly once, from any thread, with the response or why there is none, after
  // the call was logged. The call must live until then.
  static std::unique_ptr<ChangeStreamCall> StartList(
      ExportPipeline* pipeline, CallOrigin origin,
      const absl::StatusOr<dvexport::v1::ListChangeStreamsRequest>& request, ListDone done);
  // Exactly one of change_token and name, else InvalidArgument naming them; a change token must
  // be a stream token of this database (FailedPrecondition naming change_token otherwise); the
  // rest as db::DropChangeStream. A request's faults are told only once the caller has an
  // identity.
  static std::unique_ptr<ChangeStreamCall> StartDrop(
      ExportPipeline* pipeline, CallOrigin origin,
      const absl::StatusOr<dvexport::v1::DropChangeStreamRequest>& request, DropDone done);

  // Joins the call's thread (unless it is the calling one).
  ~ChangeStreamCall();

  // The caller went away: the call's database waits end within about 100 ms. Any thread.
  void Cancel() { session_.Cancel(); }

 private:
  // The call's work on its thread, once authenticated: the response's size in bytes (for the
  // log and the metrics), or why there is none.
  using Work =
      std::function<absl::StatusOr<int64_t>(db::ReadSession&, const db::ChangeStreamCaller&)>;
  // Hands the outcome to the door.
  using Finish = std::function<void(const absl::Status&)>;

  ChangeStreamCall(ExportPipeline* pipeline, CallOrigin origin, const char* rpc);
  // Authenticates, then runs "work" on the call's thread unless "request" (the request's faults)
  // is not OK.
  void Begin(absl::Status request, Work work, Finish finish);
  void Run();
  void End(absl::StatusOr<int64_t> bytes);

  ExportPipeline* const pipeline_;
  const CallOrigin origin_;
  const std::chrono::steady_clock::time_point started_;
  CallRecord record_;
  // For the log: how the stream was named, and the stream dropped (never the token).
  std::string summary_;
  Work work_;
  Finish finish_;
  CallSession session_;
  std::mutex thread_mu_;
  std::thread thread_ ABSL_GUARDED_BY(thread_mu_);
};

// The target DropChangeStream names, from its request: InvalidArgument naming change_token and
// name unless exactly one is given, or naming change_token for a token that is not dvexport's;
// FailedPrecondition naming change_token for a token that names no change stream (an export's
// snapshot). No I/O.
absl::StatusOr<db::ChangeStreamDropTarget> DropTargetOf(
    const dvexport::v1::DropChangeStreamRequest& request);

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_CALLS_H_
