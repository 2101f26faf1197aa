#include "service/http/version_wait.h"

#include "service/dhis2/dhis2_version.h"
#include "service/pipeline/export.h"

namespace dvexport::http {

bool VersionWait::Waiting(pipeline::ExportPipeline* pipeline, bool stopping) {
  const auto now = std::chrono::steady_clock::now();
  if (settled_ == nullptr) {
    settled_ = pipeline::AwaitDhis2Version(pipeline);
    if (settled_ == nullptr) return false;
    until_ = now + kMaxWait;
  }
  if (settled_->load() || stopping || now >= until_) {
    settled_.reset();
    return false;
  }
  return true;
}

int RoutesVersion(pipeline::ExportPipeline* pipeline) {
  const int served = pipeline::ServedDhis2Version(pipeline);
  return served != 0 ? served : dhis2::kNewestServed;
}

}  // namespace dvexport::http
