#include "service/server/export_slots.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dvexport::server {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start, Clock::time_point now) {
  return std::chrono::duration<double>(now - start).count();
}

// "deadline" (the call's, on the system clock) on the steady clock; far away when there is none.
Clock::time_point SteadyDeadline(std::chrono::system_clock::time_point deadline,
                                 Clock::time_point now) {
  const auto system_now = std::chrono::system_clock::now();
  if (deadline >= std::chrono::system_clock::time_point::max() - std::chrono::hours(24 * 365)) {
    return Clock::time_point::max();
  }
  if (deadline <= system_now) return now;
  return now + std::chrono::duration_cast<Clock::duration>(deadline - system_now);
}

}  // namespace

ExportSlots::ExportSlots(const ExportSlotOptions& options, SlotObserver* observer)
    : options_(options), observer_(observer), timer_(&ExportSlots::RunTimer, this) {}

ExportSlots::~ExportSlots() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  timer_wake_.notify_all();
  timer_.join();
}

absl::Status ExportSlots::Join(Ticket* ticket, std::chrono::system_clock::time_point deadline,
                               std::function<void(absl::Status)> admitted) {
  const Clock::time_point now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ticket->state == Ticket::State::kLeft) {
      // Left (cancelled) before it asked.
      admitted = nullptr;
    } else if (running_ < options_.slots && waiting_.empty()) {
      ++running_;
      ticket->state = Ticket::State::kHolding;
    } else if (static_cast<int>(waiting_.size()) < options_.max_queued &&
               options_.max_wait.count() > 0) {
      const Clock::time_point by_wait = now + options_.max_wait;
      const Clock::time_point by_deadline = SteadyDeadline(deadline, now);
      ticket->state = Ticket::State::kWaiting;
      ticket->queued_at = now;
      ticket->expires_at = std::min(by_wait, by_deadline);
      ticket->expires_at_deadline = by_deadline <= by_wait;
      ticket->admitted = std::move(admitted);
      ticket->position = waiting_.insert(waiting_.end(), ticket);
      // The timer may have to wake earlier than it planned.
      timer_wake_.notify_all();
      return absl::OkStatus();
    } else {
      if (observer_ != nullptr) observer_->SlotRefused(SlotRefusal::kQueueFull);
      return absl::ResourceExhaustedError(
          absl::StrCat("too many exports: ", options_.slots, " running and ", waiting_.size(),
                       " waiting (--max_concurrent_exports ", options_.slots,
                       ", --max_queued_exports ", options_.max_queued, "); retry later"));
    }
  }
  if (admitted == nullptr) {
    return absl::CancelledError("the call was cancelled before it was given an export slot");
  }
  if (observer_ != nullptr) observer_->SlotWaited(0);
  admitted(absl::OkStatus());
  return absl::OkStatus();
}

void ExportSlots::Leave(Ticket* ticket) {
  std::vector<std::function<void(absl::Status)>> granted;
  std::function<void(absl::Status)> cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    switch (ticket->state) {
      case Ticket::State::kHolding:
        --running_;
        GrantLocked(&granted);
        break;
      case Ticket::State::kWaiting:
        waiting_.erase(ticket->position);
        cancelled = std::move(ticket->admitted);
        break;
      case Ticket::State::kNone:
      case Ticket::State::kLeft:
        break;
    }
    ticket->state = Ticket::State::kLeft;
  }
  if (cancelled) {
    cancelled(absl::CancelledError("the call was cancelled while it waited for an export slot"));
  }
  for (auto& admitted : granted) admitted(absl::OkStatus());
}

void ExportSlots::GrantLocked(std::vector<std::function<void(absl::Status)>>* granted) {
  const Clock::time_point now = Clock::now();
  while (running_ < options_.slots && !waiting_.empty()) {
    Ticket* next = waiting_.front();
    waiting_.pop_front();
    ++running_;
    next->state = Ticket::State::kHolding;
    if (observer_ != nullptr) observer_->SlotWaited(SecondsSince(next->queued_at, now));
    granted->push_back(std::move(next->admitted));
  }
}

int ExportSlots::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

int ExportSlots::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(waiting_.size());
}

void ExportSlots::RunTimer() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    Clock::time_point next = Clock::time_point::max();
    for (const Ticket* ticket : waiting_) next = std::min(next, ticket->expires_at);
    if (next == Clock::time_point::max()) {
      timer_wake_.wait(lock);
    } else {
      timer_wake_.wait_until(lock, next);
    }
    const Clock::time_point now = Clock::now();
    std::vector<std::pair<std::function<void(absl::Status)>, absl::Status>> expired;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      Ticket* ticket = *it;
      if (ticket->expires_at > now) {
        ++it;
        continue;
      }
      it = waiting_.erase(it);
      ticket->state = Ticket::State::kLeft;
      const int64_t waited_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - ticket->queued_at).count();
      absl::Status why =
          ticket->expires_at_deadline
              ? absl::DeadlineExceededError(absl::StrCat(
                    "the call's deadline passed after ", waited_ms,
                    " ms waiting for an export slot (", options_.slots, " exports running)"))
              : absl::ResourceExhaustedError(
                    absl::StrCat("no export slot within ", options_.max_wait.count(), " ms (",
                                 options_.slots, " exports running, --max_queue_wait_ms ",
                                 options_.max_wait.count(), "); retry later"));
      if (observer_ != nullptr) {
        observer_->SlotRefused(ticket->expires_at_deadline ? SlotRefusal::kDeadline
                                                           : SlotRefusal::kMaxWait);
      }
      expired.emplace_back(std::move(ticket->admitted), std::move(why));
    }
    if (expired.empty()) continue;
    lock.unlock();
    for (auto& [admitted, why] : expired) admitted(std::move(why));
    lock.lock();
  }
}

}  // namespace dvexport::server
