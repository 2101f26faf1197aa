#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_SERVER_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_SERVER_H_

#include <grpcpp/server.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "service/db/connection_pool.h"
#include "service/server/export_service.h"
#include "service/server/metrics.h"

namespace dvexport::server {

struct ServerOptions {
  // host:port to listen on; port 0 picks a free port (see port()).
  std::string listen = "0.0.0.0:50051";
  // libpq conninfo; empty means PG* environment variables only.
  std::string conninfo;
  // Database connections at most.
  int pool_size = 8;
  // host:port serving Prometheus metrics at /metrics; empty: no metrics.
  std::string metrics_listen;
  ServiceOptions service;
};

// A running dvexport gRPC server: DataValueExport, grpc.health.v1.Health and
// server reflection, plaintext.
class ExportServer {
 public:
  static absl::StatusOr<std::unique_ptr<ExportServer>> Start(const ServerOptions& options);
  ~ExportServer();

  // The port actually bound.
  int port() const { return port_; }
  // The metrics port actually bound; 0 without metrics.
  int metrics_port() const { return metrics_ == nullptr ? 0 : metrics_->port(); }

  // Health turns NOT_SERVING, new calls are refused, running calls get until
  // "deadline" to finish and are then cancelled.
  void Shutdown(std::chrono::system_clock::time_point deadline);

  // Blocks until the server has shut down.
  void Wait();

 private:
  ExportServer() = default;

  std::unique_ptr<db::ConnectionPool> pool_;
  std::unique_ptr<DataValueExportService> service_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_SERVER_H_
