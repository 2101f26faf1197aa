#ifndef DVEXPORT_SERVICE_PIPELINE_EXPORT_SLOTS_H_
#define DVEXPORT_SERVICE_PIPELINE_EXPORT_SLOTS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"

namespace dvexport::pipeline {

struct ExportSlotOptions {
  // Exports running at once.
  int slots = 4;
  // Exports waiting for a slot at most; one more is refused at once. 0: no queue.
  int max_queued = 64;
  // How long an export waits for a slot at most (never past its call's deadline).
  std::chrono::milliseconds max_wait{30000};
  // Slots one user holds at most, whether or not others wait; 0 (or more than "slots"): every
  // slot. The server's flag defaults to max(1, slots - 1) (server_flags.cc).
  int max_per_user = 0;
  // Exports of one user waiting at most; 0 (or more than "max_queued"): "max_queued".
  int max_queued_per_user = 0;
};

// Why an export was refused a slot, for the metrics.
enum class SlotRefusal { kQueueFull, kMaxWait, kDeadline, kUserQueueFull };

// What ExportSlots reports, for the metrics: called from any thread, under the ExportSlots' lock
// (so it must not call back into it).
class SlotObserver {
 public:
  virtual ~SlotObserver() = default;
  // A call was given a slot after "seconds" in the queue (0: at once).
  virtual void SlotWaited(double seconds) = 0;
  virtual void SlotRefused(SlotRefusal reason) = 0;
  // A call queued although a slot was free, because its user held max_per_user slots.
  virtual void SlotUserCapWait() = 0;
};

// The export slots of a server and their wait queue, shared fairly between users: at most
// "slots" exports run at once, at most "max_per_user" of one user (a DHIS2 username, or the peer's
// address when the caller is not authenticated). The next ones wait, at most "max_queued" of them
// (at most "max_queued_per_user" of one user), each at most "max_wait" and never past its call's
// deadline. Every user has its own first-come-first-served queue, and a freed slot goes to the
// waiting user under its cap that holds the fewest slots, the first in turn among equals (round
// robin: a user given a slot goes to the back of the turns, a user that starts waiting joins at
// the back), so that a burst of one user neither starves another's exports nor, with
// "max_queued_per_user", fills the whole queue. Nothing here blocks a thread: a waiting export is a
// Ticket in a list, resumed through its callback when a slot frees (on the thread that frees it) or
// when its wait runs out (on the queue's own timer thread).
//
// Contention: an export holding a slot is "contended" while an export of another user waits that
// the next free slot could go to (that user is under its cap). Its "contended" callback, if any, is
// told each change, under the ExportSlots' lock (so that it is never called after its ticket left):
// it must be quick and must not call back into the ExportSlots. The lock order is ExportSlots,
// then whatever the callback locks (HandOffQueue::SetContended), never the other way round.
//
// Thread-safe.
class ExportSlots {
  struct User;

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
    std::function<void(bool)> contention;
    bool contended = false;
    // While waiting or holding: its user, its place in waiting_ (waiting), and its place in its
    // user's waiting or holding list.
    User* user = nullptr;
    std::list<Ticket*>::iterator position;
    std::list<Ticket*>::iterator user_position;
  };

  // "*observer" (may be null) must outlive the ExportSlots.
  ExportSlots(const ExportSlotOptions& options, SlotObserver* observer);
  // Every ticket must have left.
  ~ExportSlots();
  ExportSlots(const ExportSlots&) = delete;
  ExportSlots& operator=(const ExportSlots&) = delete;

  // Asks a slot for "ticket" (which has asked for none before) of "user". "admitted" is called
  // exactly once, unless Join returns an error: with OK once the ticket holds a slot, with
  // ResourceExhausted when its wait ran out, DeadlineExceeded when the call's "deadline" came
  // first, Cancelled when the ticket left while waiting. "contended" (may be null) is told, while
  // the ticket holds its slot, each time it becomes contended or no longer is (see above).
  // Returns:
  // - OK after calling "admitted"(OK) itself, when a slot is free now for "user";
  // - OK without calling it, when the ticket waits in the queue ("admitted" comes later, on
  //   another thread, or on the thread that calls Leave);
  // - ResourceExhausted (without calling "admitted") when the queue, or the user's share of it,
  //   is full.
  absl::Status Join(Ticket* ticket, std::string user,
                    std::chrono::system_clock::time_point deadline,
                    std::function<void(absl::Status)> admitted,
                    std::function<void(bool)> contended = nullptr);

  // The ticket gives up its slot (which goes to the next waiter in turn at once) or its place in
  // the queue (its callback gets Cancelled). Idempotent; a ticket that never joined just leaves.
  void Leave(Ticket* ticket);

  // Exports holding a slot now.
  int running() const;
  // Exports waiting now.
  int queued() const;
  // Users with an export holding a slot or waiting, now.
  int users() const;
  const ExportSlotOptions& options() const { return options_; }
  // The options' caps, with 0 (and too large values) resolved.
  int max_per_user() const { return max_per_user_; }
  int max_queued_per_user() const { return max_queued_per_user_; }

 private:
  struct User {
    std::string name;  // its key in users_
    int running = 0;
    std::list<Ticket*> holding;
    std::list<Ticket*> waiting;  // first come first served
    // Its place in turns_, while it waits.
    std::list<User*>::iterator turn;
  };

  void HoldLocked(Ticket* ticket, User* user) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes a waiting ticket out of the queue (its user's and waiting_).
  void UnqueueLocked(Ticket* ticket) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets "user" once it neither holds nor waits.
  void ForgetIfIdleLocked(User* user) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Grants freed slots to the next waiters in turn; their callbacks go to "*granted".
  void GrantLocked(std::vector<std::function<void(absl::Status)>>* granted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells the holders whose contention changed.
  void UpdateContentionLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the waits that ran out, until the ExportSlots is destroyed.
  void RunTimer();

  const ExportSlotOptions options_;
  const int max_per_user_;
  const int max_queued_per_user_;
  SlotObserver* const observer_;

  mutable std::mutex mu_;
  std::condition_variable timer_wake_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  // Every waiting ticket, in the order they came (for the timer and the count).
  std::list<Ticket*> waiting_ ABSL_GUARDED_BY(mu_);
  // The users that hold or wait (node-based: a ticket keeps a pointer to its user).
  std::unordered_map<std::string, User> users_ ABSL_GUARDED_BY(mu_);
  // The users that wait, in turn: the front is served first, and goes to the back.
  std::list<User*> turns_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread timer_;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_EXPORT_SLOTS_H_
