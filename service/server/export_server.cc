#include "service/server/export_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <libpq-fe.h>

#include <climits>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/pem_file.h"
#include "service/server/export_call_observer.h"

namespace dvexport::server {
namespace {

absl::StatusOr<std::string> ReadPemFile(const std::string& flag, const std::string& path) {
  absl::StatusOr<std::string> pem = common::ReadPemFile(path);
  if (!pem.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", pem.status().message()));
  }
  return pem;
}

// Plaintext without TLS files; TLS with a certificate and key; mutual TLS
// when a client CA is given too.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(
    const ServerOptions& options) {
  if (options.tls_cert_file.empty() && options.tls_key_file.empty()) {
    if (!options.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError("tls_client_ca needs tls_cert and tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("tls_cert and tls_key go together");
  }
  absl::StatusOr<std::string> cert = ReadPemFile("tls_cert", options.tls_cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPemFile("tls_key", options.tls_key_file);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!options.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPemFile("tls_client_ca", options.tls_client_ca_file);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

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
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeCredentials(options);
  if (!credentials.ok()) return credentials.status();
  builder.AddListeningPort(options.listen, *credentials, &server->port_);
  grpc::ResourceQuota quota("dvexport");
  quota.SetMaxThreads(options.max_threads > 0 ? options.max_threads
                                              : options.service.max_concurrent_exports + 16);
  builder.SetResourceQuota(quota);
  if (options.max_connection_age.count() > 0) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_MS,
        static_cast<int>(std::chrono::milliseconds(options.max_connection_age).count()));
    // Calls in flight on an aged connection run to their end, however long.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, INT_MAX);
  }
  builder.RegisterService(server->service_.get());
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> observers;
  observers.push_back(std::make_unique<ExportCallObserverFactory>(server->metrics_.get(), stderr));
  builder.experimental().SetInterceptorCreators(std::move(observers));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  server->ProbeDatabase();
  server->prober_ = std::thread(&ExportServer::RunProber, server.get(),
                                options.health_probe_interval);
  return server;
}

void ExportServer::ProbeDatabase() {
  // Every connection busy means the database answers; so does SELECT 1. A
  // failed probe also drops the idle connection it used.
  absl::StatusOr<db::PooledConnection> conn = pool_->Acquire(std::chrono::milliseconds(0));
  bool serving = conn.ok() ? (*conn)->Exec("SELECT 1").ok()
                           : conn.status().code() == absl::StatusCode::kResourceExhausted;
  server_->GetHealthCheckService()->SetServingStatus(serving);
}

void ExportServer::RunProber(std::chrono::milliseconds interval) {
  std::unique_lock<std::mutex> lock(prober_mu_);
  while (!prober_wake_.wait_for(lock, interval, [this] { return prober_stop_; })) {
    lock.unlock();
    ProbeDatabase();
    lock.lock();
  }
}

void ExportServer::StopProber() {
  {
    std::lock_guard<std::mutex> lock(prober_mu_);
    prober_stop_ = true;
  }
  prober_wake_.notify_all();
  if (prober_.joinable()) prober_.join();
}

ExportServer::~ExportServer() {
  StopProber();
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
}

void ExportServer::Shutdown(std::chrono::system_clock::time_point deadline) {
  StopProber();
  server_->GetHealthCheckService()->SetServingStatus(false);
  server_->Shutdown(deadline);
}

void ExportServer::Wait() { server_->Wait(); }

}  // namespace dvexport::server
