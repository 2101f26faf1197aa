#include "service/server/export_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_builder.h>
#include <libpq-fe.h>

#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/server/export_call_observer.h"

namespace dvexport::server {
namespace {

// Fails on a malformed conninfo without libpq's message, which quotes the
// offending text: that may be a password, and this error is logged.
absl::Status CheckConninfo(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  if (parsed == nullptr) {
    return absl::InvalidArgumentError(
        "the connection string is not a valid libpq conninfo (keyword=value pairs or a "
        "postgresql:// URI; quote values holding spaces as 'a b'); libpq's message is not shown "
        "because it may quote a password");
  }
  PQconninfoFree(parsed);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ExportServer>> ExportServer::Start(const ServerOptions& options) {
  absl::Status conninfo = CheckConninfo(options.conninfo);
  if (!conninfo.ok()) return conninfo;
  std::unique_ptr<ExportServer> server(new ExportServer());
  server->pool_ = std::make_unique<db::ConnectionPool>(options.conninfo, options.pool_size);
  server->service_ = std::make_unique<DataValueExportService>(server->pool_.get(), options.service);

  if (!options.metrics_listen.empty()) {
    ExportServer* self = server.get();
    absl::StatusOr<std::unique_ptr<ServerMetrics>> metrics =
        ServerMetrics::Start(options.metrics_listen,
                             {.active_exports = [self] { return self->service_->active_exports(); },
                              .db_pool_in_use = [self] { return self->pool_->in_use(); }});
    if (!metrics.ok()) return metrics.status();
    server->metrics_ = *std::move(metrics);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(server->service_.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> observers;
  observers.push_back(std::make_unique<ExportCallObserverFactory>(server->metrics_.get(), stderr));
  builder.experimental().SetInterceptorCreators(std::move(observers));
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
