#include "client/export_client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/buffered_fd_writer.h"
#include "client/replacement_file.h"
#include "common/crc32.h"
#include "common/pem_file.h"

namespace dvexport::client {
namespace {

using dvexport::v1::DataValueBatch;
using dvexport::v1::ExportFileRequest;
using dvexport::v1::ExportRequest;
using dvexport::v1::ExportTrailer;
using dvexport::v1::FileChunk;

constexpr int kMaxReceiveMessageBytes = 64 << 20;

// gRPC and absl share the canonical status codes.
absl::Status FromGrpcStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

void SetDeadline(std::chrono::milliseconds timeout, grpc::ClientContext* context) {
  if (timeout.count() > 0) context->set_deadline(std::chrono::system_clock::now() + timeout);
}

// OK for no credentials or valid ones: an export checks them before it
// creates its temporary file or calls the server.
absl::Status CheckCredentials(const CallCredentialsSpec& spec) {
  return spec.empty() ? absl::OkStatus() : AuthorizationValue(spec).status();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The channel arguments of CreateChannel: the message size and gRPC's retry
// policy (a service config) for every method of both services. The backoffs
// (0.1 s, 0.2 s, 0.4 s, 0.8 s, each +-20% in gRPC) stay short: a server that
// cannot be reached is still UNAVAILABLE, not DEADLINE_EXCEEDED, for a caller
// with a deadline of a couple of seconds.
grpc::ChannelArguments ChannelArguments(const ChannelOptions& options) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxReceiveMessageBytes);
  if (options.max_attempts <= 1) {
    arguments.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    return arguments;
  }
  arguments.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
  arguments.SetServiceConfigJSON(absl::StrCat(
      R"({"methodConfig":[{"name":[{"service":"dvexport.v1.DataValueExport"},)",
      R"({"service":"grpc.health.v1.Health"}],"retryPolicy":{"maxAttempts":)", options.max_attempts,
      R"(,"initialBackoff":"0.1s","maxBackoff":"1s","backoffMultiplier":2,)",
      R"("retryableStatusCodes":["UNAVAILABLE","RESOURCE_EXHAUSTED"]}}]})"));
  return arguments;
}

// What an export is made again for, from the start: a read replica
// cancelled its query (ABORTED), or the server or its database went away
// (UNAVAILABLE) once the call had begun. Before that, gRPC's retry policy has
// already retried UNAVAILABLE, and a first attempt ends there (a server that
// cannot be reached is UNAVAILABLE in a second or so); a later attempt goes on
// (the server that went away may still be restarting).
bool WorthAnotherAttempt(grpc::StatusCode code, bool received_any, int attempt) {
  return code == grpc::StatusCode::ABORTED ||
         (code == grpc::StatusCode::UNAVAILABLE && (received_any || attempt > 1));
}

WriteLimits LimitsOf(std::chrono::steady_clock::time_point start, const ExportOptions& options,
                     int stop_fd) {
  WriteLimits limits;
  if (options.timeout.count() > 0) limits.deadline = start + options.timeout;
  limits.stop_fd = stop_fd;
  limits.write_back_bytes = options.write_back_bytes;
  return limits;
}

constexpr std::chrono::milliseconds kMaxRetryBackoff{30'000};

std::optional<std::chrono::system_clock::time_point> DeadlineOf(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) return std::nullopt;
  return std::chrono::system_clock::now() + timeout;
}

}  // namespace

std::shared_ptr<grpc::Channel> CreateChannel(const std::string& target) {
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   ChannelArguments(ChannelOptions{}));
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateChannel(const std::string& target,
                                                             const ChannelOptions& options) {
  if (options.max_attempts < 1 || options.max_attempts > kMaxCallAttempts) {
    return absl::InvalidArgumentError(absl::StrCat("max_attempts: ", options.max_attempts,
                                                   " is not between 1 and ", kMaxCallAttempts));
  }
  if (options.tls_ca_file.empty() && options.tls_cert_file.empty() &&
      options.tls_key_file.empty()) {
    return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                     ChannelArguments(options));
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("a TLS client certificate and its key go together");
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.tls_ca_file.empty()) {
    absl::StatusOr<std::string> ca =
        common::ReadPemCertificates(options.tls_ca_file, "the TLS CA file");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
  }
  if (!options.tls_cert_file.empty()) {
    absl::StatusOr<common::PemKeyPair> pair =
        common::ReadPemKeyPair(options.tls_cert_file, "the TLS certificate file",
                               options.tls_key_file, "the TLS key file");
    if (!pair.ok()) return pair.status();
    ssl.pem_cert_chain = std::move(pair->certificate_chain);
    ssl.pem_private_key = std::move(pair->private_key);
  }
  return grpc::CreateCustomChannel(target, grpc::SslCredentials(ssl), ChannelArguments(options));
}

ExportClient::ExportClient(std::shared_ptr<grpc::Channel> channel)
    : channel_(channel),
      stub_(dvexport::v1::DataValueExport::NewStub(channel)),
      health_stub_(grpc::health::v1::Health::NewStub(channel)),
      cancelled_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

ExportClient::~ExportClient() {
  if (cancelled_fd_ >= 0) ::close(cancelled_fd_);
}

absl::StatusOr<int64_t> ExportClient::StreamDataValues(const ExportRequest& request,
                                                       const BatchCallback& on_batch,
                                                       const CallOptions& options,
                                                       std::string* change_token) {
  grpc::ClientContext context;
  SetDeadline(options.timeout, &context);
  absl::Status credentials = ApplyCallCredentials(options.credentials, &context);
  if (!credentials.ok()) return credentials;
  if (!Register(&context)) return absl::CancelledError("the client was cancelled");
  std::unique_ptr<grpc::ClientReaderInterface<DataValueBatch>> reader =
      stub_->StreamDataValues(&context, request);

  int64_t values = 0;
  bool ended = false;
  std::string last_token;
  // A failure on our side, which ends the call early.
  absl::Status failure;
  DataValueBatch batch;
  while (reader->Read(&batch)) {
    if (ended) {
      failure = absl::DataLossError("the server sent a batch after the last one");
      break;
    }
    values += batch.data_values_size();
    if (batch.values_so_far() != values) {
      failure = absl::DataLossError(
          absl::StrCat("received ", values,
                       " values but the batch says values_so_far = ", batch.values_so_far()));
      break;
    }
    ended = batch.last();
    if (ended) last_token = batch.change_token();
    if (!on_batch(batch)) {
      failure = absl::CancelledError("the stream was stopped by its consumer");
      break;
    }
  }
  if (!failure.ok()) {
    context.TryCancel();
    while (reader->Read(&batch)) {
    }
  }
  const grpc::Status rpc_status = reader->Finish();
  Unregister(&context);

  if (!failure.ok()) return failure;
  if (!rpc_status.ok()) return FromGrpcStatus(rpc_status);
  if (!ended) {
    return absl::DataLossError(absl::StrCat("the stream ended without its last batch after ",
                                            values, " values: it is incomplete"));
  }
  if (change_token != nullptr) *change_token = std::move(last_token);
  return values;
}

absl::Status ExportClient::CallUnary(const CallOptions& options,
                                     absl::FunctionRef<grpc::Status(grpc::ClientContext*)> call) {
  grpc::ClientContext context;
  SetDeadline(options.timeout, &context);
  absl::Status credentials = ApplyCallCredentials(options.credentials, &context);
  if (!credentials.ok()) return credentials;
  if (!Register(&context)) return absl::CancelledError("the client was cancelled");
  const grpc::Status status = call(&context);
  Unregister(&context);
  return status.ok() ? absl::OkStatus() : FromGrpcStatus(status);
}

absl::StatusOr<int64_t> ExportClient::CountDataValues(const ExportRequest& request,
                                                      const CallOptions& options) {
  dvexport::v1::CountResponse response;
  absl::Status status = CallUnary(options, [&](grpc::ClientContext* context) {
    return stub_->CountDataValues(context, request, &response);
  });
  if (!status.ok()) return status;
  return response.count();
}

absl::StatusOr<dvexport::v1::ListChangeStreamsResponse> ExportClient::ListChangeStreams(
    const CallOptions& options) {
  dvexport::v1::ListChangeStreamsResponse response;
  absl::Status status = CallUnary(options, [&](grpc::ClientContext* context) {
    return stub_->ListChangeStreams(context, dvexport::v1::ListChangeStreamsRequest(), &response);
  });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<std::string> ExportClient::DropChangeStream(
    const dvexport::v1::DropChangeStreamRequest& request, const CallOptions& options) {
  dvexport::v1::DropChangeStreamResponse response;
  absl::Status status = CallUnary(options, [&](grpc::ClientContext* context) {
    return stub_->DropChangeStream(context, request, &response);
  });
  if (!status.ok()) return status;
  return response.name();
}

absl::StatusOr<ServingStatus> ExportClient::Health(const std::string& service,
                                                   const CallOptions& options) {
  grpc::ClientContext context;
  SetDeadline(options.timeout, &context);
  if (!Register(&context)) return absl::CancelledError("the client was cancelled");
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = health_stub_->Check(&context, request, &response);
  Unregister(&context);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.status();
}

absl::StatusOr<ExportSummary> ExportClient::ExportToFile(const ExportFileRequest& request,
                                                         const std::string& path,
                                                         const ExportOptions& options) {
  absl::Status credentials = CheckCredentials(options.credentials);
  if (!credentials.ok()) return credentials;
  const auto start = std::chrono::steady_clock::now();
  const std::optional<std::chrono::system_clock::time_point> deadline = DeadlineOf(options.timeout);
  ReplacementFile file(path);
  absl::Status status =
      file.Create(options.timeout.count() > 0 ? start + options.timeout
                                              : std::chrono::steady_clock::time_point::max(),
                  [this] {
                    std::lock_guard<std::mutex> lock(mutex_);
                    return cancelled_;
                  });
  if (!status.ok()) return status;
  for (int attempt = 1;; ++attempt) {
    BufferedFdWriter writer(file.fd(), path, LimitsOf(start, options, cancelled_fd_));
    int64_t bytes_received = 0;
    bool retryable = false;
    absl::StatusOr<ExportSummary> summary =
        Receive(request, writer, options, deadline, attempt, &bytes_received, &retryable);
    if (summary.ok()) {
      status = writer.Flush();
      if (status.ok()) status = file.Commit();
      if (!status.ok()) return status;
      summary->seconds = SecondsSince(start);
      summary->attempts = attempt;
      summary->in_place = file.in_place();
      return summary;
    }
    const bool written = file.in_place() && bytes_received > 0;
    if (!retryable || written || !WaitToRetry(summary.status(), attempt, options, deadline)) {
      if (!written) return summary.status();
      return absl::Status(summary.status().code(),
                          absl::StrCat(summary.status().message(), "; ", path,
                                       " is not a regular file and was written in place: ",
                                       writer.bytes_written(), " of the ", bytes_received,
                                       " bytes received reached it and cannot be "
                                       "taken back"));
    }
    if (!file.in_place()) {
      status = file.Discard();
      if (!status.ok()) return status;
    }
  }
}

absl::StatusOr<ExportSummary> ExportClient::ExportToFd(const ExportFileRequest& request, int fd,
                                                       const ExportOptions& options) {
  absl::Status credentials = CheckCredentials(options.credentials);
  if (!credentials.ok()) return credentials;
  const auto start = std::chrono::steady_clock::now();
  const std::optional<std::chrono::system_clock::time_point> deadline = DeadlineOf(options.timeout);
  for (int attempt = 1;; ++attempt) {
    BufferedFdWriter writer(fd, absl::StrCat("file descriptor ", fd),
                            LimitsOf(start, options, cancelled_fd_));
    int64_t bytes_received = 0;
    bool retryable = false;
    absl::StatusOr<ExportSummary> summary =
        Receive(request, writer, options, deadline, attempt, &bytes_received, &retryable);
    if (summary.ok()) {
      absl::Status status = writer.Flush();
      if (!status.ok()) return status;
      summary->seconds = SecondsSince(start);
      summary->attempts = attempt;
      return summary;
    }
    if (!retryable || bytes_received > 0 ||
        !WaitToRetry(summary.status(), attempt, options, deadline)) {
      return summary.status();
    }
  }
}

bool ExportClient::WaitToRetry(const absl::Status& failure, int attempt,
                               const ExportOptions& options,
                               std::optional<std::chrono::system_clock::time_point> deadline) {
  if (attempt >= options.max_attempts) return false;
  std::chrono::milliseconds wait = options.retry_backoff;
  for (int i = 1; i < attempt && wait < kMaxRetryBackoff; ++i) wait *= 2;
  wait = std::min(wait, kMaxRetryBackoff);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    wait = std::chrono::milliseconds(std::llround(wait.count() * jitter(random_)));
  }
  if (deadline.has_value() && std::chrono::system_clock::now() + wait >= *deadline) return false;
  if (options.on_retry) options.on_retry(failure, attempt + 1, wait);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (cancelled_changed_.wait_for(lock, wait, [this] { return cancelled_; })) return false;
  }
  // The server went away: the channel's subchannel may be in its reconnect
  // backoff (1 s, growing 1.6 times to 120 s), in which a call without
  // wait_for_ready fails at once. The attempt connects now instead.
  grpc::experimental::ChannelResetConnectionBackoff(channel_.get());
  return true;
}

void ExportClient::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    for (grpc::ClientContext* context : in_progress_) context->TryCancel();
  }
  cancelled_changed_.notify_all();
  const uint64_t one = 1;
  // Only fails if the counter would overflow, which takes 2^64 - 1 calls.
  (void)!::write(cancelled_fd_, &one, sizeof one);
}

bool ExportClient::Register(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cancelled_) return false;
  in_progress_.insert(context);
  return true;
}

void ExportClient::Unregister(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  in_progress_.erase(context);
}

absl::StatusOr<ExportSummary> ExportClient::Receive(
    const ExportFileRequest& request, BufferedFdWriter& writer, const ExportOptions& options,
    std::optional<std::chrono::system_clock::time_point> deadline, int attempt,
    int64_t* bytes_received, bool* retryable) {
  *bytes_received = 0;
  *retryable = false;
  grpc::ClientContext context;
  if (deadline.has_value()) context.set_deadline(*deadline);
  absl::Status credentials = ApplyCallCredentials(options.credentials, &context);
  if (!credentials.ok()) return credentials;
  if (!Register(&context)) return absl::CancelledError("the export was cancelled");
  std::unique_ptr<grpc::ClientReaderInterface<FileChunk>> reader =
      stub_->ExportFile(&context, request);

  // progress.file_bytes counts the bytes received, and file_crc32 sums them.
  ExportProgress progress;
  uint32_t file_crc32 = 0;
  std::optional<ExportTrailer> trailer;
  // A failure on our side, which ends the call early.
  absl::Status failure;
  // Whether a message arrived: gRPC retries a call only until then.
  bool received_any = false;
  FileChunk chunk;
  while (reader->Read(&chunk)) {
    received_any = true;
    if (trailer.has_value()) {
      failure = absl::DataLossError("the server sent a message after the trailer");
      break;
    }
    if (chunk.has_data()) {
      const std::string& data = chunk.data();
      file_crc32 = common::Crc32(file_crc32, data);
      progress.file_bytes += static_cast<int64_t>(data.size());
      *bytes_received = progress.file_bytes;
      failure = writer.Append(data);
      if (!failure.ok()) break;
    } else if (chunk.has_trailer()) {
      trailer = std::move(*chunk.mutable_trailer());
    }
    progress.values = trailer.has_value() ? trailer->values() : chunk.values_so_far();
    if (options.on_progress) options.on_progress(progress);
  }
  if (!failure.ok()) {
    context.TryCancel();
    while (reader->Read(&chunk)) {
    }
  }
  const grpc::Status rpc_status = reader->Finish();
  Unregister(&context);

  if (!failure.ok()) return failure;
  if (!rpc_status.ok()) {
    *retryable = WorthAnotherAttempt(rpc_status.error_code(), received_any, attempt);
    return FromGrpcStatus(rpc_status);
  }
  const int64_t file_bytes = progress.file_bytes;
  if (!trailer.has_value()) {
    return absl::DataLossError(absl::StrCat("the stream ended without a trailer after ", file_bytes,
                                            " bytes: the export is incomplete"));
  }
  if (trailer->file_bytes() != file_bytes) {
    return absl::DataLossError(absl::StrCat("received ", file_bytes, " bytes but the trailer says ",
                                            trailer->file_bytes()));
  }
  if (trailer->file_crc32() != file_crc32) {
    return absl::DataLossError(
        absl::StrFormat("the CRC-32 of the bytes received is %08x but the trailer says %08x",
                        file_crc32, trailer->file_crc32()));
  }
  ExportSummary summary;
  summary.values = trailer->values();
  summary.file_bytes = file_bytes;
  summary.uncompressed_bytes = trailer->uncompressed_bytes();
  summary.change_token = trailer->change_token();
  return summary;
}

}  // namespace dvexport::client
