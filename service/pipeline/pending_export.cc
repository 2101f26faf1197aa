#include "service/pipeline/pending_export.h"

#include <string>
#include <utility>

#include "service/pipeline/export_pipeline.h"
#include "service/pipeline/pending_start.h"

namespace dvexport::pipeline {
namespace {

// An export waiting for the version, then the export it started: every call goes to that one.
// It is that export's consumer, and hands its Ready on to the door's once the door can reach it.
class PendingExport final : public Export, public ExportConsumer {
 public:
  PendingExport(Dhis2VersionGate* gate, ExportConsumer* consumer,
                std::function<std::unique_ptr<Export>(ExportConsumer*)> start)
      : consumer_(consumer),
        pending_(
            gate, [this, start = std::move(start)] { return start(this); },
            [this] { consumer_->Ready(); }) {}

  void Wait() { pending_.Wait(); }

  Next TakeNext(Chunk* chunk) override {
    Export* started = pending_.started();
    // The started export's first Ready follows.
    return started == nullptr ? Next::kEmpty : started->TakeNext(chunk);
  }

  void Sent(size_t bytes) override { pending_.started()->Sent(bytes); }

  void Cancel(absl::Status why) override { pending_.Cancel(std::move(why)); }

  absl::Status status() const override {
    const Export* started = pending_.started();
    return started == nullptr ? absl::UnavailableError("the export has not started")
                              : started->status();
  }
  std::string change_token() const override {
    const Export* started = pending_.started();
    return started == nullptr ? std::string() : started->change_token();
  }

  // ExportConsumer, for the started export: a Ready from inside its start reaches the door once
  // the door can reach the export.
  void Ready() override {
    if (!pending_.HoldUntilStarted()) consumer_->Ready();
  }
  void Abort(const absl::Status& status) override { consumer_->Abort(status); }

 private:
  ExportConsumer* const consumer_;
  PendingStart<Export> pending_;
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
