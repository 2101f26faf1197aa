#ifndef DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_CALLS_H_
#define DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_CALLS_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/pipeline/export.h"

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
  virtual ~ChangeStreamCall() = default;

  // The caller went away: the call's database waits end within about 100 ms. Any thread.
  virtual void Cancel() = 0;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_CALLS_H_
