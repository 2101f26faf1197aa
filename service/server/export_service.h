#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_SERVICE_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_SERVICE_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/method_handler.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/connection_pool.h"
#include "service/db/read_plan.h"
#include "service/db/read_session.h"

namespace dvexport::server {

class ExportSession;

struct ServiceOptions {
  // Bytes of rendered (uncompressed) output per data chunk sent.
  size_t chunk_size = 256 * 1024;
  // Serialized bytes of a StreamDataValues batch, at most (a single larger
  // value makes a batch of its own).
  size_t batch_bytes = 256 * 1024;
  // Exports running at once; one more is refused with RESOURCE_EXHAUSTED.
  int max_concurrent_exports = 4;
  // How long an export waits for a pooled database connection.
  std::chrono::milliseconds connection_wait{10000};
  // PostgreSQL statement_timeout for an export's statements; 0: the role's or
  // database's setting.
  std::chrono::milliseconds statement_timeout{0};
  // How a large export is read with several connections at once (slices of
  // the table, one snapshot; see db::PlanBlockSlices); extra connections are
  // taken only when the pool can spare them. max_streams 1: one COPY always.
  db::ReadPlanOptions read_plan;

  // The options of each export's db::ReadSession.
  db::ReadSessionOptions read_session() const {
    db::ReadSessionOptions options;
    options.connection_wait = connection_wait;
    options.statement_timeout = statement_timeout;
    options.read_plan = read_plan;
    return options;
  }
};

// The DataValueExport gRPC service. Every export reads in its own
// db::ReadSession (a READ ONLY, REPEATABLE READ transaction on a pooled
// connection).
class DataValueExportService final : public dvexport::v1::DataValueExport::Service {
 public:
  // "*pool" must outlive the service.
  DataValueExportService(db::ConnectionPool* pool, const ServiceOptions& options);

  grpc::Status CountDataValues(grpc::ServerContext* context,
                               const dvexport::v1::ExportRequest* request,
                               dvexport::v1::CountResponse* response) override;

  int active_exports() const { return active_exports_.load(); }

  // Exports that were read with more than one connection so far.
  int64_t sliced_exports() const { return sliced_exports_.load(); }

 private:
  // What every RPC does before reading values: takes a slot, validates
  // "query", begins the export's db::ReadSession (cancelled when the client
  // goes away, ending at the call's deadline) and resolves the scope in it.
  absl::StatusOr<std::unique_ptr<ExportSession>> StartExport(
      grpc::ServerContext* context, const dvexport::v1::ExportRequest& query);

  // ExportFile, with chunks serialized by the service itself.
  grpc::Status ExportSerializedFile(
      grpc::ServerContext* context,
      grpc::ServerSplitStreamer<dvexport::v1::ExportFileRequest, grpc::ByteBuffer>* stream);

  // StreamDataValues, with batches serialized by the service itself.
  grpc::Status StreamSerializedBatches(
      grpc::ServerContext* context,
      grpc::ServerSplitStreamer<dvexport::v1::ExportRequest, grpc::ByteBuffer>* stream);

  // Decides how "session" reads its values: one COPY on its connection, or
  // slices of the table on more connections that import its snapshot. Returns
  // the number of readers.
  absl::StatusOr<int> PlanReaders(ExportSession* session);

  db::ConnectionPool* const pool_;
  const ServiceOptions options_;
  std::atomic<int> active_exports_{0};
  std::atomic<int64_t> sliced_exports_{0};
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_SERVICE_H_
