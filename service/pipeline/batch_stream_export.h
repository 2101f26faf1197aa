#ifndef DVEXPORT_SERVICE_PIPELINE_BATCH_STREAM_EXPORT_H_
#define DVEXPORT_SERVICE_PIPELINE_BATCH_STREAM_EXPORT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/pipeline/export.h"

namespace dvexport::pipeline {

// StreamDataValues (Export::StartStream): the typed values of "request" as serialized
// DataValueBatch chunks of at most PipelineOptions::batch_bytes (one value larger than that makes
// a batch of its own), the last with last = true and the change token; or the request's refusal.
std::unique_ptr<Export> StartBatchStreamExport(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportRequest>& request, ExportConsumer* consumer);

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_BATCH_STREAM_EXPORT_H_
