#include "service/server/export_call.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security_constants.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "service/auth/authenticator.h"
#include "service/encode/wire_format.h"
#include "service/pipeline/streaming_export.h"

namespace dvexport::server {
namespace {

namespace wire = encode::wire;

// The DHIS2 username the call's verified client certificate stands for (--client_identities);
// nullopt without a certificate or when it is not listed.
std::optional<std::string> CertificateUser(grpc::CallbackServerContext* context,
                                           const auth::ClientIdentities* identities) {
  if (identities == nullptr) return std::nullopt;
  const std::shared_ptr<const grpc::AuthContext> auth_context = context->auth_context();
  // Only a certificate the server verified against --tls_client_ca counts.
  if (auth_context == nullptr || !auth_context->IsPeerAuthenticated()) return std::nullopt;
  std::string subject;
  for (const grpc::string_ref& value :
       auth_context->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME)) {
    subject.assign(value.data(), value.size());
  }
  std::vector<std::string> uris;
  for (const grpc::string_ref& value :
       auth_context->FindPropertyValues(GRPC_PEER_URI_PROPERTY_NAME)) {
    uris.emplace_back(value.data(), value.size());
  }
  return identities->Find(subject, uris);
}

// A tag and a varint as a slice of their own.
grpc::Slice TagAndVarintSlice(char tag, uint64_t value) {
  char bytes[1 + wire::kMaxVarint64];
  const char* end = wire::WriteTagAndVarint(bytes, tag, value);
  return grpc::Slice(bytes, static_cast<size_t>(end - bytes));
}

// "bytes" as a slice that owns them: gRPC frees them once sent, and nothing is copied.
grpc::Slice OwningSlice(std::string bytes) {
  auto* owned = new std::string(std::move(bytes));
  return grpc::Slice(
      owned->data(), owned->size(), [](void* p) { delete static_cast<std::string*>(p); }, owned);
}

// A chunk as the message it is sent as: a FileChunk as three slices (the field's tag and length,
// the chunk's bytes, values_so_far, always written, last), or a DataValueBatch as it is. No
// FileChunk object holds a second copy of the bytes, and gRPC serializes nothing.
grpc::ByteBuffer Frame(pipeline::Chunk chunk) {
  if (chunk.kind == pipeline::Chunk::Kind::kBatch) {
    grpc::Slice slice = OwningSlice(std::move(chunk.bytes));
    return grpc::ByteBuffer(&slice, 1);
  }
  const char tag = chunk.kind == pipeline::Chunk::Kind::kFileTrailer ? wire::file_chunk::kTrailer
                                                                     : wire::file_chunk::kData;
  const size_t size = chunk.bytes.size();
  grpc::Slice parts[3] = {TagAndVarintSlice(tag, size), OwningSlice(std::move(chunk.bytes)),
                          TagAndVarintSlice(wire::file_chunk::kValuesSoFar,
                                            static_cast<uint64_t>(chunk.values_so_far))};
  return grpc::ByteBuffer(parts, 3);
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status CancelledCallStatus(std::chrono::system_clock::time_point arrived,
                                 std::chrono::system_clock::time_point deadline,
                                 std::chrono::system_clock::time_point now,
                                 absl::Status otherwise) {
  if (deadline == std::chrono::system_clock::time_point::max()) return otherwise;
  const auto timeout = std::max(deadline - arrived, std::chrono::system_clock::duration::zero());
  if (now + kDeadlineSlack + timeout / 100 < deadline) return otherwise;
  return absl::DeadlineExceededError("the call's deadline passed");
}

pipeline::CallOrigin CallOriginOf(grpc::CallbackServerContext* context,
                                  const pipeline::PipelineOptions& options) {
  pipeline::CallOrigin origin;
  origin.transport = "grpc";
  origin.peer = context->peer();
  origin.peer_ip = auth::PeerAddress(origin.peer);
  origin.deadline = context->deadline();
  const auto& metadata = context->client_metadata();
  for (auto [it, end] = metadata.equal_range("authorization"); it != end; ++it) {
    origin.credentials.authorization.emplace_back(it->second.data(), it->second.size());
  }
  // Only read when the pipeline authenticates (the certificate's properties cost a lookup).
  if (options.auth == pipeline::AuthMode::kDhis2) {
    origin.credentials.certificate_user = CertificateUser(context, options.client_identities);
  }
  // An export is a GET, and a gRPC call carries no Referer (a token's request rules).
  origin.credentials.method = "GET";
  return origin;
}

ExportCall* ExportCall::StartFile(pipeline::ExportPipeline* pipeline,
                                  grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request) {
  auto* call = new ExportCall(context);
  call->Attach(pipeline::Export::StartFile(pipeline, CallOriginOf(context, pipeline->options()),
                                           ParseRequest<dvexport::v1::ExportFileRequest>(request),
                                           call));
  return call;
}

ExportCall* ExportCall::StartStream(pipeline::ExportPipeline* pipeline,
                                    grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request) {
  auto* call = new ExportCall(context);
  call->Attach(pipeline::Export::StartStream(pipeline, CallOriginOf(context, pipeline->options()),
                                             ParseRequest<dvexport::v1::ExportRequest>(request),
                                             call));
  return call;
}

void ExportCall::Attach(std::unique_ptr<pipeline::Export> export_call) {
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    export_ = std::move(export_call);
  }
  Pump();
}

void ExportCall::Pump() {
  grpc::Status status;
  bool finish = false;
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    if (export_ == nullptr || writing_ || finishing_) return;
    pipeline::Chunk chunk;
    switch (export_->TakeNext(&chunk)) {
      case pipeline::Export::Next::kChunk:
        writing_ = true;
        in_flight_ = Frame(std::move(chunk));
        break;
      case pipeline::Export::Next::kEmpty:
        return;
      case pipeline::Export::Next::kDone:
        finishing_ = true;
        finish = true;
        status = ToGrpcStatus(export_->status());
        break;
    }
  }
  if (finish) {
    Finish(status);
    return;
  }
  StartWrite(&in_flight_);
}

void ExportCall::OnWriteDone(bool ok) {
  size_t bytes = 0;
  pipeline::Export* export_call = nullptr;
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    writing_ = false;
    bytes = in_flight_.Length();
    export_call = export_.get();
  }
  // The write completed once the transport took the message within the client's flow-control
  // window (chttp2 calls back when its last byte is framed, not when the client reads it).
  if (ok) {
    export_call->Sent(bytes);
  } else {
    export_call->Cancel(CancelledStatus(pipeline::ClientGoneError()));
  }
  Pump();
}

void ExportCall::OnCancel() {
  pipeline::Export* export_call = nullptr;
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    export_call = export_.get();
  }
  if (export_call != nullptr) export_call->Cancel(CancelledStatus(pipeline::CallCancelledError()));
}

absl::Status ExportCall::CancelledStatus(absl::Status otherwise) const {
  return CancelledCallStatus(arrived_, context_->deadline(), std::chrono::system_clock::now(),
                             std::move(otherwise));
}

void ExportCall::Abort(const absl::Status& status) {
  // A stalled client also holds back the status that Finish would send after the messages: the
  // RPC is cancelled with it instead (OnWriteDone(false) and OnCancel follow).
  grpc_call_cancel_with_status(context_->c_call(), static_cast<grpc_status_code>(status.code()),
                               std::string(status.message()).c_str(), nullptr);
}

void ExportCall::OnDone() { delete this; }

CountCall::CountCall(pipeline::ExportPipeline* pipeline, grpc::CallbackServerContext* context,
                     const grpc::ByteBuffer* request, grpc::ByteBuffer* response)
    : context_(context), arrived_(std::chrono::system_clock::now()), response_(response) {
  std::unique_ptr<pipeline::Count> count =
      pipeline::Count::Start(pipeline, CallOriginOf(context, pipeline->options()),
                             ParseRequest<dvexport::v1::ExportRequest>(request),
                             [this](absl::StatusOr<int64_t> counted) { End(std::move(counted)); });
  std::lock_guard<std::mutex> lock(mu_);
  count_ = std::move(count);
}

void CountCall::End(absl::StatusOr<int64_t> count) {
  if (!count.ok()) {
    Finish(ToGrpcStatus(count.status()));
    return;
  }
  dvexport::v1::CountResponse response;
  response.set_count(*count);
  bool own_buffer = false;
  const grpc::Status serialized = grpc::SerializationTraits<dvexport::v1::CountResponse>::Serialize(
      response, response_, &own_buffer);
  Finish(serialized.ok() ? grpc::Status::OK
                         : grpc::Status(grpc::StatusCode::INTERNAL, "cannot serialize the count"));
}

void CountCall::OnCancel() {
  std::lock_guard<std::mutex> lock(mu_);
  if (count_ != nullptr) {
    count_->Cancel(CancelledCallStatus(arrived_, context_->deadline(),
                                       std::chrono::system_clock::now(),
                                       pipeline::CallCancelledError()));
  }
}

void CountCall::OnDone() {
  std::unique_ptr<pipeline::Count> count;
  {
    std::lock_guard<std::mutex> lock(mu_);
    count = std::move(count_);
  }
  delete this;
  // Joins the count's thread, which has called End.
  count.reset();
}

ChangeStreamRpc* ChangeStreamRpc::StartList(pipeline::ExportPipeline* pipeline,
                                            grpc::CallbackServerContext* context,
                                            const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) {
  auto* rpc = new ChangeStreamRpc(response);
  rpc->Attach(pipeline::ChangeStreamCall::StartList(
      pipeline, CallOriginOf(context, pipeline->options()),
      ParseRequest<dvexport::v1::ListChangeStreamsRequest>(request),
      [rpc](absl::StatusOr<dvexport::v1::ListChangeStreamsResponse> listed) {
        rpc->End(std::move(listed));
      }));
  return rpc;
}

ChangeStreamRpc* ChangeStreamRpc::StartDrop(pipeline::ExportPipeline* pipeline,
                                            grpc::CallbackServerContext* context,
                                            const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) {
  auto* rpc = new ChangeStreamRpc(response);
  rpc->Attach(pipeline::ChangeStreamCall::StartDrop(
      pipeline, CallOriginOf(context, pipeline->options()),
      ParseRequest<dvexport::v1::DropChangeStreamRequest>(request),
      [rpc](absl::StatusOr<dvexport::v1::DropChangeStreamResponse> dropped) {
        rpc->End(std::move(dropped));
      }));
  return rpc;
}

void ChangeStreamRpc::Attach(std::unique_ptr<pipeline::ChangeStreamCall> call) {
  std::lock_guard<std::mutex> lock(mu_);
  call_ = std::move(call);
  if (cancelled_) call_->Cancel();
}

template <typename Response>
void ChangeStreamRpc::End(absl::StatusOr<Response> response) {
  if (!response.ok()) {
    Finish(ToGrpcStatus(response.status()));
    return;
  }
  bool own_buffer = false;
  const grpc::Status serialized =
      grpc::SerializationTraits<Response>::Serialize(*response, response_, &own_buffer);
  Finish(serialized.ok() ? grpc::Status::OK
                         : grpc::Status(grpc::StatusCode::INTERNAL, "cannot serialize the answer"));
}

void ChangeStreamRpc::OnCancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (call_ != nullptr) call_->Cancel();
}

void ChangeStreamRpc::OnDone() {
  std::unique_ptr<pipeline::ChangeStreamCall> call;
  {
    std::lock_guard<std::mutex> lock(mu_);
    call = std::move(call_);
  }
  delete this;
  // Joins the call's thread, which has called End.
  call.reset();
}

}  // namespace dvexport::server
