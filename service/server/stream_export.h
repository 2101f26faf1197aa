#ifndef DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_
#define DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/export_scope.h"
#include "service/db/pg_connection.h"
#include "service/encode/data_value_row.h"
#include "service/server/parallel_read.h"

namespace dvexport::server {

struct StreamExportStats {
  int64_t values = 0;
  int64_t batches = 0;
  // Serialized bytes of the batches sent.
  int64_t bytes = 0;
};

// Sends one serialized DataValueBatch; false if the client has gone.
using SerializedBatchWriter = std::function<bool(const grpc::ByteBuffer&)>;

// Streams the data values of "scope" from "sources" to "write" as serialized
// DataValueBatch messages of at most "batch_bytes" bytes each (one value
// larger than that makes a batch of its own). The values are written in wire
// format by encode::ProtobufDataValueEncoder on one thread per connection of
// "sources" while this one sends them: no message objects, and no second
// serialization by gRPC. The last message has last = true, possibly with no
// values. Stops, cancelling the queries, when the client goes away. Fills
// "*stats" whatever the outcome.
absl::Status StreamDataValueBatches(const ReadSources& sources, const db::ExportScope& scope,
                                    size_t batch_bytes, grpc::ServerContext* context,
                                    const SerializedBatchWriter& write, StreamExportStats* stats);

// The last and values_so_far fields of a batch StreamDataValueBatches sent, read from the end
// of the message (for the call log). False if they are not there.
bool ReadSerializedBatchEnd(const grpc::ByteBuffer& batch, bool* last, int64_t* values_so_far);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_
