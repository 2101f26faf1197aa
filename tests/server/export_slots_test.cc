#include "service/server/export_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace dvexport::server {
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

  std::atomic<int> waited{0};
  std::atomic<int> waited_in_queue{0};
  std::atomic<int> refused[3] = {0, 0, 0};
};

ExportSlotOptions Options(int slots, int max_queued, milliseconds max_wait) {
  return {.slots = slots, .max_queued = max_queued, .max_wait = max_wait};
}

TEST(ExportSlotsTest, GrantsAtOnceWhileSlotsAreFree) {
  CountingObserver observer;
  ExportSlots slots(Options(2, 4, milliseconds(10000)), &observer);
  Call a, b;
  ASSERT_TRUE(slots.Join(&a.ticket, kNoDeadline, a.Callback()).ok());
  ASSERT_TRUE(slots.Join(&b.ticket, kNoDeadline, b.Callback()).ok());
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
  ASSERT_TRUE(slots.Join(&holder.ticket, kNoDeadline, holder.Callback()).ok());
  std::vector<std::unique_ptr<Call>> waiters;
  for (int i = 0; i < 5; ++i) {
    waiters.push_back(std::make_unique<Call>());
    ASSERT_TRUE(slots.Join(&waiters[i]->ticket, kNoDeadline, waiters[i]->Callback()).ok());
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
  ASSERT_TRUE(slots.Join(&holder.ticket, kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&first.ticket, kNoDeadline, first.Callback()).ok());
  slots.Leave(&holder.ticket);
  ASSERT_TRUE(slots.Join(&second.ticket, kNoDeadline, second.Callback()).ok());
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
  ASSERT_TRUE(slots.Join(&holder.ticket, kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&w1.ticket, kNoDeadline, w1.Callback()).ok());
  ASSERT_TRUE(slots.Join(&w2.ticket, kNoDeadline, w2.Callback()).ok());
  const auto start = Clock::now();
  absl::Status status = slots.Join(&refused.ticket, kNoDeadline, refused.Callback());
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
  ASSERT_TRUE(slots.Join(&holder.ticket, kNoDeadline, holder.Callback()).ok());
  EXPECT_EQ(slots.Join(&refused.ticket, kNoDeadline, refused.Callback()).code(),
            absl::StatusCode::kResourceExhausted);
  slots.Leave(&holder.ticket);
}

TEST(ExportSlotsTest, WaitThatRunsOutIsResourceExhaustedOnTheTimerThread) {
  CountingObserver observer;
  ExportSlots slots(Options(1, 4, milliseconds(200)), &observer);
  Call holder, waiter;
  ASSERT_TRUE(slots.Join(&holder.ticket, kNoDeadline, holder.Callback()).ok());
  const auto start = Clock::now();
  ASSERT_TRUE(slots.Join(&waiter.ticket, kNoDeadline, waiter.Callback()).ok());
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
  ASSERT_TRUE(slots.Join(&holder.ticket, kNoDeadline, holder.Callback()).ok());
  // A waiter with no deadline first: the timer must still wake for the earlier one behind it.
  ASSERT_TRUE(slots.Join(&later.ticket, kNoDeadline, later.Callback()).ok());
  const auto start = Clock::now();
  ASSERT_TRUE(slots
                  .Join(&waiter.ticket, std::chrono::system_clock::now() + milliseconds(300),
                        waiter.Callback())
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
  ASSERT_TRUE(slots.Join(&holder.ticket, kNoDeadline, holder.Callback()).ok());
  ASSERT_TRUE(slots.Join(&waiter.ticket, kNoDeadline, waiter.Callback()).ok());
  slots.Leave(&waiter.ticket);
  ASSERT_TRUE(waiter.Now().has_value());
  EXPECT_EQ(waiter.Now()->code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(waiter.thread, std::this_thread::get_id());
  EXPECT_EQ(slots.queued(), 0);
  ASSERT_TRUE(slots.Join(&next.ticket, kNoDeadline, next.Callback()).ok());
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
  EXPECT_EQ(slots.Join(&call.ticket, kNoDeadline, call.Callback()).code(),
            absl::StatusCode::kCancelled);
  EXPECT_FALSE(call.Now().has_value());
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(slots.queued(), 0);
}

// Many threads join, hold briefly and leave; some leave while waiting. Every ticket is told
// exactly once, never more than "slots" hold at once, and nothing is left at the end.
TEST(ExportSlotsTest, ConcurrentJoinsAndLeavesKeepTheBound) {
  constexpr int kSlots = 3;
  constexpr int kThreads = 16;
  constexpr int kRounds = 50;
  ExportSlots slots(Options(kSlots, kThreads, milliseconds(10000)), nullptr);
  std::atomic<int> holding{0}, most{0}, granted{0}, cancelled{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        Call call;
        ASSERT_TRUE(slots.Join(&call.ticket, kNoDeadline, call.Callback()).ok());
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
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --holding;
        slots.Leave(&call.ticket);
        EXPECT_EQ(call.calls, 1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(most, kSlots);
  EXPECT_EQ(granted + cancelled, kThreads * kRounds);
  EXPECT_EQ(slots.running(), 0);
  EXPECT_EQ(slots.queued(), 0);
}

}  // namespace
}  // namespace dvexport::server
