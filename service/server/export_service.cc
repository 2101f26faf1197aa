#include "service/server/export_service.h"

#include <zlib.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "service/db/data_value_reader.h"
#include "service/db/export_scope.h"
#include "service/dhis2/export_request_validator.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/gzip_compressor.h"
#include "service/encode/json_data_value_encoder.h"

namespace dvexport::server {
namespace {

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
  absl::Status Begin(std::chrono::milliseconds statement_timeout) {
    absl::Status status = conn_->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    if (!status.ok()) return status;
    open_ = true;
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

// Turns rendered bytes into data chunks on the stream: compresses them if
// asked, keeps the lengths and CRC-32s for the trailer.
class ChunkSender {
 public:
  ChunkSender(grpc::ServerContext* context, grpc::ServerWriter<FileChunk>* writer,
              std::unique_ptr<encode::GzipCompressor> gzip)
      : context_(context), writer_(writer), gzip_(std::move(gzip)) {}

  // Sends "rendered" (possibly empty); "last" finishes the compressed
  // stream. False if the client has gone.
  bool Send(std::string_view rendered, int64_t values_so_far, bool last) {
    uncompressed_bytes_ += static_cast<int64_t>(rendered.size());
    uncompressed_crc_ = Crc32(uncompressed_crc_, rendered);
    FileChunk chunk;
    std::string* data = chunk.mutable_data();
    if (gzip_ != nullptr) {
      gzip_->Compress(rendered, data);
      if (last) gzip_->Finish(data);
    } else {
      data->assign(rendered.data(), rendered.size());
    }
    if (data->empty()) return true;
    file_bytes_ += static_cast<int64_t>(data->size());
    file_crc_ = Crc32(file_crc_, *data);
    chunk.set_values_so_far(values_so_far);
    return !context_->IsCancelled() && writer_->Write(chunk);
  }

  bool SendTrailer(int64_t values) {
    FileChunk chunk;
    dvexport::v1::ExportTrailer* trailer = chunk.mutable_trailer();
    trailer->set_values(values);
    trailer->set_uncompressed_bytes(uncompressed_bytes_);
    trailer->set_uncompressed_crc32(uncompressed_crc_);
    trailer->set_file_bytes(file_bytes_);
    trailer->set_file_crc32(file_crc_);
    chunk.set_values_so_far(values);
    return writer_->Write(chunk);
  }

  int64_t file_bytes() const { return file_bytes_; }

 private:
  static uint32_t Crc32(uint32_t crc, std::string_view bytes) {
    // zlib's crc32 takes a uInt length; feed very large inputs in pieces.
    while (!bytes.empty()) {
      size_t n = std::min<size_t>(bytes.size(), 1u << 30);
      crc = static_cast<uint32_t>(
          crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n)));
      bytes.remove_prefix(n);
    }
    return crc;
  }

  grpc::ServerContext* context_;
  grpc::ServerWriter<FileChunk>* writer_;
  std::unique_ptr<encode::GzipCompressor> gzip_;
  int64_t uncompressed_bytes_ = 0;
  uint32_t uncompressed_crc_ = 0;
  int64_t file_bytes_ = 0;
  uint32_t file_crc_ = 0;
};

struct RenderResult {
  absl::Status status;
  int64_t values = 0;
};

template <typename Encoder>
RenderResult Render(db::PgConnection& conn, const db::ExportScope& scope, size_t chunk_size,
                    ChunkSender* sender) {
  RenderResult result;
  encode::ChunkBuffer buffer(chunk_size + chunk_size / 4);
  Encoder encoder(&buffer);
  encode::DataValueSetHeader header;
  if (scope.header) {
    header.data_set = {scope.header->data_set, false};
    header.complete_date_micros = scope.header->complete_date_micros;
    header.period = {scope.header->period, false};
    header.org_unit = {scope.header->org_unit, false};
  }
  encoder.Begin(scope.header ? &header : nullptr);
  bool client_gone = false;
  result.status = db::ReadDataValues(conn, scope, [&](const encode::DataValueRow& row) {
    encoder.Add(row);
    ++result.values;
    if (buffer.size() < chunk_size) return true;
    if (!sender->Send(buffer.view(), result.values, false)) {
      client_gone = true;
      return false;
    }
    buffer.Clear();
    return true;
  });
  if (client_gone) {
    result.status = absl::CancelledError("the client went away; the export was stopped");
    return result;
  }
  if (!result.status.ok()) return result;
  encoder.End();
  if (!sender->Send(buffer.view(), result.values, true)) {
    result.status = absl::CancelledError("the client went away; the export was stopped");
  }
  return result;
}

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

}  // namespace

DataValueExportService::DataValueExportService(db::ConnectionPool* pool,
                                               const ServiceOptions& options)
    : pool_(pool), options_(options) {}

grpc::Status DataValueExportService::ExportFile(grpc::ServerContext* context,
                                                const dvexport::v1::ExportFileRequest* request,
                                                grpc::ServerWriter<FileChunk>* writer) {
  auto started = std::chrono::steady_clock::now();
  ExportSlot slot(&active_exports_, options_.max_concurrent_exports);
  if (!slot.acquired()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        absl::StrCat("too many exports running (limit ",
                                     options_.max_concurrent_exports, "); retry later"));
  }
  absl::Status status = ValidateFileOptions(*request);
  if (!status.ok()) return ToGrpc(status);
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(request->query());
  if (!params.ok()) return ToGrpc(params.status());

  std::unique_ptr<encode::GzipCompressor> gzip;
  if (request->compression() == dvexport::v1::COMPRESSION_GZIP) {
    absl::StatusOr<std::unique_ptr<encode::GzipCompressor>> created =
        encode::GzipCompressor::Create(request->compression_level() == 0
                                           ? 1
                                           : request->compression_level());
    if (!created.ok()) return ToGrpc(created.status());
    gzip = *std::move(created);
  }

  absl::StatusOr<db::PooledConnection> conn = pool_->Acquire(options_.connection_wait);
  if (!conn.ok()) return ToGrpc(conn.status());
  ReadOnlyTransaction transaction(&**conn);
  status = transaction.Begin(options_.statement_timeout);
  if (!status.ok()) return ToGrpc(status);
  absl::StatusOr<db::ExportScope> scope = db::ResolveExportScope(**conn, *params);
  if (!scope.ok()) return ToGrpc(scope.status());

  ChunkSender sender(context, writer, std::move(gzip));
  RenderResult rendered =
      request->format() == dvexport::v1::FORMAT_CSV
          ? Render<encode::CsvDataValueEncoder>(**conn, *scope, options_.chunk_size, &sender)
          : Render<encode::JsonDataValueEncoder>(**conn, *scope, options_.chunk_size, &sender);
  status = rendered.status;
  if (status.ok()) status = transaction.Commit();
  if (status.ok() && !sender.SendTrailer(rendered.values)) {
    status = absl::CancelledError("the client went away before the trailer");
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr,
               "{\"event\":\"export\",\"peer\":\"%s\",\"values\":%lld,\"bytes\":%lld,"
               "\"seconds\":%.3f,\"status\":\"%s\"}\n",
               context->peer().c_str(), static_cast<long long>(rendered.values),
               static_cast<long long>(sender.file_bytes()), seconds,
               absl::StatusCodeToString(status.code()).c_str());
  return ToGrpc(status);
}

}  // namespace dvexport::server
