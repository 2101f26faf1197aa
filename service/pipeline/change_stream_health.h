#ifndef DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_HEALTH_H_
#define DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_HEALTH_H_

#include <functional>
#include <vector>

#include "service/pipeline/change_stream_observer.h"

namespace dvexport::pipeline {

// The name under which grpc.health.v1.Health reports the change streams (docs/SYNC.md, "Slots are
// dangerous when forgotten"): `dvexport health --service dvexport.ChangeStreams`.
inline constexpr char kChangeStreamsHealthService[] = "dvexport.ChangeStreams";

// Whether the change streams are healthy, as of one poll of the monitor: no dvexport slot is lost
// (wal_status "lost") or retains more WAL than --change_stream_warn_wal_mb, and, while any slot
// exists, the database still gives stream tokens (wal_level, the publication and the privilege
// are still there: its consumers' deltas would be refused). No slots on a database without
// logical decoding is healthy: snapshot tokens work.
bool ChangeStreamsHealthy(bool stream_tokens, const std::vector<ChangeStreamGauges>& streams);

// A ChangeStreamObserver that passes every poll on to "next" (the metrics; may be null) and
// reports ChangeStreamsHealthy of it to "report" (the server's health service). Called on the
// monitor's thread, one poll at a time, as the monitor calls every observer.
class ChangeStreamHealth final : public ChangeStreamObserver {
 public:
  ChangeStreamHealth(ChangeStreamObserver* next, std::function<void(bool healthy)> report);

  void ChangeTokenKindPolled(bool stream) override;
  void ChangeStreamsPolled(const std::vector<ChangeStreamGauges>& streams) override;

 private:
  ChangeStreamObserver* const next_;
  const std::function<void(bool)> report_;
  // The kind of this poll (ChangeTokenKindPolled comes first).
  bool stream_tokens_ = false;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_HEALTH_H_
