#include "service/pipeline/export_slots.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dvexport::pipeline {
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

// 0, or more than the slots (the queue): no cap of its own.
int ResolvedCap(int cap, int whole) { return cap <= 0 || cap > whole ? whole : cap; }

}  // namespace

ExportSlots::ExportSlots(const ExportSlotOptions& options, SlotObserver* observer)
    : options_(options),
      max_per_user_(ResolvedCap(options.max_per_user, options.slots)),
      max_queued_per_user_(ResolvedCap(options.max_queued_per_user, options.max_queued)),
      observer_(observer),
      timer_(&ExportSlots::RunTimer, this) {}

ExportSlots::~ExportSlots() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  timer_wake_.notify_all();
  timer_.join();
}

absl::Status ExportSlots::Join(Ticket* ticket, std::string user,
                               std::chrono::system_clock::time_point deadline,
                               std::function<void(absl::Status)> admitted,
                               std::function<void(bool)> contended) {
  const Clock::time_point now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ticket->state == Ticket::State::kLeft) {
      // Left (cancelled) before it asked.
      admitted = nullptr;
    } else {
      auto [entry, added] = users_.try_emplace(user);
      User* const mine = &entry->second;
      if (added) mine->name = std::move(user);
      // After every grant no waiter could take a free slot (see GrantLocked): a newcomer takes
      // one only if its user is under its cap and has no waiter of its own ahead of it.
      const bool slot_free = running_ < options_.slots;
      if (slot_free && mine->running < max_per_user_ && mine->waiting.empty()) {
        HoldLocked(ticket, mine);
        ticket->contention = std::move(contended);
        // (A new holder is not contended: every waiter's user is at its cap.)
      } else if (static_cast<int>(waiting_.size()) < options_.max_queued &&
                 static_cast<int>(mine->waiting.size()) < max_queued_per_user_ &&
                 options_.max_wait.count() > 0) {
        if (slot_free && observer_ != nullptr) observer_->SlotUserCapWait();
        const Clock::time_point by_wait = now + options_.max_wait;
        const Clock::time_point by_deadline = SteadyDeadline(deadline, now);
        ticket->state = Ticket::State::kWaiting;
        ticket->queued_at = now;
        ticket->expires_at = std::min(by_wait, by_deadline);
        ticket->expires_at_deadline = by_deadline <= by_wait;
        ticket->admitted = std::move(admitted);
        ticket->contention = std::move(contended);
        ticket->user = mine;
        ticket->position = waiting_.insert(waiting_.end(), ticket);
        if (mine->waiting.empty()) mine->turn = turns_.insert(turns_.end(), mine);
        ticket->user_position = mine->waiting.insert(mine->waiting.end(), ticket);
        UpdateContentionLocked();
        // The timer may have to wake earlier than it planned.
        timer_wake_.notify_all();
        return absl::OkStatus();
      } else {
        const bool queue_full = static_cast<int>(waiting_.size()) >= options_.max_queued ||
                                options_.max_wait.count() <= 0;
        const int user_waiting = static_cast<int>(mine->waiting.size());
        ForgetIfIdleLocked(mine);
        if (observer_ != nullptr) {
          observer_->SlotRefused(queue_full ? SlotRefusal::kQueueFull
                                            : SlotRefusal::kUserQueueFull);
        }
        if (queue_full) {
          return absl::ResourceExhaustedError(
              absl::StrCat("too many exports: ", running_, " running and ", waiting_.size(),
                           " waiting (--max_concurrent_exports ", options_.slots,
                           ", --max_queued_exports ", options_.max_queued, "); retry later"));
        }
        return absl::ResourceExhaustedError(
            absl::StrCat("too many exports of this caller: ", user_waiting,
                         " of them waiting already (--max_queued_exports_per_user ",
                         max_queued_per_user_, "); retry later"));
      }
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
    User* const user = ticket->user;
    switch (ticket->state) {
      case Ticket::State::kHolding:
        --running_;
        --user->running;
        user->holding.erase(ticket->user_position);
        GrantLocked(&granted);
        ForgetIfIdleLocked(user);
        UpdateContentionLocked();
        break;
      case Ticket::State::kWaiting:
        UnqueueLocked(ticket);
        ForgetIfIdleLocked(user);
        cancelled = std::move(ticket->admitted);
        UpdateContentionLocked();
        break;
      case Ticket::State::kNone:
      case Ticket::State::kLeft:
        break;
    }
    ticket->state = Ticket::State::kLeft;
    ticket->user = nullptr;
    ticket->contention = nullptr;
  }
  if (cancelled) {
    cancelled(absl::CancelledError("the call was cancelled while it waited for an export slot"));
  }
  for (auto& admitted : granted) admitted(absl::OkStatus());
}

void ExportSlots::HoldLocked(Ticket* ticket, User* user) {
  ++running_;
  ++user->running;
  ticket->state = Ticket::State::kHolding;
  ticket->user = user;
  ticket->contended = false;
  ticket->user_position = user->holding.insert(user->holding.end(), ticket);
}

void ExportSlots::UnqueueLocked(Ticket* ticket) {
  User* const user = ticket->user;
  waiting_.erase(ticket->position);
  user->waiting.erase(ticket->user_position);
  if (user->waiting.empty()) turns_.erase(user->turn);
}

void ExportSlots::ForgetIfIdleLocked(User* user) {
  if (user->running > 0 || !user->waiting.empty()) return;
  users_.erase(users_.find(user->name));
}

void ExportSlots::GrantLocked(std::vector<std::function<void(absl::Status)>>* granted) {
  const Clock::time_point now = Clock::now();
  while (running_ < options_.slots) {
    // The waiting user under its cap that holds the fewest slots, the first in turn among equals.
    User* user = nullptr;
    for (User* candidate : turns_) {
      if (candidate->running >= max_per_user_) continue;
      if (user == nullptr || candidate->running < user->running) user = candidate;
    }
    if (user == nullptr) break;
    Ticket* const next = user->waiting.front();
    UnqueueLocked(next);
    // Served: to the back of the turns, if it still waits.
    if (!user->waiting.empty()) turns_.splice(turns_.end(), turns_, user->turn);
    HoldLocked(next, user);
    if (observer_ != nullptr) observer_->SlotWaited(SecondsSince(next->queued_at, now));
    granted->push_back(std::move(next->admitted));
  }
}

void ExportSlots::UpdateContentionLocked() {
  // The waiting users the next free slot could go to: none, one (which), or more.
  int takers = 0;
  const User* taker = nullptr;
  for (const User* user : turns_) {
    if (user->running >= max_per_user_) continue;
    taker = user;
    if (++takers == 2) break;
  }
  for (auto& [name, user] : users_) {
    const bool contended = takers >= 2 || (takers == 1 && taker != &user);
    for (Ticket* ticket : user.holding) {
      if (ticket->contended == contended) continue;
      ticket->contended = contended;
      if (ticket->contention) ticket->contention(contended);
    }
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

int ExportSlots::users() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(users_.size());
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
      ++it;
      User* const user = ticket->user;
      // What the wait was for: a slot at all, or one its user may take.
      const std::string running =
          user->running >= max_per_user_
              ? absl::StrCat(running_, " exports running, ", user->running,
                             " of them this caller's (--max_exports_per_user ", max_per_user_, ")")
              : absl::StrCat(running_, " exports running");
      UnqueueLocked(ticket);
      ForgetIfIdleLocked(user);
      ticket->state = Ticket::State::kLeft;
      ticket->user = nullptr;
      ticket->contention = nullptr;
      const int64_t waited_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - ticket->queued_at).count();
      absl::Status why =
          ticket->expires_at_deadline
              ? absl::DeadlineExceededError(
                    absl::StrCat("the call's deadline passed after ", waited_ms,
                                 " ms waiting for an export slot (", running, ")"))
              : absl::ResourceExhaustedError(absl::StrCat(
                    "no export slot within ", options_.max_wait.count(), " ms (", running,
                    ", --max_queue_wait_ms ", options_.max_wait.count(), "); retry later"));
      if (observer_ != nullptr) {
        observer_->SlotRefused(ticket->expires_at_deadline ? SlotRefusal::kDeadline
                                                           : SlotRefusal::kMaxWait);
      }
      expired.emplace_back(std::move(ticket->admitted), std::move(why));
    }
    if (expired.empty()) continue;
    // A waiter gone frees no slot, but may end the contention of the holders.
    UpdateContentionLocked();
    lock.unlock();
    for (auto& [admitted, why] : expired) admitted(std::move(why));
    lock.lock();
  }
}

}  // namespace dvexport::pipeline
