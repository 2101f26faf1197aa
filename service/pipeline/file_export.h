#ifndef DVEXPORT_SERVICE_PIPELINE_FILE_EXPORT_H_
#define DVEXPORT_SERVICE_PIPELINE_FILE_EXPORT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/pipeline/export.h"

namespace dvexport::pipeline {

// ExportFile (Export::StartFile): the file "request" asks for (JSON, pretty JSON, CSV, XML or
// ADX, compressed with gzip, zip or zstd if asked) as kFileData chunks, then a kFileTrailer with
// its lengths, CRC-32s and change token; or the refusal of the request or of its file options
// (format, compression, level, ADX's rules) before the first chunk.
std::unique_ptr<Export> StartFileExport(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportFileRequest>& request, ExportConsumer* consumer);

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_FILE_EXPORT_H_
