#ifndef DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_
#define DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/export_scope.h"
#include "service/db/pg_connection.h"
#include "service/encode/parallel_gzip_compressor.h"
#include "service/server/parallel_read.h"

namespace dvexport::server {

struct FileExportStats {
  int64_t values = 0;
  int64_t file_bytes = 0;
};

// Streams the data values of "scope" from "sources" to "writer" as the file
// the request asks for: data chunks of about "chunk_size" rendered bytes
// (compressed by "gzip" if not null), then the trailer. Reads and encodes on
// one thread per connection of "sources" while this one compresses and sends,
// with a few chunks queued between them at most. Stops, cancelling the
// queries, when the client goes away. Fills "*stats" whatever the outcome.
absl::Status StreamFile(const ReadSources& sources, const db::ExportScope& scope,
                        dvexport::v1::Format format,
                        std::unique_ptr<encode::ParallelGzipCompressor> gzip, size_t chunk_size,
                        grpc::ServerContext* context,
                        grpc::ServerWriter<dvexport::v1::FileChunk>* writer,
                        FileExportStats* stats);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_
