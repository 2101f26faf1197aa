#include "service/pipeline/call_scope.h"

#include "service/pipeline/call_log.h"
#include "service/pipeline/export_pipeline.h"

namespace dvexport::pipeline {

CallScope::CallScope(ExportPipeline* pipeline, const CallOrigin& origin, std::string rpc)
    : pipeline_(pipeline),
      peer_(PeerName(origin.peer)),
      started_(std::chrono::steady_clock::now()) {
  record_.rpc = std::move(rpc);
  record_.transport = origin.transport;
  pipeline_->CallStarted();
}

CallScope::~CallScope() {
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    for (std::thread& thread : threads_) {
      if (!thread.joinable()) continue;
      if (thread.get_id() == std::this_thread::get_id()) {
        thread.detach();
      } else {
        thread.join();
      }
    }
  }
  pipeline_->CallEnded();
}

double CallScope::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void CallScope::FirstByte() {
  if (record_.first_byte_seconds < 0) record_.first_byte_seconds = Elapsed();
}

void CallScope::Finish(const absl::Status& status) { Report(status, Elapsed()); }

void CallScope::FinishAnswer(const absl::Status& status, int64_t bytes, int64_t values) {
  const double seconds = Elapsed();
  if (status.ok()) {
    record_.first_byte_seconds = seconds;
    record_.values = values;
    record_.bytes = bytes;
  }
  Report(status, seconds);
}

void CallScope::Report(const absl::Status& status, double seconds) {
  if (finished_.exchange(true)) return;
  record_.seconds = seconds;
  record_.code = absl::StatusCodeToString(status.code());
  if (pipeline_->log() != nullptr) pipeline_->log()->Write(record_, peer_, summary_, status);
}

}  // namespace dvexport::pipeline
