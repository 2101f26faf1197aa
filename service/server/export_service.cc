#include "service/server/export_service.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/db/export_scope.h"
#include "service/db/read_plan.h"
#include "service/dhis2/export_request_validator.h"
#include "service/encode/parallel_gzip_compressor.h"
#include "service/server/cancellation_check.h"
#include "service/server/count_export.h"
#include "service/server/file_export.h"
#include "service/server/stream_export.h"

namespace dvexport::server {
namespace {

using dvexport::v1::DataValueBatch;
using dvexport::v1::FileChunk;

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// Holds one of the max_concurrent_exports places while alive.
class ExportSlot {
 public:
  ExportSlot(std::atomic<int>* active, int limit) : active_(active) {
    acquired_ = active_->fetch_add(1) < limit;
    if (!acquired_) active_->fetch_sub(1);
  }
  ~ExportSlot() {
    if (acquired_) active_->fetch_sub(1);
  }
  bool acquired() const { return acquired_; }

 private:
  std::atomic<int>* active_;
  bool acquired_;
};

// Ends the export's transaction whatever way the export ends. A connection
// whose rollback fails is not reused (the pool checks).
class ReadOnlyTransaction {
 public:
  explicit ReadOnlyTransaction(db::PgConnection* conn) : conn_(conn) {}
  ~ReadOnlyTransaction() {
    if (open_) conn_->Exec("ROLLBACK").IgnoreError();
  }
  // "set_snapshot", if not empty, is run first (SET TRANSACTION SNAPSHOT).
  absl::Status Begin(std::chrono::milliseconds statement_timeout,
                     const std::string& set_snapshot = "") {
    absl::Status status = conn_->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    if (!status.ok()) return status;
    open_ = true;
    if (!set_snapshot.empty()) {
      status = conn_->Exec(set_snapshot);
      if (!status.ok()) return status;
    }
    // 0 keeps the role's or database's statement_timeout (e.g. ALTER ROLE ... SET).
    if (statement_timeout.count() == 0) return absl::OkStatus();
    return conn_->Exec(absl::StrCat("SET LOCAL statement_timeout = ", statement_timeout.count()));
  }
  absl::Status Commit() {
    open_ = false;
    return conn_->Exec("COMMIT");
  }

 private:
  db::PgConnection* conn_;
  bool open_ = false;
};

absl::Status ValidateFileOptions(const dvexport::v1::ExportFileRequest& request) {
  if (!dvexport::v1::Format_IsValid(request.format())) {
    return absl::InvalidArgumentError(absl::StrCat("format: unknown value ", request.format()));
  }
  if (!dvexport::v1::Compression_IsValid(request.compression())) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression: unknown value ", request.compression()));
  }
  if (request.compression_level() < 0 || request.compression_level() > 9) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compression_level: ", request.compression_level(), " is not between 1 and 9 (0: default)"));
  }
  return absl::OkStatus();
}

// An extra connection of one export, in a transaction that sees the export's snapshot.
// The transaction ends before the connection goes back to the pool.
struct SnapshotReader {
  explicit SnapshotReader(db::PooledConnection pooled)
      : conn(std::move(pooled)), transaction(&*conn) {}
  db::PooledConnection conn;
  ReadOnlyTransaction transaction;
};

}  // namespace

// Members are released in reverse order: the extra readers' transactions end
// before the export's own (which exported their snapshot), the transaction
// before the connection goes back to the pool, and the slot is freed last.
class ExportSession {
 public:
  ExportSession(std::atomic<int>* active, int limit) : slot_(active, limit) {}

  db::PgConnection& conn() { return **conn_; }
  ReadOnlyTransaction& transaction() { return *transaction_; }
  const db::ExportScope& scope() const { return scope_; }
  const ReadSources& sources() const { return sources_; }

 private:
  friend class DataValueExportService;

  ExportSlot slot_;
  std::optional<db::PooledConnection> conn_;
  std::optional<ReadOnlyTransaction> transaction_;
  db::ExportScope scope_;
  std::vector<std::unique_ptr<SnapshotReader>> extra_readers_;
  ReadSources sources_;
};

DataValueExportService::DataValueExportService(db::ConnectionPool* pool,
                                               const ServiceOptions& options)
    : pool_(pool), options_(options) {
  // ExportFile (method 0 of the service) and StreamDataValues (method 1) send messages the
  // service serializes itself: their handlers take grpc::ByteBuffer responses, which gRPC passes
  // on as they are, instead of FileChunk or DataValueBatch objects that would hold another copy
  // of the bytes and that gRPC would serialize again. Clients see the same methods and the same
  // bytes. Split streaming is how gRPC lets a synchronous handler choose its message types (the
  // generated WithSplitStreamingMethod_ does the same with typed messages).
  MarkMethodStreamed(
      0, new grpc::internal::SplitServerStreamingHandler<dvexport::v1::ExportFileRequest,
                                                         grpc::ByteBuffer>(
             [this](grpc::ServerContext* context,
                    grpc::ServerSplitStreamer<dvexport::v1::ExportFileRequest, grpc::ByteBuffer>*
                        stream) { return ExportSerializedFile(context, stream); }));
  MarkMethodStreamed(
      1, new grpc::internal::SplitServerStreamingHandler<dvexport::v1::ExportRequest,
                                                         grpc::ByteBuffer>(
             [this](grpc::ServerContext* context,
                    grpc::ServerSplitStreamer<dvexport::v1::ExportRequest, grpc::ByteBuffer>*
                        stream) { return StreamSerializedBatches(context, stream); }));
}

absl::StatusOr<std::unique_ptr<ExportSession>> DataValueExportService::StartExport(
    const dvexport::v1::ExportRequest& query) {
  auto session =
      std::make_unique<ExportSession>(&active_exports_, options_.max_concurrent_exports);
  if (!session->slot_.acquired()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "too many exports running (limit ", options_.max_concurrent_exports, "); retry later"));
  }
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(query);
  if (!params.ok()) return params.status();
  absl::StatusOr<db::PooledConnection> conn = pool_->Acquire(options_.connection_wait);
  if (!conn.ok()) return conn.status();
  session->conn_.emplace(*std::move(conn));
  session->transaction_.emplace(&**session->conn_);
  absl::Status status = session->transaction_->Begin(options_.statement_timeout);
  if (!status.ok()) return status;
  absl::StatusOr<db::ExportScope> scope = db::ResolveExportScope(session->conn(), *params);
  if (!scope.ok()) return scope.status();
  session->scope_ = *std::move(scope);
  session->sources_.connections = {&session->conn()};
  return session;
}

absl::Status DataValueExportService::PlanReaders(ExportSession* session,
                                                 grpc::ServerContext* context) {
  if (options_.read_plan.max_streams < 2) return absl::OkStatus();
  absl::StatusOr<std::vector<std::optional<db::BlockRange>>> slices =
      db::PlanBlockSlices(session->conn(), session->scope(), options_.read_plan,
                          [cancelled = std::make_shared<CancellationCheck>(context)] {
                            return (*cancelled)();
                          });
  if (!slices.ok()) return slices.status();
  if (slices->size() < 2) return absl::OkStatus();
  absl::StatusOr<std::string> snapshot = db::ExportSnapshot(session->conn());
  if (!snapshot.ok()) return snapshot.status();
  absl::StatusOr<std::string> set_snapshot = db::SetTransactionSnapshotSql(*snapshot);
  if (!set_snapshot.ok()) return set_snapshot.status();
  // Extra connections only where the pool keeps one for every export that may still start;
  // each is opened by its reader, while the export's own connection already reads.
  const int keep_available =
      std::max(0, options_.max_concurrent_exports - active_exports_.load());
  const int extra = options_.read_plan.max_streams - 1;
  session->extra_readers_.resize(static_cast<size_t>(extra));
  for (int i = 0; i < extra; ++i) {
    session->sources_.openers.push_back(
        [this, session, i, keep_available, set_sql = *set_snapshot]() -> db::PgConnection* {
          // Without it the other readers read its share; a pool with no room to spare is
          // expected under load, anything else is worth a log line.
          absl::StatusOr<db::PooledConnection> conn = pool_->TryAcquire(keep_available);
          absl::Status status = conn.status();
          std::unique_ptr<SnapshotReader> reader;
          if (status.ok()) {
            reader = std::make_unique<SnapshotReader>(*std::move(conn));
            status = reader->transaction.Begin(options_.statement_timeout, set_sql);
          }
          if (!status.ok()) {
            if (status.code() != absl::StatusCode::kResourceExhausted) {
              std::fprintf(stderr, "{\"event\":\"read_stream_unavailable\",\"code\":\"%s\"}\n",
                           absl::StatusCodeToString(status.code()).c_str());
            }
            return nullptr;
          }
          session->extra_readers_[static_cast<size_t>(i)] = std::move(reader);
          return &*session->extra_readers_[static_cast<size_t>(i)]->conn;
        });
  }
  session->sources_.slices = *std::move(slices);
  sliced_exports_.fetch_add(1);
  return absl::OkStatus();
}

grpc::Status DataValueExportService::ExportSerializedFile(
    grpc::ServerContext* context,
    grpc::ServerSplitStreamer<dvexport::v1::ExportFileRequest, grpc::ByteBuffer>* stream) {
  dvexport::v1::ExportFileRequest request_message;
  if (!stream->Read(&request_message)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call carried no request");
  }
  const dvexport::v1::ExportFileRequest* request = &request_message;
  absl::Status status = ValidateFileOptions(*request);
  if (!status.ok()) return ToGrpc(status);
  absl::StatusOr<std::unique_ptr<ExportSession>> session = StartExport(request->query());
  if (!session.ok()) return ToGrpc(session.status());
  status = PlanReaders(session->get(), context);
  if (!status.ok()) return ToGrpc(status);

  std::unique_ptr<encode::ParallelGzipCompressor> gzip;
  if (request->compression() == dvexport::v1::COMPRESSION_GZIP) {
    encode::ParallelGzipOptions gzip_options;
    gzip_options.level = request->compression_level() == 0 ? 1 : request->compression_level();
    absl::StatusOr<std::unique_ptr<encode::ParallelGzipCompressor>> created =
        encode::ParallelGzipCompressor::Create(gzip_options);
    if (!created.ok()) return ToGrpc(created.status());
    gzip = *std::move(created);
  }

  FileExportStats stats;
  status = StreamFile((*session)->sources(), (*session)->scope(), request->format(), std::move(gzip),
                      options_.chunk_size, context,
                      [stream](const grpc::ByteBuffer& chunk) { return stream->Write(chunk); },
                      &stats);
  // The trailer is only sent after a successful COPY; commit is a formality
  // for a read-only transaction.
  if (status.ok()) status = (*session)->transaction().Commit();
  return ToGrpc(status);
}

grpc::Status DataValueExportService::StreamSerializedBatches(
    grpc::ServerContext* context,
    grpc::ServerSplitStreamer<dvexport::v1::ExportRequest, grpc::ByteBuffer>* stream) {
  dvexport::v1::ExportRequest request;
  if (!stream->Read(&request)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call carried no request");
  }
  absl::StatusOr<std::unique_ptr<ExportSession>> session = StartExport(request);
  if (!session.ok()) return ToGrpc(session.status());
  absl::Status status = PlanReaders(session->get(), context);
  if (!status.ok()) return ToGrpc(status);
  StreamExportStats stats;
  status = StreamDataValueBatches(
      (*session)->sources(), (*session)->scope(), options_.batch_bytes, context,
      [stream](const grpc::ByteBuffer& batch) { return stream->Write(batch); }, &stats);
  if (status.ok()) status = (*session)->transaction().Commit();
  return ToGrpc(status);
}

grpc::Status DataValueExportService::CountDataValues(grpc::ServerContext* /*context*/,
                                                     const dvexport::v1::ExportRequest* request,
                                                     dvexport::v1::CountResponse* response) {
  absl::StatusOr<std::unique_ptr<ExportSession>> session = StartExport(*request);
  if (!session.ok()) return ToGrpc(session.status());
  absl::StatusOr<int64_t> count =
      server::CountDataValues((*session)->conn(), (*session)->scope());
  absl::Status status = count.status();
  if (status.ok()) status = (*session)->transaction().Commit();
  if (status.ok()) response->set_count(*count);
  return ToGrpc(status);
}

}  // namespace dvexport::server
