#ifndef DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_
#define DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_

#include <grpcpp/grpcpp.h>

#include "service/server/export_call.h"

namespace dvexport::server {

// StreamDataValues: the reactor of one call, which streams typed values as DataValueBatch
// messages of at most options.batch_bytes serialized bytes (one value larger than that makes a
// batch of its own), written in wire format by encode::ProtobufDataValueEncoder straight from
// the rows: no message objects, and no second serialization by gRPC. The last message has
// last = true, possibly with no values. "request" is the call's raw ExportRequest. Deletes
// itself when the call is done.
grpc::ServerWriteReactor<grpc::ByteBuffer>* StartStreamExport(CallEnvironment* env,
                                                              grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* request);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_STREAM_EXPORT_H_
