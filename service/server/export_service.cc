#include "service/server/export_service.h"

namespace dvexport::server {

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
  return new CountCall(pipeline_, context, request, response);
}

grpc::ServerUnaryReactor* DataValueExportService::ListChangeStreams(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  Enter();
  return ChangeStreamRpc::StartList(pipeline_, context, request, response);
}

grpc::ServerUnaryReactor* DataValueExportService::DropChangeStream(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  Enter();
  return ChangeStreamRpc::StartDrop(pipeline_, context, request, response);
}

}  // namespace dvexport::server
