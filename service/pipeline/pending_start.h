#ifndef DVEXPORT_SERVICE_PIPELINE_PENDING_START_H_
#define DVEXPORT_SERVICE_PIPELINE_PENDING_START_H_

// What a call that waits for the database's DHIS2 (Dhis2VersionGate) does, whatever it starts then
// (an export: pending_export.h; a count: count.cc): its ticket at the gate, the start once the
// gate settles, and a cancellation, held while it waits and handed to what it started. Cancelled
// while it waits, it starts at once (the version unknown), and what it started is cancelled as it
// starts: it is logged and ends as every cancelled call does.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "service/pipeline/dhis2_version_gate.h"

namespace dvexport::pipeline {

// "Started" is what "start" makes: it has Cancel(absl::Status).
template <typename Started>
class PendingStart {
 public:
  // "start" runs once, on the thread that settles the gate or on the one that cancels; then
  // "held" runs if HoldUntilStarted held something meanwhile.
  PendingStart(Dhis2VersionGate* gate, std::function<std::unique_ptr<Started>()> start,
               std::function<void()> held = {})
      : gate_(gate), start_(std::move(start)), held_(std::move(held)) {}

  ~PendingStart() {
    // A door keeps its call until it ends, which a waiting one never does: this only guards.
    if (ticket_ != 0) gate_->Abandon(ticket_);
  }

  PendingStart(const PendingStart&) = delete;
  PendingStart& operator=(const PendingStart&) = delete;

  // Takes a ticket at the gate; before anything else is called.
  void Wait() {
    ticket_ = gate_->WhenSettled([this] { Start(); });
  }

  // What was started, or null while it waits or starts.
  Started* started() const {
    std::lock_guard<std::mutex> lock(mu_);
    return state_ == State::kStarted ? started_.get() : nullptr;
  }

  void Cancel(absl::Status why) {
    bool waiting = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ != State::kStarted) {
        if (!cancelled_.has_value()) cancelled_ = why;
        waiting = state_ == State::kWaiting;
      }
    }
    if (Started* running = started(); running != nullptr) {
      running->Cancel(std::move(why));
      return;
    }
    // Taken back before the gate settled: started now, and cancelled as it starts. Otherwise the
    // thread settling it starts it, and cancels it then.
    if (waiting && gate_->Abandon(ticket_)) Start();
  }

  // For a notice from what is starting (its consumer's Ready, from inside "start"): true if it is
  // held until "start" returned ("held" then runs), false once started (the caller passes it on).
  bool HoldUntilStarted() {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kStarted) return false;
    held_pending_ = true;
    return true;
  }

 private:
  enum class State { kWaiting, kStarting, kStarted };

  void Start() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state_ != State::kWaiting) return;
      state_ = State::kStarting;
    }
    std::unique_ptr<Started> started = start_();
    std::optional<absl::Status> cancelled;
    bool held = false;
    Started* running;
    {
      std::lock_guard<std::mutex> lock(mu_);
      started_ = std::move(started);
      running = started_.get();
      state_ = State::kStarted;
      cancelled.swap(cancelled_);
      held = held_pending_;
    }
    if (cancelled.has_value()) running->Cancel(*std::move(cancelled));
    if (held && held_) held_();
  }

  Dhis2VersionGate* const gate_;
  const std::function<std::unique_ptr<Started>()> start_;
  const std::function<void()> held_;
  uint64_t ticket_ = 0;  // set by Wait, before anything else is called

  mutable std::mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kWaiting;
  std::unique_ptr<Started> started_ ABSL_GUARDED_BY(mu_);  // set once, with state_ kStarted
  std::optional<absl::Status> cancelled_ ABSL_GUARDED_BY(mu_);
  bool held_pending_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_PENDING_START_H_
