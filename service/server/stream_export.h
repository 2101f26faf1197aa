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
#include "service/db/read_session.h"
#include "service/encode/data_value_row.h"
#include "service/server/parallel_read.h"

namespace dvexport::server {

struct StreamExportStats {
  int64_t values = 0;
  int64_t batches = 0;
  // Serialized bytes of the batches sent.
  int64_t bytes = 0;
};

// Fills "*out" (which should be clear) with "row": identifiers that are null
// stay absent, as do a NULL value, stored_by and comment; the micros become
// Timestamps. Ill-formed UTF-8 is replaced with U+FFFD exactly as the JSON
// encoder replaces it, so that every string is valid for protobuf.
void ToDataValue(const encode::DataValueRow& row, dvexport::v1::DataValue* out);

// Sends one serialized DataValueBatch; false if the client has gone.
using SerializedBatchWriter = std::function<bool(const grpc::ByteBuffer&)>;

// Streams the data values of "session" (begun, its reads planned for
// "readers" readers) to "write" as serialized
// DataValueBatch messages of at most "batch_bytes" bytes each (one value
// larger than that makes a batch of its own). The values are written in wire
// format by encode::ProtobufDataValueEncoder on one thread per reader while
// this one sends them: no message objects, and no second
// serialization by gRPC. The last message has last = true, possibly with no
// values. Stops, cancelling the queries, when the client goes away. Fills
// "*stats" whatever the outcome.
absl::Status StreamDataValueBatches(db::ReadSession* session, int readers, size_t batch_bytes,
                                    grpc::ServerContext* context,
                                    const SerializedBatchWriter& write, StreamExportStats* stats);

// The last and values_so_far fields of a batch StreamDataValueBatches sent, read from the end
// of the message (for the call log). False if they are not there.
bool ReadSerializedBatchEnd(const grpc::ByteBuffer& batch, bool* last, int64_t* values_so_far);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_
