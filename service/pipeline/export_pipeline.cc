#include "service/pipeline/export_pipeline.h"

#include <algorithm>
#include <chrono>

#include "service/db/connection_pool.h"
#include "service/db/read_session.h"
#include "service/pipeline/change_stream_monitor.h"

namespace dvexport::pipeline {

ChangeStreamMonitorOptions PipelineOptions::change_streams() const {
  return {.publication = change_publication,
          .interval = change_stream_poll,
          .warn_wal_bytes = change_stream_warn_wal_bytes};
}

namespace {

// The version gate's one attempt to learn the database's DHIS2 version takes at most this (the
// health prober's bound).
constexpr std::chrono::seconds kDhis2VersionAttempt{5};

}  // namespace

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
      version_gate_([pool] { return pool == nullptr || pool->dhis2_version().has_value(); },
                    [this] { ReadDhis2Version(kDhis2VersionAttempt); },
                    [this] { StopLearningDhis2Version(); }) {
  if (options.auth == AuthMode::kDhis2) {
    auth::AuthenticatorOptions authentication = options.authentication;
    // Its database waits as bounded as an export's (and never past the call's deadline).
    authentication.session = options.session();
    authenticator_ = std::make_unique<auth::Authenticator>(pool, authentication, auth_observer);
  }
}

ExportPipeline::~ExportPipeline() = default;

void ExportPipeline::ReadDhis2Version(std::chrono::milliseconds timeout) {
  if (pool_ == nullptr) return;
  db::ReadSession session(pool_, options_.session(), std::chrono::system_clock::now() + timeout);
  {
    std::lock_guard<std::mutex> lock(learning_mu_);
    if (learning_stopped_) return;
    learning_.push_back(&session);
  }
  session
      .Lookup("reading the database's DHIS2 version",
              [](pqxx::transaction_base&) { return absl::OkStatus(); })
      .IgnoreError();
  std::lock_guard<std::mutex> lock(learning_mu_);
  learning_.erase(std::find(learning_.begin(), learning_.end(), &session));
}

void ExportPipeline::StopLearningDhis2Version() {
  std::lock_guard<std::mutex> lock(learning_mu_);
  learning_stopped_ = true;
  for (db::ReadSession* session : learning_) session->Cancel();
}

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
