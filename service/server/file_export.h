#ifndef DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_
#define DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/read_session.h"
#include "service/encode/parallel_gzip_compressor.h"
#include "service/server/parallel_read.h"

namespace dvexport::server {

struct FileExportStats {
  int64_t values = 0;
  int64_t file_bytes = 0;
};

// Sends one serialized FileChunk; false if the client has gone.
using SerializedChunkWriter = std::function<bool(const grpc::ByteBuffer&)>;

// Streams the data values of "session" (begun, its reads planned for
// "readers" readers) to "write" as the file the request asks for: serialized
// FileChunks of about "chunk_size" rendered bytes (compressed by "gzip" if not
// null), then the trailer. Reads and encodes on one thread per reader while
// this one compresses and sends, with a few chunks queued between them at
// most. Stops, cancelling the session, when the client goes away. Fills
// "*stats" whatever the outcome.
absl::Status StreamFile(db::ReadSession* session, int readers, dvexport::v1::Format format,
                        std::unique_ptr<encode::ParallelGzipCompressor> gzip, size_t chunk_size,
                        grpc::ServerContext* context, const SerializedChunkWriter& write,
                        FileExportStats* stats);

// The values_so_far of a FileChunk StreamFile sent (data or trailer), read from the end of the
// message (for the call log). False if it is not there.
bool ReadSerializedChunkValues(const grpc::ByteBuffer& chunk, int64_t* values_so_far);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_
