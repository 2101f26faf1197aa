#ifndef DVEXPORT_SERVICE_PIPELINE_PENDING_EXPORT_H_
#define DVEXPORT_SERVICE_PIPELINE_PENDING_EXPORT_H_

#include <functional>
#include <memory>

#include "service/pipeline/export.h"

namespace dvexport::pipeline {

class ExportPipeline;

// Starts an export with "start" (given the consumer the export must report to) once the
// database's DHIS2 is known (Dhis2VersionGate): at once when it is, else an Export that waits for
// it and then runs the one "start" made. Cancelled while it waits, the export starts at once
// (the version unknown), and is cancelled: it is logged and ends as every cancelled call does.
std::unique_ptr<Export> StartWhenDhis2VersionKnown(
    ExportPipeline* pipeline, ExportConsumer* consumer,
    std::function<std::unique_ptr<Export>(ExportConsumer*)> start);

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_PENDING_EXPORT_H_
