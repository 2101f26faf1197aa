#ifndef DVEXPORT_SERVICE_GRPC_EXPORT_CALL_H_
#define DVEXPORT_SERVICE_GRPC_EXPORT_CALL_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "service/pipeline/export.h"
#include "service/pipeline/export_pipeline.h"

namespace dvexport::grpc_door {

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

}  // namespace dvexport::grpc_door

#endif  // DVEXPORT_SERVICE_GRPC_EXPORT_CALL_H_
