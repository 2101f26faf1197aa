#ifndef DVEXPORT_SERVICE_PIPELINE_COUNT_H_
#define DVEXPORT_SERVICE_PIPELINE_COUNT_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/pipeline/export.h"

namespace dvexport::pipeline {

// CountDataValues, whatever door it came through: authenticated and validated as an export is,
// then counted on a thread of its own (never a door's), without an export slot (only a pool
// connection, waited for at most --connection_wait_ms and never past the deadline), bounded like
// an export's queries (the deadline, Cancel).
class Count {
 public:
  using Done = std::function<void(absl::StatusOr<int64_t>)>;

  // "done" is called exactly once, from any thread, with the count or why there is none, after
  // the call was logged. The Count must live until then.
  static std::unique_ptr<Count> Start(ExportPipeline* pipeline, CallOrigin origin,
                                      const absl::StatusOr<dvexport::v1::ExportRequest>& request,
                                      Done done);
  // Joins the count's thread (unless it is the calling one).
  virtual ~Count() = default;

  // The caller went away: the count's database waits end within about 100 ms, and a count that
  // ends stopped (Cancelled or DeadlineExceeded) is logged and answered with "why" (the door's
  // reason: Cancelled, or DeadlineExceeded once the call's deadline passed). Any thread.
  virtual void Cancel(absl::Status why) = 0;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_COUNT_H_
