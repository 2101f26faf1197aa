#include "service/pipeline/pending_export.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "service/pipeline/export_pipeline.h"

namespace dvexport::pipeline {
namespace {

// An export waiting for the version, then the export it started: every call goes to that one.
// It is that export's consumer, and hands its Ready on to the door's once the door can reach it.
class PendingExport final : public Export, public ExportConsumer {
 public:
  PendingExport(Dhis2VersionGate* gate, ExportConsumer* consumer,
                std::function<std::unique_ptr<Export>(ExportConsumer*)> start)
      : gate_(gate), consumer_(consumer), start_(std::move(start)) {}

  ~PendingExport() override {
    // A door keeps an export until kDone, which a waiting one never reaches: this only guards.
    if (ticket_ != 0) gate_->Abandon(ticket_);
  }

  void Wait() {
    ticket_ = gate_->WhenSettled([this] { StartInner(); });
  }

  Next TakeNext(Chunk* chunk) override {
    Export* inner = Started();
    // The started export's first Ready follows.
    return inner == nullptr ? Next::kEmpty : inner->TakeNext(chunk);
  }

  void Sent(size_t bytes) override { Started()->Sent(bytes); }

  void Cancel(absl::Status why) override {
    bool waiting = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ != State::kStarted) {
        if (!cancelled_.has_value()) cancelled_ = why;
        waiting = state_ == State::kWaiting;
      }
    }
    if (Export* inner = Started(); inner != nullptr) {
      inner->Cancel(std::move(why));
      return;
    }
    // Taken back before the version was settled: started now, and cancelled as it starts.
    // Otherwise the thread settling it starts it, and cancels it then.
    if (waiting && gate_->Abandon(ticket_)) StartInner();
  }

  absl::Status status() const override { return inner_->status(); }
  std::string change_token() const override {
    Export* inner = Started();
    return inner == nullptr ? std::string() : inner->change_token();
  }

  // ExportConsumer, for the started export.
  void Ready() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ != State::kStarted) {
        // From inside "start_": the door learns of it once it can reach the export.
        ready_pending_ = true;
        return;
      }
    }
    consumer_->Ready();
  }
  void Abort(const absl::Status& status) override { consumer_->Abort(status); }

 private:
  enum class State { kWaiting, kStarting, kStarted };

  void StartInner() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ != State::kWaiting) return;
      state_ = State::kStarting;
    }
    std::unique_ptr<Export> inner = start_(this);
    std::optional<absl::Status> cancelled;
    bool ready = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      inner_ = std::move(inner);
      state_ = State::kStarted;
      cancelled.swap(cancelled_);
      ready = ready_pending_;
    }
    if (cancelled.has_value()) inner_->Cancel(*std::move(cancelled));
    if (ready) consumer_->Ready();
  }

  // The started export, or null.
  Export* Started() const {
    std::lock_guard<std::mutex> lock(mu_);
    return state_ == State::kStarted ? inner_.get() : nullptr;
  }

  Dhis2VersionGate* const gate_;
  ExportConsumer* const consumer_;
  const std::function<std::unique_ptr<Export>(ExportConsumer*)> start_;
  uint64_t ticket_ = 0;  // set before the door can call anything but TakeNext

  mutable std::mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kWaiting;
  std::unique_ptr<Export> inner_;  // set once, under mu_, with state_ kStarted
  std::optional<absl::Status> cancelled_ ABSL_GUARDED_BY(mu_);
  bool ready_pending_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

std::unique_ptr<Export> StartWhenDhis2VersionKnown(
    ExportPipeline* pipeline, ExportConsumer* consumer,
    std::function<std::unique_ptr<Export>(ExportConsumer*)> start) {
  if (pipeline == nullptr || pipeline->version_gate().Known()) {
    return start(consumer);
  }
  auto pending =
      std::make_unique<PendingExport>(&pipeline->version_gate(), consumer, std::move(start));
  pending->Wait();
  return pending;
}

}  // namespace dvexport::pipeline
