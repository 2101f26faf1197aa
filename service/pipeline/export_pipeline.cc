#include "service/pipeline/export_pipeline.h"

#include "service/db/connection_pool.h"
#include "service/pipeline/change_stream_monitor.h"

namespace dvexport::pipeline {

ChangeStreamMonitorOptions PipelineOptions::change_streams() const {
  return {.publication = change_publication,
          .interval = change_stream_poll,
          .warn_wal_bytes = change_stream_warn_wal_bytes};
}

ExportPipeline::ExportPipeline(db::ConnectionPool* pool, const PipelineOptions& options,
                               CallLog* log, SlotObserver* slot_observer,
                               auth::AuthObserver* auth_observer,
                               ChangeStreamObserver* change_stream_observer)
    : pool_(pool),
      options_(options),
      slots_(std::make_unique<ExportSlots>(options.slots(), slot_observer)),
      log_(log),
      change_streams_(std::make_unique<ChangeStreamMonitor>(
          pool, options.session(), options.change_streams(), change_stream_observer, log)),
      version_gate_([pool] { return pool == nullptr || pool->dhis2_version().has_value(); }) {
  if (options.auth == AuthMode::kDhis2) {
    auth::AuthenticatorOptions authentication = options.authentication;
    // Its database waits as bounded as an export's (and never past the call's deadline).
    authentication.session = options.session();
    authenticator_ = std::make_unique<auth::Authenticator>(pool, authentication, auth_observer);
  }
}

ExportPipeline::~ExportPipeline() = default;

void ExportPipeline::CallStarted() {
  std::lock_guard<std::mutex> lock(calls_mu_);
  ++live_calls_;
}

void ExportPipeline::CallEnded() {
  std::lock_guard<std::mutex> lock(calls_mu_);
  if (--live_calls_ == 0) calls_ended_.notify_all();
}

bool ExportPipeline::WaitForCalls(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(calls_mu_);
  return calls_ended_.wait_for(lock, timeout, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(calls_mu_) {
    return live_calls_ == 0;
  });
}

int ExportPipeline::live_calls() const {
  std::lock_guard<std::mutex> lock(calls_mu_);
  return live_calls_;
}

}  // namespace dvexport::pipeline
