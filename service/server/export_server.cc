#include "service/server/export_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"

namespace dvexport::server {

absl::StatusOr<std::unique_ptr<ExportServer>> ExportServer::Start(const ServerOptions& options) {
  std::unique_ptr<ExportServer> server(new ExportServer());
  server->pool_ = std::make_unique<db::ConnectionPool>(options.conninfo, options.pool_size);
  server->service_ =
      std::make_unique<DataValueExportService>(server->pool_.get(), options.service);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  server->server_->GetHealthCheckService()->SetServingStatus(true);
  return server;
}

ExportServer::~ExportServer() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
}

void ExportServer::Shutdown(std::chrono::system_clock::time_point deadline) {
  server_->GetHealthCheckService()->SetServingStatus(false);
  server_->Shutdown(deadline);
}

void ExportServer::Wait() { server_->Wait(); }

}  // namespace dvexport::server
