#ifndef DVEXPORT_SERVICE_PIPELINE_HAND_OFF_QUEUE_H_
#define DVEXPORT_SERVICE_PIPELINE_HAND_OFF_QUEUE_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"

namespace dvexport::pipeline {

// Carries the messages of one export from its reader threads (producers) to the door that sends
// them (the consumer: a gRPC reactor, an HTTP connection), in the order they were pushed. Bounded:
// a producer waits while "capacity" messages are queued, so a slow client stops the readers (and
// PostgreSQL waits on its socket) instead of letting memory grow. The consumer never waits: TryPop
// says whether a message is there, and when it found none the queue calls "ready" once the next
// message arrives or the queue is done, so that the door starts its next write from there.
//
// Contract:
// - Every producer calls Close exactly once, as the last thing it does with the queue; the queue
//   is done when every producer has closed and every message was taken (or the queue stopped).
// - The first failure wins: a producer closing with an error stops the queue, and status() is
//   that error whatever comes after.
// - Stop (the client went away) drops what is queued, makes every Push return false at once,
//   and sets status() to its argument unless a failure came first.
// - "ready" is called outside the queue's lock: for the first message (or the end, if there is
//   none), then at most once per TryPop that found nothing.
// - The consumer may destroy the queue (its export) as soon as TryPop said kDone, even while
//   another thread is still inside a "ready" call that announced it: the destructor waits until
//   every "ready" call of another thread has returned, so that a consumer's "ready" (a post to
//   its event loop, say) never outlives what it posts to; a "ready" call of the destroying thread
//   itself is not waited for. After "ready" returns, the notifying thread touches nothing of the
//   queue.
// - Stalls: the consumer makes progress when it takes a message (TryPop) and when it reports a
//   taken message sent (Sent). Bytes reported sent also buy it time ("credit"): as long as a
//   reader at credit.bytes_per_second would need to read them after the consumer's transport took
//   them (bytes taken earlier and not yet read that way count, up to credit.max_bytes), because
//   a transport may take nothing more until its client read what it holds. When the consumer
//   makes no progress for "stall_timeout" after the later of its last progress and the end of its
//   credit, while messages wait (queued, or taken and not yet sent), a producer waiting in Push or
//   WaitUntilSent stops the queue with "stall_status" (unless a failure came first) and returns
//   false; stalled() is then true. Without credit (bytes_per_second 0), the timeout runs from the
//   last progress.
// - Contended stalls: while SetContended(true) holds (exports of other users wait for the export
//   slot this export holds), "contended.timeout" applies instead of "stall_timeout", and the credit
//   counts for at most that long after the last progress: a consumer that makes no progress for
//   twice that timeout at most is stopped with "contended.status"; contended_stall() is then true.
//   SetContended wakes the waiting producers, so that the shorter timeout applies at once.
//
// Lock order: the queue calls nothing of its owner's under its lock ("ready" is called outside
// it), so SetContended may be called under another lock (ExportSlots' contention callback is).
//
// Thread-safe.
template <typename Item>
class HandOffQueue {
 public:
  enum class Next { kItem, kEmpty, kDone };

  using Clock = std::chrono::steady_clock;

  // The time bytes reported sent give the consumer (see "Stalls" above).
  struct StallCredit {
    double bytes_per_second = 0;  // 0: none
    size_t max_bytes = 0;
  };

  // The stall timeout while others wait for what this export holds (see "Contended stalls").
  struct ContendedStall {
    Clock::duration timeout = Clock::duration::max();  // max: the same as the stall timeout
    absl::Status status = absl::DeadlineExceededError("the consumer stalled while others waited");
  };

  HandOffQueue(size_t capacity, int producers, std::function<void()> ready,
               Clock::duration stall_timeout = Clock::duration::max(),
               absl::Status stall_status = absl::DeadlineExceededError("the consumer stalled"),
               StallCredit credit = {}, ContendedStall contended = {})
      : capacity_(capacity < 1 ? 1 : capacity),
        stall_timeout_(stall_timeout),
        stall_status_(std::move(stall_status)),
        credit_(credit),
        contended_(std::move(contended)),
        producers_(producers),
        notifier_(std::make_shared<Notifier>(std::move(ready))) {}

  HandOffQueue(const HandOffQueue&) = delete;
  HandOffQueue& operator=(const HandOffQueue&) = delete;

  // Waits for the "ready" calls of other threads under way (see the contract).
  ~HandOffQueue() {
    Notifier& notifier = *notifier_;
    const std::thread::id self = std::this_thread::get_id();
    std::unique_lock<std::mutex> lock(notifier.mu);
    notifier.idle.wait(lock, [&notifier, self]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(notifier.mu) {
      return std::all_of(notifier.calling.begin(), notifier.calling.end(),
                         [self](std::thread::id id) { return id == self; });
    });
  }

  // More producers, added by one that has not closed yet.
  void AddProducers(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    producers_ += n;
  }

  // Producer: queues "item", waiting while the queue is full. False (and "item" dropped) if the
  // queue was stopped, or stalled meanwhile.
  bool Push(Item item) {
    std::shared_ptr<Notifier> notifier;  // set: call "ready" once the lock is released
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!WaitLocked(lock, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
            return items_.size() < capacity_;
          })) {
        return false;
      }
      // The consumer had nothing to send: its stall clock starts now.
      if (items_.empty() && unsent_ == 0) last_progress_ = Clock::now();
      items_.push_back(std::move(item));
      if (std::exchange(consumer_waiting_, false)) notifier = AnnounceLocked();
    }
    if (notifier != nullptr) notifier->Call();
    return true;
  }

  // Producer: waits until every message pushed so far was taken and reported sent. False if the
  // queue was stopped, or stalled meanwhile.
  bool WaitUntilSent() {
    std::unique_lock<std::mutex> lock(mu_);
    return WaitLocked(lock, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return items_.empty() && unsent_ == 0;
    });
  }

  // Producer: this producer has pushed everything it will; an error stops the queue.
  void Close(absl::Status status) {
    std::shared_ptr<Notifier> notifier;  // set: call "ready" once the lock is released
    {
      std::lock_guard<std::mutex> lock(mu_);
      --producers_;
      if (!status.ok() && status_.ok()) status_ = std::move(status);
      if (!status_.ok()) StopLocked();
      if (producers_ == 0 && std::exchange(consumer_waiting_, false)) notifier = AnnounceLocked();
    }
    if (notifier != nullptr) notifier->Call();
  }

  // Consumer: the client has gone (or the call failed): "why" becomes the status unless a
  // failure came first.
  void Stop(absl::Status why) {
    std::shared_ptr<Notifier> notifier;  // set: call "ready" once the lock is released
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (status_.ok()) status_ = std::move(why);
      StopLocked();
      if (producers_ == 0 && std::exchange(consumer_waiting_, false)) notifier = AnnounceLocked();
    }
    if (notifier != nullptr) notifier->Call();
  }

  // Consumer: the next message, if any. kEmpty arms "ready"; kDone once every producer closed
  // and nothing is left (then status() tells how the export ended).
  Next TryPop(Item* item) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!items_.empty()) {
      *item = std::move(items_.front());
      items_.pop_front();
      ++unsent_;
      last_progress_ = Clock::now();
      room_.notify_all();
      return Next::kItem;
    }
    if (producers_ == 0) return Next::kDone;
    consumer_waiting_ = true;
    return Next::kEmpty;
  }

  // Consumer: a message TryPop gave has been sent (its write completed): its transport took
  // "bytes".
  void Sent(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (unsent_ > 0) --unsent_;
    const Clock::time_point now = Clock::now();
    last_progress_ = now;
    if (credit_.bytes_per_second > 0) {
      const auto reading = [this](size_t n) {
        return std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(static_cast<double>(n) / credit_.bytes_per_second));
      };
      credit_until_ =
          std::min(std::max(credit_until_, now) + reading(bytes), now + reading(credit_.max_bytes));
    }
    room_.notify_all();
  }

  // Whether others wait for what this export holds: the contended stall timeout applies while
  // they do. Any thread, under any lock of the caller's (the queue locks only its own).
  void SetContended(bool contended) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      contended_now_ = contended;
    }
    room_.notify_all();
  }

  bool stopped() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }

  // True once a producer gave up on a consumer that made no progress for the stall timeout.
  bool stalled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stalled_;
  }

  // True once the stall was found with the contended timeout (then stalled() is true too).
  bool contended_stall() const {
    std::lock_guard<std::mutex> lock(mu_);
    return contended_stall_;
  }

  // OK, or the first failure / the reason the queue was stopped.
  absl::Status status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  // "ready", and the threads inside it now (one entry per call). Shared with each call, so that
  // a call that returns after the queue was destroyed touches only this.
  struct Notifier {
    explicit Notifier(std::function<void()> ready_function) : ready(std::move(ready_function)) {}

    // Calls "ready"; the call was registered (AnnounceLocked) before the queue's lock was let go.
    void Call() {
      ready();
      std::lock_guard<std::mutex> lock(mu);
      calling.erase(std::find(calling.begin(), calling.end(), std::this_thread::get_id()));
      idle.notify_all();
    }

    const std::function<void()> ready;
    std::mutex mu;
    std::condition_variable idle;  // a call returned
    std::vector<std::thread::id> calling ABSL_GUARDED_BY(mu);
  };

  // Under the queue's lock, before it is let go: this thread will call "ready" (Notifier::Call),
  // so that a destructor that runs once the lock is free waits for that call.
  std::shared_ptr<Notifier> AnnounceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::lock_guard<std::mutex> lock(notifier_->mu);
    notifier_->calling.push_back(std::this_thread::get_id());
    return notifier_;
  }
  // Waits until "done" holds (true) or the queue is stopped (false). While the consumer makes no
  // progress for stall_timeout_ past its credit (or, contended, for the contended timeout past
  // the credit of at most as long), the wait ends with the queue stalled and stopped (false).
  template <typename Done>
  bool WaitLocked(std::unique_lock<std::mutex>& lock, Done done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!stopped_ && !done()) {
      const bool contended = contended_now_ && contended_.timeout != Clock::duration::max();
      // The default timeout is "never".
      if (stall_timeout_ == Clock::duration::max() && !contended) {
        room_.wait(lock);
        continue;
      }
      Clock::time_point deadline = Clock::time_point::max();
      if (stall_timeout_ != Clock::duration::max()) {
        deadline = std::max(last_progress_, credit_until_) + stall_timeout_;
      }
      if (contended) {
        const Clock::time_point credit_end =
            std::min(credit_until_, last_progress_ + contended_.timeout);
        deadline = std::min(deadline, std::max(last_progress_, credit_end) + contended_.timeout);
      }
      if (Clock::now() >= deadline) {
        stalled_ = true;
        // Which timeout ran out: the contended one, unless the other came first anyway.
        const bool by_contention =
            contended && (stall_timeout_ == Clock::duration::max() ||
                          deadline < std::max(last_progress_, credit_until_) + stall_timeout_);
        contended_stall_ = by_contention;
        if (status_.ok()) status_ = by_contention ? contended_.status : stall_status_;
        StopLocked();
        break;
      }
      room_.wait_until(lock, deadline);
    }
    return !stopped_;
  }

  void StopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    stopped_ = true;
    items_.clear();
    room_.notify_all();
  }

  const size_t capacity_;
  const Clock::duration stall_timeout_;
  const absl::Status stall_status_;
  const StallCredit credit_;
  const ContendedStall contended_;
  // std::mutex rather than absl::Mutex: Debian's Abseil is not built for ThreadSanitizer, which
  // would not see its synchronization.
  mutable std::mutex mu_;
  std::condition_variable room_;  // a producer may push, or the consumer made progress
  std::deque<Item> items_ ABSL_GUARDED_BY(mu_);
  int producers_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool stalled_ ABSL_GUARDED_BY(mu_) = false;
  bool contended_stall_ ABSL_GUARDED_BY(mu_) = false;
  // Whether others wait for this export's slot now (SetContended).
  bool contended_now_ ABSL_GUARDED_BY(mu_) = false;
  // Messages taken by TryPop and not yet reported Sent.
  int unsent_ ABSL_GUARDED_BY(mu_) = 0;
  // The consumer's last progress (TryPop that took a message, Sent), or the Push that gave it
  // something to send after it had nothing.
  Clock::time_point last_progress_ ABSL_GUARDED_BY(mu_) = Clock::now();
  // When a reader at credit_.bytes_per_second would have read every byte reported sent.
  Clock::time_point credit_until_ ABSL_GUARDED_BY(mu_) = Clock::time_point::min();
  // The consumer starts idle: the first message (or the end) wakes it.
  bool consumer_waiting_ ABSL_GUARDED_BY(mu_) = true;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<Notifier> notifier_;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_HAND_OFF_QUEUE_H_
