#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_SERVICE_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_SERVICE_H_

#include <atomic>
#include <chrono>
#include <cstddef>

#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/connection_pool.h"

namespace dvexport::server {

struct ServiceOptions {
  // Bytes of rendered (uncompressed) output per data chunk sent.
  size_t chunk_size = 256 * 1024;
  // Exports running at once; one more is refused with RESOURCE_EXHAUSTED.
  int max_concurrent_exports = 4;
  // How long an export waits for a pooled database connection.
  std::chrono::milliseconds connection_wait{10000};
  // PostgreSQL statement_timeout for an export's statements; 0: none.
  std::chrono::milliseconds statement_timeout{0};
};

// The DataValueExport gRPC service. Every export runs in its own READ ONLY,
// REPEATABLE READ transaction on a pooled connection.
class DataValueExportService final : public dvexport::v1::DataValueExport::Service {
 public:
  // "*pool" must outlive the service.
  DataValueExportService(db::ConnectionPool* pool, const ServiceOptions& options);

  grpc::Status ExportFile(grpc::ServerContext* context,
                          const dvexport::v1::ExportFileRequest* request,
                          grpc::ServerWriter<dvexport::v1::FileChunk>* writer) override;

  int active_exports() const { return active_exports_.load(); }

 private:
  db::ConnectionPool* const pool_;
  const ServiceOptions options_;
  std::atomic<int> active_exports_{0};
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_SERVICE_H_
