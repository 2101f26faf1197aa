#include "service/server/export_service.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/dhis2/export_request_validator.h"
#include "service/encode/parallel_gzip_compressor.h"
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

// Cancels "session" once the client has gone (the synchronous API tells it
// only when asked: ServerContext::IsCancelled(), asked here every kPoll).
class CancelWhenClientGone {
 public:
  static constexpr std::chrono::milliseconds kPoll{50};

  CancelWhenClientGone(grpc::ServerContext* context, db::ReadSession* session)
      : thread_([this, context, session] {
          std::unique_lock<std::mutex> lock(mu_);
          while (!done_) {
            if (context->IsCancelled()) {
              session->Cancel();
              return;
            }
            wake_.wait_for(lock, kPoll);
          }
        }) {}

  ~CancelWhenClientGone() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;  // last: started once the members it uses exist
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
    return absl::InvalidArgumentError(
        absl::StrCat("compression_level: ", request.compression_level(),
                     " is not between 1 and 9 (0: default)"));
  }
  return absl::OkStatus();
}

}  // namespace

// Members are released in reverse order: the client watcher stops, the read
// session ends its transactions and gives its connections back, and the slot
// is freed last.
class ExportSession {
 public:
  ExportSession(std::atomic<int>* active, int limit) : slot_(active, limit) {}

  db::ReadSession& read() { return *read_; }

 private:
  friend class DataValueExportService;

  ExportSlot slot_;
  std::unique_ptr<db::ReadSession> read_;
  std::unique_ptr<CancelWhenClientGone> watcher_;
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
      1,
      new grpc::internal::SplitServerStreamingHandler<dvexport::v1::ExportRequest,
                                                      grpc::ByteBuffer>(
          [this](grpc::ServerContext* context,
                 grpc::ServerSplitStreamer<dvexport::v1::ExportRequest, grpc::ByteBuffer>* stream) {
            return StreamSerializedBatches(context, stream);
          }));
}

absl::StatusOr<std::unique_ptr<ExportSession>> DataValueExportService::StartExport(
    grpc::ServerContext* context, const dvexport::v1::ExportRequest& query) {
  auto session = std::make_unique<ExportSession>(&active_exports_, options_.max_concurrent_exports);
  if (!session->slot_.acquired()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "too many exports running (limit ", options_.max_concurrent_exports, "); retry later"));
  }
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(query);
  if (!params.ok()) return params.status();
  session->read_ =
      std::make_unique<db::ReadSession>(pool_, options_.read_session(), context->deadline());
  session->watcher_ = std::make_unique<CancelWhenClientGone>(context, session->read_.get());
  absl::Status status = session->read_->Begin(*params);
  if (!status.ok()) return status;
  return session;
}

absl::StatusOr<int> DataValueExportService::PlanReaders(ExportSession* session) {
  // Extra connections only where the pool keeps one for every export that may still start.
  const int keep_available = std::max(0, options_.max_concurrent_exports - active_exports_.load());
  absl::StatusOr<int> readers = session->read().PlanReads(keep_available);
  if (readers.ok() && session->read().sliced()) sliced_exports_.fetch_add(1);
  return readers;
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
  absl::StatusOr<std::unique_ptr<ExportSession>> session = StartExport(context, request->query());
  if (!session.ok()) return ToGrpc(session.status());
  absl::StatusOr<int> readers = PlanReaders(session->get());
  if (!readers.ok()) return ToGrpc(readers.status());

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
  status = StreamFile(
      &(*session)->read(), *readers, request->format(), std::move(gzip), options_.chunk_size,
      context, [stream](const grpc::ByteBuffer& chunk) { return stream->Write(chunk); }, &stats);
  // The trailer is only sent after a successful COPY; commit is a formality
  // for a read-only transaction.
  if (status.ok()) status = (*session)->read().Finish();
  return ToGrpc(status);
}

grpc::Status DataValueExportService::StreamSerializedBatches(
    grpc::ServerContext* context,
    grpc::ServerSplitStreamer<dvexport::v1::ExportRequest, grpc::ByteBuffer>* stream) {
  dvexport::v1::ExportRequest request;
  if (!stream->Read(&request)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call carried no request");
  }
  absl::StatusOr<std::unique_ptr<ExportSession>> session = StartExport(context, request);
  if (!session.ok()) return ToGrpc(session.status());
  absl::StatusOr<int> readers = PlanReaders(session->get());
  if (!readers.ok()) return ToGrpc(readers.status());
  StreamExportStats stats;
  absl::Status status = StreamDataValueBatches(
      &(*session)->read(), *readers, options_.batch_bytes, context,
      [stream](const grpc::ByteBuffer& batch) { return stream->Write(batch); }, &stats);
  if (status.ok()) status = (*session)->read().Finish();
  return ToGrpc(status);
}

grpc::Status DataValueExportService::CountDataValues(grpc::ServerContext* context,
                                                     const dvexport::v1::ExportRequest* request,
                                                     dvexport::v1::CountResponse* response) {
  absl::StatusOr<std::unique_ptr<ExportSession>> session = StartExport(context, *request);
  if (!session.ok()) return ToGrpc(session.status());
  absl::StatusOr<int64_t> count = (*session)->read().Count();
  absl::Status status = count.status();
  if (status.ok()) status = (*session)->read().Finish();
  if (status.ok()) response->set_count(*count);
  return ToGrpc(status);
}

}  // namespace dvexport::server
