#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_SLOTS_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_SLOTS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"

namespace dvexport::server {

struct ExportSlotOptions {
  // Exports running at once.
  int slots = 4;
  // Exports waiting for a slot at most; one more is refused at once. 0: no queue.
  int max_queued = 64;
  // How long an export waits for a slot at most (never past its call's deadline).
  std::chrono::milliseconds max_wait{30000};
};

// Why an export was refused a slot, for the metrics.
enum class SlotRefusal { kQueueFull, kMaxWait, kDeadline };

// What ExportSlots reports, for the metrics: called from any thread, under the ExportSlots' lock
// (so it must not call back into it).
class SlotObserver {
 public:
  virtual ~SlotObserver() = default;
  // A call was given a slot after "seconds" in the queue (0: at once).
  virtual void SlotWaited(double seconds) = 0;
  virtual void SlotRefused(SlotRefusal reason) = 0;
};

// The export slots of a server and their wait queue: at most "slots" exports run at once; the
// next ones wait, first come first served, at most "max_queued" of them and each at most
// "max_wait" and never past its call's deadline. Nothing here blocks a thread: a waiting export
// is a Ticket in a list, resumed through its callback when a slot frees (on the thread that frees
// it) or when its wait runs out (on the queue's own timer thread). Thread-safe.
class ExportSlots {
 public:
  // A call's place: nothing, waiting, or holding a slot. Owned by the call; must outlive its
  // wait (Leave() or the callback ends it) and be Left before it is destroyed.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

   private:
    friend class ExportSlots;
    enum class State { kNone, kWaiting, kHolding, kLeft };
    State state = State::kNone;
    std::chrono::steady_clock::time_point queued_at;
    std::chrono::steady_clock::time_point expires_at;
    bool expires_at_deadline = false;
    std::function<void(absl::Status)> admitted;
    std::list<Ticket*>::iterator position;
  };

  // "*observer" (may be null) must outlive the ExportSlots.
  ExportSlots(const ExportSlotOptions& options, SlotObserver* observer);
  // Every ticket must have left.
  ~ExportSlots();
  ExportSlots(const ExportSlots&) = delete;
  ExportSlots& operator=(const ExportSlots&) = delete;

  // Asks a slot for "ticket" (which has asked for none before). "admitted" is called exactly once,
  // unless Join returns an error: with OK once the ticket holds a slot, with ResourceExhausted
  // when its wait ran out, DeadlineExceeded when the call's "deadline" came first, Cancelled when
  // the ticket left while waiting. Returns:
  // - OK after calling "admitted"(OK) itself, when a slot is free now;
  // - OK without calling it, when the ticket waits in the queue ("admitted" comes later, on
  //   another thread, or on the thread that calls Leave);
  // - ResourceExhausted (without calling "admitted") when the queue is full.
  absl::Status Join(Ticket* ticket, std::chrono::system_clock::time_point deadline,
                    std::function<void(absl::Status)> admitted);

  // The ticket gives up its slot (which goes to the first waiter at once) or its place in the
  // queue (its callback gets Cancelled). Idempotent; a ticket that never joined just leaves.
  void Leave(Ticket* ticket);

  // Exports holding a slot now.
  int running() const;
  // Exports waiting now.
  int queued() const;
  const ExportSlotOptions& options() const { return options_; }

 private:
  // Grants freed slots to the first waiters; their callbacks go to "*granted".
  void GrantLocked(std::vector<std::function<void(absl::Status)>>* granted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the waits that ran out, until the ExportSlots is destroyed.
  void RunTimer();

  const ExportSlotOptions options_;
  SlotObserver* const observer_;

  mutable std::mutex mu_;
  std::condition_variable timer_wake_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<Ticket*> waiting_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread timer_;
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_SLOTS_H_
