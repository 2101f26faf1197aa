#include "service/server/export_service.h"

#include <memory>

#include "service/server/file_export.h"
#include "service/server/stream_export.h"

namespace dvexport::server {

DataValueExportService::DataValueExportService(db::ConnectionPool* pool,
                                               const ServiceOptions& options, CallLog* log,
                                               SlotObserver* slot_observer,
                                               auth::AuthObserver* auth_observer) {
  env_.pool = pool;
  env_.options = options;
  env_.slots = std::make_unique<ExportSlots>(options.slots(), slot_observer);
  env_.log = log;
  if (options.auth == AuthMode::kDhis2) {
    auth::AuthenticatorOptions authentication = options.authentication;
    // Its database waits as bounded as an export's (and never past the call's deadline).
    authentication.session = options.session();
    env_.authenticator = std::make_unique<auth::Authenticator>(pool, authentication, auth_observer);
  }
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* DataValueExportService::ExportFile(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return StartFileExport(&env_, context, request);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* DataValueExportService::StreamDataValues(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  return StartStreamExport(&env_, context, request);
}

grpc::ServerUnaryReactor* DataValueExportService::CountDataValues(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return new CountCall(&env_, context, ParseRequest<dvexport::v1::ExportRequest>(request),
                       response);
}

}  // namespace dvexport::server
