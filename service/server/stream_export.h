#ifndef DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_
#define DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/export_scope.h"
#include "service/db/pg_connection.h"
#include "service/encode/data_value_row.h"

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

// Streams the data values of "scope" from "conn" to "writer" as
// DataValueBatch messages of at most about "batch_bytes" serialized bytes
// each (a batch is sent once it reaches "batch_bytes"; one value larger than
// that makes a batch of its own). The last message has last = true, possibly
// with no values. Stops, cancelling the query, when the client goes away.
// Fills "*stats" whatever the outcome.
absl::Status StreamDataValueBatches(db::PgConnection& conn, const db::ExportScope& scope,
                                    size_t batch_bytes, grpc::ServerContext* context,
                                    grpc::ServerWriter<dvexport::v1::DataValueBatch>* writer,
                                    StreamExportStats* stats);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_
