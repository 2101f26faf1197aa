#include "service/grpc/export_service.h"

#include "service/grpc/export_call.h"
#include "service/grpc/unary_call.h"

namespace dvexport::grpc_door {

grpc::ServerWriteReactor<grpc::ByteBuffer>* DataValueExportService::ExportFile(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  Enter();
  return ExportCall::StartFile(pipeline_, context, request);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* DataValueExportService::StreamDataValues(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  Enter();
  return ExportCall::StartStream(pipeline_, context, request);
}

grpc::ServerUnaryReactor* DataValueExportService::CountDataValues(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  Enter();
  return StartCount(pipeline_, context, request, response);
}

grpc::ServerUnaryReactor* DataValueExportService::ListChangeStreams(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  Enter();
  return StartListChangeStreams(pipeline_, context, request, response);
}

grpc::ServerUnaryReactor* DataValueExportService::DropChangeStream(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  Enter();
  return StartDropChangeStream(pipeline_, context, request, response);
}

}  // namespace dvexport::grpc_door
