#include "service/pipeline/export_slots.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace dvexport::pipeline {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr auto kNoDeadline = std::chrono::system_clock::time_point::max();

// A call's ticket and what its "admitted" callback was told, and on which thread.
struct Call {
  ExportSlots::Ticket ticket;
  std::mutex mu;
  std::condition_variable told;
  std::optional<absl::Status> admitted;
  std::thread::id thread;
  int calls = 0;

  std::function<void(absl::Status)> Callback() {
    return [this](absl::Status status) {
      std::lock_guard<std::mutex> lock(mu);
      admitted = std::move(status);
      thread = std::this_thread::get_id();
      ++calls;
      told.notify_all();
    };
  }

  // What the callback was told, waiting at most "wait" for it.
  std::optional<absl::Status> Await(milliseconds wait = milliseconds(5000)) {
    std::unique_lock<std::mutex> lock(mu);
    told.wait_for(lock, wait, [this] { return admitted.has_value(); });
    return admitted;
  }

  std::optional<absl::Status> Now() {
    std::lock_guard<std::mutex> lock(mu);
    return admitted;
  }
};

class CountingObserver final : public SlotObserver {
 public:
  void SlotWaited(double seconds) override {
    ++waited;
    if (seconds > 0) ++waited_in_queue;
  }
  void SlotRefused(SlotRefusal reason) override { ++refused[static_cast<int>(reason)]; }
  void SlotUserCapWait() override { ++user_cap_waits; }

  std::atomic<int> waited{0};
  std::atomic<int> waited_in_queue{0};
  std::atomic<int> refused[4] = {0, 0, 0, 0};
  std::atomic<int> user_cap_waits{0};
};

ExportSlotOptions Options(int slots, int max_queued, milliseconds max_wait) {
  return {.slots = slots, .max_queued = max_queued, .max_wait = max_wait};
}

ExportSlotOptions SharedOptions(int slots, int max_per_user, int max_queued,
                                int max_queued_per_user) {
  return {.slots = slots,
          .max_queued = max_queued,
          .max_wait = milliseconds(60000),
          .max_per_user = max_per_user,
          .max_queued_per_user = max_queued_per_user};
}

// What a holder's "contended" callback was told last, and how often.
struct Contention {
  std::atomic<bool> contended{false};
  std::atomic<int> changes{0};

  std::function<void(bool)> Callback() {
    return [this](bool now) {
      contended = now;
      ++changes;
    };
  }
};

bool Granted(Call& call) { return call.Now().has_value() && call.Now()->ok(); }

TEST(ExportSlotsTest, GrantsAtOnceWhileSlotsAreFree) {
  CountingObserver observer;
  ExportSlots slots(Options(2, 4, milliseconds(10000)), &observer);
  Call a, b;
  ASSERT_TRUE(slots.Join(&a.ticket, "user", kNoDeadline, a.Callback()).ok());
  ASSERT_TRUE(slots.Join(&b.ticket, "user", kNoDeadline, b.Callback()).ok());
  // Called before Join returned, on this thread.
  ASSERT_TRUE(a.Now().has_value());
  EXPECT_TRUE(a.Now()->ok());
  EXPECT_EQ(a.thread, std::this_thread::get_id());
  EXPECT_TRUE(b.Now().has_value());
  EXPECT_EQ(slots.running(), 2);
  EXPECT_EQ(slots.queued(), 0);
  EXPECT_EQ(observer.waited, 2);
  slots.Leave(&a.ticket);
  slots.Leave(&b.ticket);
  EXPECT_EQ(slots.running(), 0);
}

TEST(ExportSlotsTest, WaitersGetFreedSlotsFirstComeFirstServed) {
  CountingObserver observer;
  ExportSlots slots(Options(1, 10, milliseconds(10000)), &observer);
  Call holder;
  ASSERT_TRUE(slots.Join(&holder.ticket, "user", kNoDeadline, holder.Callback()).ok());
  std::vector<std::unique_ptr<Call>> waiters;
  for (int i = 0; i < 5; ++i) {
    waiters.push_back(std::make_unique<Call>());
    ASSERT_TRUE(slots.Join(&waiters[i]->ticket, "user", kNoDeadline, waiters[i]->Callback()).ok());
    EXPECT_FALSE(waiters[i]->Now().has_value());
  }
  EXPECT_EQ(slots.queued(), 5);
  // Each Leave hands the slot to the first waiter, on the leaving thread, and to no other.
  slots.Leave(&holder.ticket);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(waiters[i]->Now().has_value()) << i;
    EXPECT_TRUE(waiters[i]->Now()->ok());
    EXPECT_EQ(waiters[i]->thread, std::this_thread::get_id());
    for (int j = i + 1; j < 5; ++j) EXPECT_FALSE(waiters[j]->Now().has_value()) << i << " " << j;
    EXPECT_EQ(slots.running(), 1);
    EXPECT_EQ(slots.queued(), 4 - i);
    slots.Leave(&waiters[i]->ticket);
  }
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(observer.waited, 6);
  EXPECT_EQ(observer.waited_in_queue, 5);
}

TEST(ExportSlotsTest, NewcomerQueuesBehindWaitersEvenWhenASlotIsBeingHandedOver) {
  ExportSlots slots(Options(1, 10, milliseconds(10000)), nullptr);
  Call holder, first, second;
  ASSERT_TRUE(slots.Join(&holder.ticket, "user", kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&first.ticket, "user", kNoDeadline, first.Callback()).ok());
  slots.Leave(&holder.ticket);
  ASSERT_TRUE(slots.Join(&second.ticket, "user", kNoDeadline, second.Callback()).ok());
  EXPECT_TRUE(first.Now().has_value());
  EXPECT_FALSE(second.Now().has_value());
  slots.Leave(&first.ticket);
  EXPECT_TRUE(second.Now().has_value());
  slots.Leave(&second.ticket);
}

TEST(ExportSlotsTest, FullQueueIsRefusedAtOnceWithoutCallingBack) {
  CountingObserver observer;
  ExportSlots slots(Options(1, 2, milliseconds(10000)), &observer);
  Call holder, w1, w2, refused;
  ASSERT_TRUE(slots.Join(&holder.ticket, "user", kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&w1.ticket, "user", kNoDeadline, w1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&w2.ticket, "user", kNoDeadline, w2.Callback()).ok());
  const auto start = Clock::now();
  absl::Status status = slots.Join(&refused.ticket, "user", kNoDeadline, refused.Callback());
  EXPECT_LT(Clock::now() - start, milliseconds(100));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_NE(status.message().find("1 running and 2 waiting"), absl::string_view::npos) << status;
  EXPECT_FALSE(refused.Now().has_value());
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kQueueFull)], 1);
  slots.Leave(&refused.ticket);
  slots.Leave(&w2.ticket);
  slots.Leave(&w1.ticket);
  slots.Leave(&holder.ticket);
  EXPECT_EQ(w1.Now()->code(), absl::StatusCode::kCancelled);
}

TEST(ExportSlotsTest, NoQueueRefusesAtOnce) {
  ExportSlots slots(Options(1, 0, milliseconds(10000)), nullptr);
  Call holder, refused;
  ASSERT_TRUE(slots.Join(&holder.ticket, "user", kNoDeadline, holder.Callback()).ok());
  EXPECT_EQ(slots.Join(&refused.ticket, "user", kNoDeadline, refused.Callback()).code(),
            absl::StatusCode::kResourceExhausted);
  slots.Leave(&holder.ticket);
}

TEST(ExportSlotsTest, WaitThatRunsOutIsResourceExhaustedOnTheTimerThread) {
  CountingObserver observer;
  ExportSlots slots(Options(1, 4, milliseconds(200)), &observer);
  Call holder, waiter;
  ASSERT_TRUE(slots.Join(&holder.ticket, "user", kNoDeadline, holder.Callback()).ok());
  const auto start = Clock::now();
  ASSERT_TRUE(slots.Join(&waiter.ticket, "user", kNoDeadline, waiter.Callback()).ok());
  std::optional<absl::Status> told = waiter.Await();
  const auto waited = Clock::now() - start;
  ASSERT_TRUE(told.has_value());
  EXPECT_EQ(told->code(), absl::StatusCode::kResourceExhausted) << *told;
  EXPECT_GE(waited, milliseconds(200));
  EXPECT_LT(waited, milliseconds(2000));
  EXPECT_NE(waiter.thread, std::this_thread::get_id());
  EXPECT_EQ(slots.queued(), 0);
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kMaxWait)], 1);
  // Leaving after the wait ran out changes nothing, and the slot still goes to the next one.
  slots.Leave(&waiter.ticket);
  slots.Leave(&holder.ticket);
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(waiter.calls, 1);
}

TEST(ExportSlotsTest, DeadlineBeforeTheLongestWaitIsDeadlineExceeded) {
  CountingObserver observer;
  ExportSlots slots(Options(1, 4, milliseconds(60000)), &observer);
  Call holder, waiter, later;
  ASSERT_TRUE(slots.Join(&holder.ticket, "user", kNoDeadline, holder.Callback()).ok());
  // A waiter with no deadline first: the timer must still wake for the earlier one behind it.
  ASSERT_TRUE(slots.Join(&later.ticket, "user", kNoDeadline, later.Callback()).ok());
  const auto start = Clock::now();
  ASSERT_TRUE(slots
                  .Join(&waiter.ticket, "user",
                        std::chrono::system_clock::now() + milliseconds(300), waiter.Callback())
                  .ok());
  std::optional<absl::Status> told = waiter.Await();
  ASSERT_TRUE(told.has_value());
  EXPECT_EQ(told->code(), absl::StatusCode::kDeadlineExceeded) << *told;
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_FALSE(later.Now().has_value());
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kDeadline)], 1);
  slots.Leave(&holder.ticket);
  ASSERT_TRUE(later.Now().has_value());
  EXPECT_TRUE(later.Now()->ok());
  slots.Leave(&later.ticket);
}

TEST(ExportSlotsTest, LeavingWhileWaitingCancelsAtOnceAndFreesThePlace) {
  ExportSlots slots(Options(1, 1, milliseconds(60000)), nullptr);
  Call holder, waiter, next;
  ASSERT_TRUE(slots.Join(&holder.ticket, "user", kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&waiter.ticket, "user", kNoDeadline, waiter.Callback()).ok());
  slots.Leave(&waiter.ticket);
  ASSERT_TRUE(waiter.Now().has_value());
  EXPECT_EQ(waiter.Now()->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(waiter.thread, std::this_thread::get_id());
  EXPECT_EQ(slots.queued(), 0);
  ASSERT_TRUE(slots.Join(&next.ticket, "user", kNoDeadline, next.Callback()).ok());
  EXPECT_EQ(slots.queued(), 1);
  slots.Leave(&holder.ticket);
  EXPECT_TRUE(next.Now()->ok());
  slots.Leave(&next.ticket);
  slots.Leave(&waiter.ticket);
  EXPECT_EQ(waiter.calls, 1);
}

TEST(ExportSlotsTest, TicketThatLeftBeforeJoiningIsNeverQueued) {
  ExportSlots slots(Options(1, 1, milliseconds(60000)), nullptr);
  Call call;
  slots.Leave(&call.ticket);
  EXPECT_EQ(slots.Join(&call.ticket, "user", kNoDeadline, call.Callback()).code(),
            absl::StatusCode::kCancelled);
  EXPECT_FALSE(call.Now().has_value());
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(slots.queued(), 0);
}

// --- Fair shares between users ---

TEST(ExportSlotsTest, UserCapKeepsASlotForAnotherUserWhileSlotsAreFree) {
  CountingObserver observer;
  ExportSlots slots(SharedOptions(3, 2, 10, 10), &observer);
  EXPECT_EQ(slots.max_per_user(), 2);
  Call a1, a2, a3, b1;
  ASSERT_TRUE(slots.Join(&a1.ticket, "alice", kNoDeadline, a1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a2.ticket, "alice", kNoDeadline, a2.Callback()).ok());
  // A slot is free, but alice holds her two: she waits.
  ASSERT_TRUE(slots.Join(&a3.ticket, "alice", kNoDeadline, a3.Callback()).ok());
  EXPECT_TRUE(Granted(a1));
  EXPECT_TRUE(Granted(a2));
  EXPECT_FALSE(a3.Now().has_value());
  EXPECT_EQ(observer.user_cap_waits, 1);
  EXPECT_EQ(slots.running(), 2);
  EXPECT_EQ(slots.queued(), 1);
  // Bob takes the free slot at once, past alice's waiter.
  ASSERT_TRUE(slots.Join(&b1.ticket, "bob", kNoDeadline, b1.Callback()).ok());
  EXPECT_TRUE(Granted(b1));
  EXPECT_EQ(slots.users(), 2);
  // Bob's slot freed: alice is still at her cap, so it stays free.
  slots.Leave(&b1.ticket);
  EXPECT_FALSE(a3.Now().has_value());
  EXPECT_EQ(slots.running(), 2);
  // One of alice's freed: her waiter takes it.
  slots.Leave(&a1.ticket);
  EXPECT_TRUE(Granted(a3));
  slots.Leave(&a2.ticket);
  slots.Leave(&a3.ticket);
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(slots.users(), 0);
}

TEST(ExportSlotsTest, AWaitThatRunsOutAtTheUsersCapSaysSo) {
  ExportSlots slots({.slots = 3, .max_queued = 4, .max_wait = milliseconds(200), .max_per_user = 2},
                    nullptr);
  Call a1, a2, a3;
  ASSERT_TRUE(slots.Join(&a1.ticket, "alice", kNoDeadline, a1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a2.ticket, "alice", kNoDeadline, a2.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a3.ticket, "alice", kNoDeadline, a3.Callback()).ok());
  std::optional<absl::Status> told = a3.Await();
  ASSERT_TRUE(told.has_value());
  EXPECT_EQ(*told, absl::ResourceExhaustedError(
                       "no export slot within 200 ms (2 exports running, 2 of them this caller's "
                       "(--max_exports_per_user 2), --max_queue_wait_ms 200); retry later"));
  slots.Leave(&a1.ticket);
  slots.Leave(&a2.ticket);
  slots.Leave(&a3.ticket);
  EXPECT_EQ(slots.users(), 0);
}

TEST(ExportSlotsTest, CapOfZeroOrMoreThanTheSlotsIsEverySlot) {
  ExportSlots none(SharedOptions(3, 0, 10, 0), nullptr);
  EXPECT_EQ(none.max_per_user(), 3);
  EXPECT_EQ(none.max_queued_per_user(), 10);
  ExportSlots large(SharedOptions(3, 7, 10, 11), nullptr);
  EXPECT_EQ(large.max_per_user(), 3);
  EXPECT_EQ(large.max_queued_per_user(), 10);
  Call c[3];
  for (Call& call : c) {
    ASSERT_TRUE(large.Join(&call.ticket, "alice", kNoDeadline, call.Callback()).ok());
  }
  for (Call& call : c) EXPECT_TRUE(Granted(call));
  for (Call& call : c) large.Leave(&call.ticket);
}

// One slot, three users queued a-a-a-b-b-c: the slot goes round the users, each user's own
// exports first come first served.
TEST(ExportSlotsTest, FreedSlotsGoRoundRobinAcrossUsers) {
  ExportSlots slots(SharedOptions(1, 1, 20, 20), nullptr);
  Call holder;
  ASSERT_TRUE(slots.Join(&holder.ticket, "holder", kNoDeadline, holder.Callback()).ok());
  const std::vector<std::string> arrivals = {"a", "a", "a", "b", "b", "c"};
  std::vector<std::unique_ptr<Call>> calls;
  for (const std::string& user : arrivals) {
    calls.push_back(std::make_unique<Call>());
    ASSERT_TRUE(
        slots.Join(&calls.back()->ticket, user, kNoDeadline, calls.back()->Callback()).ok());
  }
  EXPECT_EQ(slots.queued(), 6);
  // Served: a1, b1, c1, a2, b2, a3.
  const std::vector<int> expected = {0, 3, 5, 1, 4, 2};
  slots.Leave(&holder.ticket);
  for (size_t step = 0; step < expected.size(); ++step) {
    for (size_t i = 0; i < calls.size(); ++i) {
      const bool served_before = std::find(expected.begin(), expected.begin() + step + 1,
                                           static_cast<int>(i)) != expected.begin() + step + 1;
      EXPECT_EQ(calls[i]->Now().has_value(), served_before) << "step " << step << " call " << i;
    }
    slots.Leave(&calls[expected[step]]->ticket);
  }
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(slots.queued(), 0);
  EXPECT_EQ(slots.users(), 0);
}

// A freed slot goes to the waiting user that holds the fewest, before one whose turn came first.
TEST(ExportSlotsTest, AFreedSlotGoesToTheWaitingUserThatHoldsTheFewest) {
  ExportSlots slots(SharedOptions(3, 3, 20, 20), nullptr);
  Call a1, a2, a3, b1, b2;
  ASSERT_TRUE(slots.Join(&a1.ticket, "a", kNoDeadline, a1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a2.ticket, "a", kNoDeadline, a2.Callback()).ok());
  ASSERT_TRUE(slots.Join(&b1.ticket, "b", kNoDeadline, b1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a3.ticket, "a", kNoDeadline, a3.Callback()).ok());
  ASSERT_TRUE(slots.Join(&b2.ticket, "b", kNoDeadline, b2.Callback()).ok());
  // a's turn is first, but a holds 2 and b none once b1 leaves.
  slots.Leave(&b1.ticket);
  EXPECT_TRUE(Granted(b2));
  EXPECT_FALSE(a3.Now().has_value());
  // 1 against 1 once a1 leaves: a's turn.
  slots.Leave(&a1.ticket);
  EXPECT_TRUE(Granted(a3));
  for (Call* call : {&a1, &a2, &a3, &b1, &b2}) slots.Leave(&call->ticket);
  EXPECT_EQ(slots.users(), 0);
}

// A burst of one user (40 exports at once, more than the slots and its share of the queue) does
// not starve another: the other's export takes the slot the burst's user may not, its next ones
// are served in turn with the burst's, and the queue keeps room for them.
TEST(ExportSlotsTest, ABurstOfOneUserDoesNotStarveAnother) {
  CountingObserver observer;
  ExportSlots slots(SharedOptions(4, 3, 32, 16), &observer);
  std::vector<std::unique_ptr<Call>> burst;
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    burst.push_back(std::make_unique<Call>());
    absl::Status joined =
        slots.Join(&burst.back()->ticket, "burst", kNoDeadline, burst.back()->Callback());
    if (!joined.ok()) {
      ++refused;
      EXPECT_EQ(joined.code(), absl::StatusCode::kResourceExhausted);
      EXPECT_NE(joined.message().find("--max_queued_exports_per_user 16"), absl::string_view::npos)
          << joined;
    }
  }
  // 3 running, 16 waiting, 21 refused at once: the queue has room for 16 more of others.
  EXPECT_EQ(slots.running(), 3);
  EXPECT_EQ(slots.queued(), 16);
  EXPECT_EQ(refused, 21);
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kUserQueueFull)], 21);
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kQueueFull)], 0);
  Call other[3];
  for (Call& call : other) {
    ASSERT_TRUE(slots.Join(&call.ticket, "other", kNoDeadline, call.Callback()).ok());
  }
  // The free slot goes to the other user at once.
  EXPECT_TRUE(Granted(other[0]));
  EXPECT_FALSE(other[1].Now().has_value());
  // The slots that free go round: the burst's (at its cap) and the other's (at its cap too
  // now): whoever leaves, the next waiter of the same user takes its place, and the other's
  // waiters are served long before the burst's 16.
  int burst_left = 0;
  for (int i = 0; i < 3 && burst_left < 40; ++burst_left) {
    if (!Granted(*burst[burst_left])) continue;
    slots.Leave(&burst[burst_left]->ticket);
    ++i;
  }
  slots.Leave(&other[0].ticket);
  EXPECT_TRUE(Granted(other[1]));
  slots.Leave(&other[1].ticket);
  EXPECT_TRUE(Granted(other[2]));
  EXPECT_LE(slots.running(), 4);
  for (auto& call : burst) slots.Leave(&call->ticket);
  for (Call& call : other) slots.Leave(&call.ticket);
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(slots.queued(), 0);
  EXPECT_EQ(slots.users(), 0);
}

TEST(ExportSlotsTest, FullQueueRefusesEveryUserButAUserFullQueueOnlyItsOwn) {
  CountingObserver observer;
  ExportSlots slots(SharedOptions(1, 1, 3, 2), &observer);
  Call holder, a1, a2, a3, b1, c1;
  ASSERT_TRUE(slots.Join(&holder.ticket, "h", kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a1.ticket, "a", kNoDeadline, a1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a2.ticket, "a", kNoDeadline, a2.Callback()).ok());
  absl::Status own = slots.Join(&a3.ticket, "a", kNoDeadline, a3.Callback());
  EXPECT_EQ(own.code(), absl::StatusCode::kResourceExhausted) << own;
  EXPECT_NE(own.message().find("2 of them waiting already"), absl::string_view::npos) << own;
  ASSERT_TRUE(slots.Join(&b1.ticket, "b", kNoDeadline, b1.Callback()).ok());
  absl::Status full = slots.Join(&c1.ticket, "c", kNoDeadline, c1.Callback());
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_NE(full.message().find("1 running and 3 waiting"), absl::string_view::npos) << full;
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kUserQueueFull)], 1);
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kQueueFull)], 1);
  // A refused user is not kept.
  EXPECT_EQ(slots.users(), 3);
  for (Call* call : {&holder, &a1, &a2, &a3, &b1, &c1}) slots.Leave(&call->ticket);
  EXPECT_EQ(slots.users(), 0);
}

TEST(ExportSlotsTest, LeavingWhileWaitingTakesTheUserOutOfTheTurns) {
  ExportSlots slots(SharedOptions(1, 1, 10, 10), nullptr);
  Call holder, a1, b1, b2;
  ASSERT_TRUE(slots.Join(&holder.ticket, "h", kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a1.ticket, "a", kNoDeadline, a1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&b1.ticket, "b", kNoDeadline, b1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&b2.ticket, "b", kNoDeadline, b2.Callback()).ok());
  slots.Leave(&a1.ticket);
  EXPECT_EQ(a1.Now()->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(slots.users(), 2);
  slots.Leave(&holder.ticket);
  EXPECT_TRUE(Granted(b1));
  slots.Leave(&b1.ticket);
  EXPECT_TRUE(Granted(b2));
  slots.Leave(&b2.ticket);
  EXPECT_EQ(slots.users(), 0);
}

TEST(ExportSlotsTest, DeadlineOfAWaiterEndsOnlyItsWaitAndItsUsersTurn) {
  CountingObserver observer;
  ExportSlots slots(SharedOptions(1, 1, 10, 10), &observer);
  Call holder, a1, b1;
  Contention holding;
  ASSERT_TRUE(
      slots.Join(&holder.ticket, "h", kNoDeadline, holder.Callback(), holding.Callback()).ok());
  ASSERT_TRUE(slots
                  .Join(&a1.ticket, "a", std::chrono::system_clock::now() + milliseconds(300),
                        a1.Callback())
                  .ok());
  EXPECT_TRUE(holding.contended);
  std::optional<absl::Status> told = a1.Await();
  ASSERT_TRUE(told.has_value());
  EXPECT_EQ(told->code(), absl::StatusCode::kDeadlineExceeded) << *told;
  EXPECT_NE(told->message().find("(1 exports running)"), absl::string_view::npos) << *told;
  EXPECT_EQ(observer.refused[static_cast<int>(SlotRefusal::kDeadline)], 1);
  // Nobody else waits: the holder is no longer contended.
  EXPECT_FALSE(holding.contended);
  EXPECT_EQ(slots.users(), 1);
  ASSERT_TRUE(slots.Join(&b1.ticket, "b", kNoDeadline, b1.Callback()).ok());
  slots.Leave(&holder.ticket);
  EXPECT_TRUE(Granted(b1));
  slots.Leave(&b1.ticket);
  slots.Leave(&a1.ticket);
  EXPECT_EQ(slots.users(), 0);
}

// A holder is contended while an export of another user waits that a freed slot could go to;
// its own user's waiters, and waiters of a user at its cap, do not count.
TEST(ExportSlotsTest, HoldersAreContendedWhileAnotherUsersExportCouldTakeTheirSlot) {
  ExportSlots slots(SharedOptions(3, 2, 10, 10), nullptr);
  Call a1, a2, a3, b1, b2, c1;
  Contention ca1, ca2, ca3, cb1;
  ASSERT_TRUE(slots.Join(&a1.ticket, "a", kNoDeadline, a1.Callback(), ca1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&a2.ticket, "a", kNoDeadline, a2.Callback(), ca2.Callback()).ok());
  ASSERT_TRUE(slots.Join(&b1.ticket, "b", kNoDeadline, b1.Callback(), cb1.Callback()).ok());
  // Every slot taken. a's own waiter: nobody contended (a is at its cap anyway).
  ASSERT_TRUE(slots.Join(&a3.ticket, "a", kNoDeadline, a3.Callback(), ca3.Callback()).ok());
  EXPECT_FALSE(ca1.contended);
  EXPECT_FALSE(cb1.contended);
  EXPECT_EQ(ca1.changes, 0);
  // b waits (under its cap): a's holders are contended, b's own holder is not.
  ASSERT_TRUE(slots.Join(&b2.ticket, "b", kNoDeadline, b2.Callback()).ok());
  EXPECT_TRUE(ca1.contended);
  EXPECT_TRUE(ca2.contended);
  EXPECT_FALSE(cb1.contended);
  // c waits too: now b's holder is contended as well (c could take its slot).
  ASSERT_TRUE(slots.Join(&c1.ticket, "c", kNoDeadline, c1.Callback()).ok());
  EXPECT_TRUE(cb1.contended);
  // c gives up: b's holder is no longer contended, a's still are.
  slots.Leave(&c1.ticket);
  EXPECT_FALSE(cb1.contended);
  EXPECT_TRUE(ca1.contended);
  EXPECT_EQ(ca1.changes, 1);
  // a1 leaves: a's turn came first (a3 before b2), and a is under its cap again: a3 holds, and
  // is contended at once (b2 still waits).
  slots.Leave(&a1.ticket);
  EXPECT_TRUE(Granted(a3));
  EXPECT_FALSE(b2.Now().has_value());
  EXPECT_TRUE(ca3.contended);
  EXPECT_TRUE(ca2.contended);
  // a2 leaves: b2 takes its slot; nobody waits, nobody is contended.
  slots.Leave(&a2.ticket);
  EXPECT_TRUE(Granted(b2));
  EXPECT_FALSE(ca3.contended);
  EXPECT_FALSE(cb1.contended);
  for (Call* call : {&a1, &a2, &a3, &b1, &b2, &c1}) slots.Leave(&call->ticket);
  EXPECT_EQ(slots.users(), 0);
}

// The contention callback runs under the slots' lock, so it is never called once its ticket
// left, even when leaves and joins race.
TEST(ExportSlotsTest, ContentionIsNeverToldAfterTheTicketLeft) {
  ExportSlots slots(SharedOptions(2, 1, 64, 64), nullptr);
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    int i = 0;
    // Two at a time, so that one of them waits while "h" and the other hold.
    while (!stop) {
      Call first, second;
      ASSERT_TRUE(
          slots.Join(&first.ticket, "w" + std::to_string(i++ % 3), kNoDeadline, first.Callback())
              .ok());
      ASSERT_TRUE(
          slots.Join(&second.ticket, "w" + std::to_string(i++ % 3), kNoDeadline, second.Callback())
              .ok());
      // A ticket given its slot by another thread's Leave is told there: it must outlive that.
      first.Await();
      slots.Leave(&first.ticket);
      second.Await();
      slots.Leave(&second.ticket);
    }
  });
  // Told after its ticket left, over every round (checked once nothing runs any more).
  auto late = std::make_shared<std::atomic<int>>(0);
  std::atomic<int> told{0};
  // Until the churn made the holder contended often enough (at most 10 s).
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  for (int round = 0; (round < 2000 || told < 100) && Clock::now() < give_up; ++round) {
    Call call;
    auto left = std::make_shared<std::atomic<bool>>(false);
    ASSERT_TRUE(slots
                    .Join(&call.ticket, "h", kNoDeadline, call.Callback(),
                          [left, late, &told](bool) {
                            ++told;
                            if (*left) ++*late;
                          })
                    .ok());
    call.Await();
    std::this_thread::yield();
    slots.Leave(&call.ticket);
    *left = true;
  }
  stop = true;
  churn.join();
  EXPECT_EQ(*late, 0);
  EXPECT_GE(told, 100);  // the churn made the holder contended at times
}

// Many threads join, hold briefly and leave; some leave while waiting. Every ticket is told
// exactly once, never more than "slots" hold at once, and nothing is left at the end.
TEST(ExportSlotsTest, ConcurrentJoinsAndLeavesKeepTheBound) {
  constexpr int kSlots = 3;
  constexpr int kThreads = 16;
  constexpr int kRounds = 50;
  constexpr int kUsers = 4;
  constexpr int kPerUser = 2;
  ExportSlots slots(SharedOptions(kSlots, kPerUser, kThreads, kThreads), nullptr);
  std::atomic<int> holding{0}, most{0}, granted{0}, cancelled{0};
  std::atomic<int> user_holding[kUsers] = {0, 0, 0, 0};
  std::atomic<int> user_most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        Call call;
        const int user = t % kUsers;
        ASSERT_TRUE(
            slots.Join(&call.ticket, std::to_string(user), kNoDeadline, call.Callback()).ok());
        if ((t + round) % 5 == 0) {
          slots.Leave(&call.ticket);
          std::optional<absl::Status> told = call.Await();
          ASSERT_TRUE(told.has_value());
          if (told->ok()) ++granted;
          if (told->code() == absl::StatusCode::kCancelled) ++cancelled;
          continue;
        }
        std::optional<absl::Status> told = call.Await(milliseconds(20000));
        ASSERT_TRUE(told.has_value() && told->ok());
        ++granted;
        const int now = ++holding;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        const int mine = ++user_holding[user];
        seen = user_most.load();
        while (mine > seen && !user_most.compare_exchange_weak(seen, mine)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --user_holding[user];
        --holding;
        slots.Leave(&call.ticket);
        EXPECT_EQ(call.calls, 1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(most, kSlots);
  EXPECT_LE(user_most, kPerUser);
  EXPECT_EQ(granted + cancelled, kThreads * kRounds);
  EXPECT_EQ(slots.users(), 0);
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(slots.queued(), 0);
}

}  // namespace
}  // namespace dvexport::pipeline
