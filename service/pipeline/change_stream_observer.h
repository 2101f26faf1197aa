#ifndef DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_OBSERVER_H_
#define DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_OBSERVER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dvexport::pipeline {

// One change stream as the last poll saw it, for the metrics.
struct ChangeStreamGauges {
  std::string slot;
  int64_t retained_wal_bytes = 0;
  // Seconds since the monitor last saw the slot's confirmed position move, counted from when this
  // server first saw the slot.
  int64_t idle_seconds = 0;
  // wal_status is "lost": PostgreSQL removed WAL the slot still needed.
  bool lost = false;
  // It retains more WAL than --change_stream_warn_wal_mb.
  bool over_warning = false;
};

// Where the monitor reports each successful poll (the server's metrics). Called on the thread that
// polls, one poll at a time.
class ChangeStreamObserver {
 public:
  virtual ~ChangeStreamObserver() = default;
  // Whether this database gives stream tokens now (else snapshot tokens).
  virtual void ChangeTokenKindPolled(bool stream) = 0;
  // Every dvexport slot of the database at this poll; one of an earlier poll that is missing has
  // been dropped.
  virtual void ChangeStreamsPolled(const std::vector<ChangeStreamGauges>& streams) = 0;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CHANGE_STREAM_OBSERVER_H_
