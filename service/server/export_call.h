#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_CALL_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_CALL_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.pb.h"
#include "service/pipeline/change_stream_calls.h"
#include "service/pipeline/count.h"
#include "service/pipeline/export.h"
#include "service/pipeline/export_pipeline.h"
#include "service/server/request_bytes.h"

namespace dvexport::server {

// absl::Status as the gRPC status a client sees.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Why a gRPC call that the door saw cancelled ended, for the call log and the metrics:
// DeadlineExceeded if its deadline has passed at "now", else "otherwise" (the client cancelled
// or went away, or the server shut down). The client's deadline reaches the server as a cancel
// (RST_STREAM) that can come a little before the server's own deadline, which is the client's
// plus the request's transit and grpc-timeout's rounding up to three significant digits (< 1%):
// so the deadline counts as passed from kDeadlineSlack + 1% of the call's timeout ("deadline" -
// "arrived") before it.
inline constexpr std::chrono::milliseconds kDeadlineSlack{250};
absl::Status CancelledCallStatus(std::chrono::system_clock::time_point arrived,
                                 std::chrono::system_clock::time_point deadline,
                                 std::chrono::system_clock::time_point now, absl::Status otherwise);

// What the pipeline needs to know of a gRPC call: the peer, the deadline, the `authorization`
// metadata and the user its verified client certificate stands for (--client_identities).
pipeline::CallOrigin CallOriginOf(grpc::CallbackServerContext* context,
                                  const pipeline::PipelineOptions& options);

// The request of a call, parsed from its bytes; InvalidArgument saying what is wrong otherwise
// (CheckRequestBytes).
template <typename Request>
absl::StatusOr<Request> ParseRequest(const grpc::ByteBuffer* buffer) {
  if (buffer == nullptr) return absl::InvalidArgumentError("the call carried no request");
  absl::StatusOr<std::string> bytes = RequestBytes(*buffer);
  if (!bytes.ok()) return bytes.status();
  // Checked first: protobuf would refuse the whole message, without saying why.
  absl::Status checked = CheckRequestBytes(Request::descriptor(), *bytes);
  if (!checked.ok()) return checked;
  Request request;
  if (!request.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request is not a valid ", Request::descriptor()->full_name()));
  }
  return request;
}

// ExportFile and StreamDataValues on gRPC's callback API: the door of one pipeline::Export. It
// sends the export's chunks one write at a time (FileChunk data or trailer, or DataValueBatch,
// framed without copying the chunk's bytes): the next write starts from OnWriteDone, or from the
// export's Ready when a chunk arrives while no write is in flight. No gRPC thread waits for the
// database or a reader. OnCancel and a failed write cancel the export; a stalled client's RPC is
// cancelled with the export's status (Abort). Deletes itself when the call is done.
class ExportCall final : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
                         public pipeline::ExportConsumer {
 public:
  // ExportFile of the raw "request".
  static ExportCall* StartFile(pipeline::ExportPipeline* pipeline,
                               grpc::CallbackServerContext* context,
                               const grpc::ByteBuffer* request);
  // StreamDataValues of the raw "request".
  static ExportCall* StartStream(pipeline::ExportPipeline* pipeline,
                                 grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

  void Ready() override { Pump(); }
  void Abort(const absl::Status& status) override;

 private:
  explicit ExportCall(grpc::CallbackServerContext* context)
      : context_(context), arrived_(std::chrono::system_clock::now()) {}
  // CancelledCallStatus of this call, now.
  absl::Status CancelledStatus(absl::Status otherwise) const;
  // The export, once started; then the first Pump (a Ready before it found no export).
  void Attach(std::unique_ptr<pipeline::Export> export_call);
  // Starts the next write, or finishes the call, if no write is in flight.
  void Pump();

  grpc::CallbackServerContext* const context_;
  const std::chrono::system_clock::time_point arrived_;
  std::mutex pump_mu_;
  std::unique_ptr<pipeline::Export> export_ ABSL_GUARDED_BY(pump_mu_);
  bool writing_ ABSL_GUARDED_BY(pump_mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(pump_mu_) = false;
  grpc::ByteBuffer in_flight_;  // owned by the write in flight
};

// CountDataValues on gRPC's callback API: the door of one pipeline::Count.
class CountCall final : public grpc::ServerUnaryReactor {
 public:
  // "*response" receives the serialized CountResponse.
  CountCall(pipeline::ExportPipeline* pipeline, grpc::CallbackServerContext* context,
            const grpc::ByteBuffer* request, grpc::ByteBuffer* response);

  void OnCancel() override;
  void OnDone() override;

 private:
  void End(absl::StatusOr<int64_t> count);

  grpc::CallbackServerContext* const context_;
  const std::chrono::system_clock::time_point arrived_;
  grpc::ByteBuffer* const response_;
  std::mutex mu_;
  std::unique_ptr<pipeline::Count> count_ ABSL_GUARDED_BY(mu_);
};

// ListChangeStreams and DropChangeStream on gRPC's callback API: the door of one
// pipeline::ChangeStreamCall.
class ChangeStreamRpc final : public grpc::ServerUnaryReactor {
 public:
  // "*response" receives the serialized ListChangeStreamsResponse or DropChangeStreamResponse.
  static ChangeStreamRpc* StartList(pipeline::ExportPipeline* pipeline,
                                    grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request, grpc::ByteBuffer* response);
  static ChangeStreamRpc* StartDrop(pipeline::ExportPipeline* pipeline,
                                    grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request, grpc::ByteBuffer* response);

  void OnCancel() override;
  void OnDone() override;

 private:
  explicit ChangeStreamRpc(grpc::ByteBuffer* response) : response_(response) {}
  // The call, once started (a cancel that came first reaches it now).
  void Attach(std::unique_ptr<pipeline::ChangeStreamCall> call);
  template <typename Response>
  void End(absl::StatusOr<Response> response);

  grpc::ByteBuffer* const response_;
  std::mutex mu_;
  std::unique_ptr<pipeline::ChangeStreamCall> call_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_CALL_H_
