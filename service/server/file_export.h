#ifndef DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_
#define DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_

#include <grpcpp/grpcpp.h>

#include "service/server/export_call.h"

namespace dvexport::server {

// ExportFile: the reactor of one call, which streams the file the request asks for (JSON, pretty
// JSON or CSV; uncompressed, gzip, zip or zstd) as FileChunks the service serializes itself, of
// about options.chunk_size rendered bytes each (the first after at most 16 KiB, so that the first
// byte leaves within milliseconds of the first row), then the ExportTrailer (values, lengths and
// CRC-32s). "request" is the call's raw ExportFileRequest. Deletes itself when the call is done.
grpc::ServerWriteReactor<grpc::ByteBuffer>* StartFileExport(CallEnvironment* env,
                                                            grpc::CallbackServerContext* context,
                                                            const grpc::ByteBuffer* request);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_FILE_EXPORT_H_
