#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_CALL_OBSERVER_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_CALL_OBSERVER_H_

#include <grpcpp/support/server_interceptor.h>

#include <cstdio>

#include "service/server/metrics.h"

namespace dvexport::server {

// Watches every DataValueExport call from outside the service (a gRPC server
// interceptor): when the call ends it writes one JSON line to "log"
//   {"event":"export","rpc":"ExportFile","peer":...,"data_sets":1,"org_units":1,
//    "periods":1,...,"format":"FORMAT_JSON","compression":"COMPRESSION_NONE",
//    "values":29,"bytes":8123,"first_byte_seconds":0.004,"seconds":0.006,"status":"OK"}
// and records it in "metrics" (may be null). The line carries counts of the
// request's identifiers, never the identifiers themselves, and nothing of the
// server's configuration (no connection string, so no password).
class ExportCallObserverFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // "*metrics" and "log" must outlive the server.
  ExportCallObserverFactory(ServerMetrics* metrics, std::FILE* log)
      : metrics_(metrics), log_(log) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  ServerMetrics* const metrics_;
  std::FILE* const log_;
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_CALL_OBSERVER_H_
