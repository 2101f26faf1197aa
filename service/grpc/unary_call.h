#ifndef DVEXPORT_SERVICE_GRPC_UNARY_CALL_H_
#define DVEXPORT_SERVICE_GRPC_UNARY_CALL_H_

#include <grpcpp/grpcpp.h>

#include "service/pipeline/export_pipeline.h"

// CountDataValues, ListChangeStreams and DropChangeStream on gRPC's callback API: each the door of
// one pipeline call (pipeline::Count, pipeline::ChangeStreamCall) that answers once. The reactor
// (one template for the three) writes the serialized answer into "*response", passes a cancel on
// to the pipeline's call (also a cancel that came before that call existed), and deletes itself
// when the RPC is done, after the call's thread has ended.
namespace dvexport::grpc_door {

grpc::ServerUnaryReactor* StartCount(pipeline::ExportPipeline* pipeline,
                                     grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request, grpc::ByteBuffer* response);

grpc::ServerUnaryReactor* StartListChangeStreams(pipeline::ExportPipeline* pipeline,
                                                 grpc::CallbackServerContext* context,
                                                 const grpc::ByteBuffer* request,
                                                 grpc::ByteBuffer* response);

grpc::ServerUnaryReactor* StartDropChangeStream(pipeline::ExportPipeline* pipeline,
                                                grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request,
                                                grpc::ByteBuffer* response);

}  // namespace dvexport::grpc_door

#endif  // DVEXPORT_SERVICE_GRPC_UNARY_CALL_H_
