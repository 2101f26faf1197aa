#include "service/pipeline/export.h"

#include <optional>
#include <utility>

#include "service/db/connection_pool.h"
#include "service/pipeline/batch_stream_export.h"
#include "service/pipeline/export_pipeline.h"
#include "service/pipeline/file_export.h"
#include "service/pipeline/pending_export.h"

namespace dvexport::pipeline {

std::unique_ptr<Export> Export::StartFile(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportFileRequest>& request, ExportConsumer* consumer) {
  return StartWhenDhis2VersionKnown(
      pipeline, consumer, [pipeline, origin = std::move(origin), request](ExportConsumer* to) {
        return StartFileExport(pipeline, origin, request, to);
      });
}

std::unique_ptr<Export> Export::StartStream(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportRequest>& request, ExportConsumer* consumer) {
  return StartWhenDhis2VersionKnown(
      pipeline, consumer, [pipeline, origin = std::move(origin), request](ExportConsumer* to) {
        return StartBatchStreamExport(pipeline, origin, request, to);
      });
}

int ServedDhis2Version(ExportPipeline* pipeline) {
  if (pipeline == nullptr || pipeline->pool() == nullptr) return 0;
  const std::optional<dhis2::Dhis2Version> version = pipeline->pool()->dhis2_version();
  return version.has_value() ? version->served : 0;
}

std::shared_ptr<const std::atomic<bool>> AwaitDhis2Version(ExportPipeline* pipeline) {
  if (pipeline == nullptr || pipeline->version_gate().Known()) {
    return nullptr;
  }
  auto settled = std::make_shared<std::atomic<bool>>(false);
  pipeline->version_gate().WhenSettled([settled] { settled->store(true); });
  return settled;
}

absl::Status ClientGoneError() {
  return absl::CancelledError("the client went away; the export was stopped");
}

absl::Status CallCancelledError() {
  return absl::CancelledError("the call was cancelled (by the client, its deadline or shutdown)");
}

}  // namespace dvexport::pipeline
