#ifndef DVEXPORT_SERVICE_GRPC_EXPORT_SERVICE_H_
#define DVEXPORT_SERVICE_GRPC_EXPORT_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>

#include "dvexport/v1/export.grpc.pb.h"
#include "service/pipeline/export_pipeline.h"

namespace dvexport::grpc_door {

// The generated service with every method taking and sending raw bytes (grpc::ByteBuffer: the
// service parses requests itself, saying what is wrong with a malformed one (CheckRequestBytes:
// the field that is not UTF-8, the byte and field of broken wire format), and serializes its
// messages itself, see file_export.h and batch_stream_export.h; clients see the same methods and
// bytes), all on gRPC's callback API.
using DataValueExportCallbackBase = dvexport::v1::DataValueExport::WithRawCallbackMethod_ExportFile<
    dvexport::v1::DataValueExport::WithRawCallbackMethod_StreamDataValues<
        dvexport::v1::DataValueExport::WithRawCallbackMethod_CountDataValues<
            dvexport::v1::DataValueExport::WithRawCallbackMethod_ListChangeStreams<
                dvexport::v1::DataValueExport::WithRawCallbackMethod_DropChangeStream<
                    dvexport::v1::DataValueExport::Service>>>>>;

// The DataValueExport gRPC service: the gRPC door of the export pipeline. Every call runs in its
// own READ ONLY, REPEATABLE READ transaction (a db::ReadSession) on pooled connections, on threads
// of its own: no gRPC thread waits for the database.
class DataValueExportService final : public DataValueExportCallbackBase {
 public:
  // "*pipeline" must outlive the service. Constructed once the pipeline and all it uses (its
  // pool, log, metrics) are built, before the server starts: see Enter.
  explicit DataValueExportService(pipeline::ExportPipeline* pipeline) : pipeline_(pipeline) {
    built_.store(true, std::memory_order_release);
  }

  grpc::ServerWriteReactor<grpc::ByteBuffer>* ExportFile(grpc::CallbackServerContext* context,
                                                         const grpc::ByteBuffer* request) override;

  grpc::ServerWriteReactor<grpc::ByteBuffer>* StreamDataValues(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;

  grpc::ServerUnaryReactor* CountDataValues(grpc::CallbackServerContext* context,
                                            const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) override;

  grpc::ServerUnaryReactor* ListChangeStreams(grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* request,
                                              grpc::ByteBuffer* response) override;

  grpc::ServerUnaryReactor* DropChangeStream(grpc::CallbackServerContext* context,
                                             const grpc::ByteBuffer* request,
                                             grpc::ByteBuffer* response) override;

  // Exports holding a slot now, and waiting for one (of both doors).
  int active_exports() const { return pipeline_->active_exports(); }
  int queued_exports() const { return pipeline_->queued_exports(); }

  // Calls alive now, of both doors (ended calls have joined their threads and freed their
  // compressors).
  int live_calls() const { return pipeline_->live_calls(); }

  // Exports that were read with more than one connection so far.
  int64_t sliced_exports() const { return pipeline_->sliced_exports(); }

  // The pipeline's authenticator; null with AuthMode::kNone.
  const auth::Authenticator* authenticator() const { return pipeline_->authenticator(); }

 private:
  // Called first by every method: its acquire pairs with the constructor's release, so that what
  // was built before the service happens before every call and every thread a call starts, in a
  // way ThreadSanitizer sees. gRPC hands a call to one of its threads inside Debian's
  // uninstrumented libgrpc, where TSan sees no synchronization: without this, a count's thread
  // (started by the handler's thread) locking the connection pool's mutex for the first time was
  // reported as a race with the pool's construction on the main thread (PgBouncerTest). No cost
  // worth naming: one load per call.
  void Enter() const { static_cast<void>(built_.load(std::memory_order_acquire)); }

  pipeline::ExportPipeline* const pipeline_;
  std::atomic<bool> built_{false};
};

}  // namespace dvexport::grpc_door

#endif  // DVEXPORT_SERVICE_GRPC_EXPORT_SERVICE_H_
