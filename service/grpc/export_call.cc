#include "service/grpc/export_call.h"

#include <grpc/grpc.h>

#include <string>
#include <utility>

#include "dvexport/v1/export.pb.h"
#include "service/encode/wire_format.h"
#include "service/grpc/call_context.h"
#include "service/pipeline/export.h"

namespace dvexport::grpc_door {
namespace {

namespace wire = encode::wire;

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

ExportCall* ExportCall::StartFile(pipeline::ExportPipeline* pipeline,
                                  grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request) {
  auto* call = new ExportCall(context);
  call->Attach(pipeline::Export::StartFile(pipeline, CallOriginOf(context),
                                           ParseRequest<dvexport::v1::ExportFileRequest>(request),
                                           call));
  return call;
}

ExportCall* ExportCall::StartStream(pipeline::ExportPipeline* pipeline,
                                    grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request) {
  auto* call = new ExportCall(context);
  call->Attach(pipeline::Export::StartStream(
      pipeline, CallOriginOf(context), ParseRequest<dvexport::v1::ExportRequest>(request), call));
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

}  // namespace dvexport::grpc_door
