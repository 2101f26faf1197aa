#include "service/pipeline/export.h"

#include <optional>
#include <utility>

#include "service/db/connection_pool.h"
#include "service/pipeline/batch_stream_export.h"
#include "service/pipeline/export_pipeline.h"
#include "service/pipeline/file_export.h"

namespace dvexport::pipeline {

std::unique_ptr<Export> Export::StartFile(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportFileRequest>& request, ExportConsumer* consumer) {
  return StartFileExport(pipeline, std::move(origin), request, consumer);
}

std::unique_ptr<Export> Export::StartStream(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportRequest>& request, ExportConsumer* consumer) {
  return StartBatchStreamExport(pipeline, std::move(origin), request, consumer);
}

int ServedDhis2Version(ExportPipeline* pipeline) {
  if (pipeline == nullptr || pipeline->pool() == nullptr) return 0;
  const std::optional<dhis2::Dhis2Version> version = pipeline->pool()->dhis2_version();
  return version.has_value() ? version->served : 0;
}

absl::Status ClientGoneError() {
  return absl::CancelledError("the client went away; the export was stopped");
}

absl::Status CallCancelledError() {
  return absl::CancelledError("the call was cancelled (by the client, its deadline or shutdown)");
}

}  // namespace dvexport::pipeline
