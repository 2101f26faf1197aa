#include "service/grpc/unary_call.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.pb.h"
#include "service/grpc/call_context.h"
#include "service/pipeline/change_stream_calls.h"
#include "service/pipeline/count.h"
#include "service/pipeline/export.h"

namespace dvexport::grpc_door {
namespace {

// Tells a pipeline call that its caller went away; "why" is what a count is answered with.
void CancelCall(pipeline::Count& count, const absl::Status& why) { count.Cancel(why); }
void CancelCall(pipeline::ChangeStreamCall& call, const absl::Status&) { call.Cancel(); }

// A unary RPC: the door of one pipeline "Call" that answers once with a "Response".
template <typename Call, typename Response>
class UnaryCall final : public grpc::ServerUnaryReactor {
 public:
  using Done = std::function<void(absl::StatusOr<Response>)>;

  // Starts the pipeline's call through "start", which hands the Done it is given to the call
  // (called exactly once, from any thread). "what" names the answer in the INTERNAL status of a
  // failed serialization.
  static UnaryCall* Start(grpc::CallbackServerContext* context, grpc::ByteBuffer* response,
                          const char* what,
                          const std::function<std::unique_ptr<Call>(Done)>& start) {
    auto* rpc = new UnaryCall(context, response, what);
    rpc->Attach(start([rpc](absl::StatusOr<Response> answer) { rpc->End(std::move(answer)); }));
    return rpc;
  }

  void OnCancel() override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ =
        CancelledCallStatus(arrived_, context_->deadline(), std::chrono::system_clock::now(),
                            pipeline::CallCancelledError());
    if (call_ != nullptr) CancelCall(*call_, *cancelled_);
  }

  void OnDone() override {
    std::unique_ptr<Call> call;
    {
      std::lock_guard<std::mutex> lock(mu_);
      call = std::move(call_);
    }
    delete this;
    // Joins the call's thread, which has called End.
    call.reset();
  }

 private:
  UnaryCall(grpc::CallbackServerContext* context, grpc::ByteBuffer* response, const char* what)
      : context_(context),
        arrived_(std::chrono::system_clock::now()),
        response_(response),
        what_(what) {}

  // The call, once started (a cancel that came first reaches it now).
  void Attach(std::unique_ptr<Call> call) {
    std::lock_guard<std::mutex> lock(mu_);
    call_ = std::move(call);
    if (cancelled_.has_value()) CancelCall(*call_, *cancelled_);
  }

  void End(absl::StatusOr<Response> response) {
    if (!response.ok()) {
      Finish(ToGrpcStatus(response.status()));
      return;
    }
    bool own_buffer = false;
    const grpc::Status serialized =
        grpc::SerializationTraits<Response>::Serialize(*response, response_, &own_buffer);
    Finish(serialized.ok() ? grpc::Status::OK
                           : grpc::Status(grpc::StatusCode::INTERNAL,
                                          absl::StrCat("cannot serialize ", what_)));
  }

  grpc::CallbackServerContext* const context_;
  const std::chrono::system_clock::time_point arrived_;
  grpc::ByteBuffer* const response_;
  const char* const what_;
  std::mutex mu_;
  std::unique_ptr<Call> call_ ABSL_GUARDED_BY(mu_);
  // The status of the cancel, once OnCancel has come.
  std::optional<absl::Status> cancelled_ ABSL_GUARDED_BY(mu_);
};

using CountCall = UnaryCall<pipeline::Count, dvexport::v1::CountResponse>;
using ListCall = UnaryCall<pipeline::ChangeStreamCall, dvexport::v1::ListChangeStreamsResponse>;
using DropCall = UnaryCall<pipeline::ChangeStreamCall, dvexport::v1::DropChangeStreamResponse>;

}  // namespace

grpc::ServerUnaryReactor* StartCount(pipeline::ExportPipeline* pipeline,
                                     grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request, grpc::ByteBuffer* response) {
  return CountCall::Start(context, response, "the count", [&](CountCall::Done done) {
    return pipeline::Count::Start(pipeline, CallOriginOf(context),
                                  ParseRequest<dvexport::v1::ExportRequest>(request),
                                  [done = std::move(done)](absl::StatusOr<int64_t> counted) {
                                    if (!counted.ok()) {
                                      done(counted.status());
                                      return;
                                    }
                                    dvexport::v1::CountResponse answer;
                                    answer.set_count(*counted);
                                    done(std::move(answer));
                                  });
  });
}

grpc::ServerUnaryReactor* StartListChangeStreams(pipeline::ExportPipeline* pipeline,
                                                 grpc::CallbackServerContext* context,
                                                 const grpc::ByteBuffer* request,
                                                 grpc::ByteBuffer* response) {
  return ListCall::Start(context, response, "the answer", [&](ListCall::Done done) {
    return pipeline::ChangeStreamCall::StartList(
        pipeline, CallOriginOf(context),
        ParseRequest<dvexport::v1::ListChangeStreamsRequest>(request), std::move(done));
  });
}

grpc::ServerUnaryReactor* StartDropChangeStream(pipeline::ExportPipeline* pipeline,
                                                grpc::CallbackServerContext* context,
                                                const grpc::ByteBuffer* request,
                                                grpc::ByteBuffer* response) {
  return DropCall::Start(context, response, "the answer", [&](DropCall::Done done) {
    return pipeline::ChangeStreamCall::StartDrop(
        pipeline, CallOriginOf(context),
        ParseRequest<dvexport::v1::DropChangeStreamRequest>(request), std::move(done));
  });
}

}  // namespace dvexport::grpc_door
