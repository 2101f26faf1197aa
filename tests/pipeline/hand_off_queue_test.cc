#include "service/pipeline/hand_off_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace dvexport::pipeline {
namespace {

using Queue = HandOffQueue<int>;

TEST(HandOffQueueTest, DeliversItemsInPushOrderThenDone) {
  int ready_calls = 0;
  Queue queue(/*capacity=*/4, /*producers=*/1, [&] { ++ready_calls; });
  EXPECT_TRUE(queue.Push(1));
  EXPECT_TRUE(queue.Push(2));
  queue.Close(absl::OkStatus());
  int item = 0;
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  EXPECT_EQ(item, 1);
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  EXPECT_EQ(item, 2);
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kDone);
  EXPECT_TRUE(queue.status().ok());
  EXPECT_EQ(ready_calls, 1);  // for the first item only: the consumer never found it empty
}

TEST(HandOffQueueTest, EndWithoutItemsWakesTheIdleConsumer) {
  int ready_calls = 0;
  Queue queue(4, 1, [&] { ++ready_calls; });
  queue.Close(absl::NotFoundError("no such data set"));
  EXPECT_EQ(ready_calls, 1);
  int item = 0;
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kDone);
  EXPECT_EQ(queue.status().code(), absl::StatusCode::kNotFound);
}

// The consumer may destroy the queue once it saw kDone, while the producer that closed it is
// still inside "ready" (an HTTP connection's post to its event loop, whose io_context must outlive
// it): the destructor waits for that call. AddressSanitizer caught the race this prevents.
TEST(HandOffQueueTest, DestroyingTheQueueWaitsForAReadyCallOfAnotherThread) {
  std::atomic<bool> in_ready{false};
  std::atomic<bool> ready_returned{false};
  auto queue = std::make_unique<Queue>(4, 1, [&] {
    in_ready = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ready_returned = true;
  });
  std::thread producer([&] { queue->Close(absl::OkStatus()); });
  while (!in_ready) std::this_thread::yield();
  int item = 0;
  ASSERT_EQ(queue->TryPop(&item), Queue::Next::kDone);
  queue.reset();
  EXPECT_TRUE(ready_returned);
  producer.join();
}

// A consumer whose "ready" itself ends the export (finds kDone and destroys the queue) is not
// waited for by its own destructor: no deadlock, and the notifying call touches nothing after.
TEST(HandOffQueueTest, ReadyThatDestroysTheQueueItselfDoesNotWaitForItself) {
  std::unique_ptr<Queue> queue;
  bool destroyed = false;
  queue = std::make_unique<Queue>(4, 1, [&] {
    int item = 0;
    if (queue->TryPop(&item) == Queue::Next::kDone) {
      queue.reset();
      destroyed = true;
    }
  });
  queue->Close(absl::OkStatus());
  EXPECT_TRUE(destroyed);
  EXPECT_EQ(queue, nullptr);
}

TEST(HandOffQueueTest, EmptyPopArmsReadyForTheNextPushOnlyOnce) {
  int ready_calls = 0;
  Queue queue(4, 1, [&] { ++ready_calls; });
  int item = 0;
  EXPECT_TRUE(queue.Push(6));
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  ready_calls = 0;
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kEmpty);
  EXPECT_TRUE(queue.Push(7));
  EXPECT_EQ(ready_calls, 1);
  EXPECT_TRUE(queue.Push(8));
  EXPECT_EQ(ready_calls, 1);  // not armed again until a TryPop finds nothing
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kEmpty);
  queue.Close(absl::OkStatus());
  EXPECT_EQ(ready_calls, 2);  // the last close wakes the waiting consumer
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kDone);
}

TEST(HandOffQueueTest, DoneOnlyOnceEveryProducerClosed) {
  Queue queue(4, 1, [] {});
  queue.AddProducers(2);
  int item = 0;
  queue.Close(absl::OkStatus());
  queue.Close(absl::OkStatus());
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kEmpty);
  queue.Close(absl::OkStatus());
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kDone);
}

TEST(HandOffQueueTest, PushWaitsWhileFullUntilAnItemIsTaken) {
  Queue queue(/*capacity=*/2, 1, [] {});
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(queue.Push(2));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(queue.Push(3));
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(pushed.load());
  int item = 0;
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  producer.join();
  EXPECT_TRUE(pushed.load());
}

TEST(HandOffQueueTest, StopReleasesAWaitingProducerAndDropsQueuedItems) {
  Queue queue(1, 1, [] {});
  ASSERT_TRUE(queue.Push(1));
  std::atomic<bool> result{true};
  std::thread producer([&] { result = queue.Push(2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  queue.Stop(absl::CancelledError("client gone"));
  producer.join();
  EXPECT_FALSE(result.load());
  EXPECT_FALSE(queue.Push(3));
  EXPECT_TRUE(queue.stopped());
  int item = 0;
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kEmpty);  // dropped; the producer is still open
  queue.Close(absl::OkStatus());
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kDone);
  EXPECT_EQ(queue.status().code(), absl::StatusCode::kCancelled);
}

TEST(HandOffQueueTest, FirstFailureWinsOverLaterFailuresAndStop) {
  Queue queue(4, 3, [] {});
  queue.Close(absl::NotFoundError("first"));
  EXPECT_TRUE(queue.stopped());
  EXPECT_FALSE(queue.Push(1));
  queue.Stop(absl::CancelledError("later stop"));
  queue.Close(absl::InternalError("second"));
  queue.Close(absl::OkStatus());
  int item = 0;
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kDone);
  EXPECT_EQ(queue.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(queue.status().message(), "first");
}

TEST(HandOffQueueTest, StopAfterEveryProducerClosedWakesAWaitingConsumer) {
  int ready_calls = 0;
  Queue queue(4, 1, [&] { ++ready_calls; });
  int item = 0;
  ASSERT_TRUE(queue.Push(1));
  ready_calls = 0;
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kEmpty);
  queue.Stop(absl::CancelledError("gone"));
  EXPECT_EQ(ready_calls, 0);  // a producer is still open: nothing to finish yet
  queue.Close(absl::OkStatus());
  EXPECT_EQ(ready_calls, 1);
  EXPECT_EQ(queue.TryPop(&item), Queue::Next::kDone);
}

// Many producers and a polling consumer: every item arrives exactly once and in each producer's
// own order, and the consumer ends with kDone.
TEST(HandOffQueueTest, ConcurrentProducersEachInOrderExactlyOnce) {
  constexpr int kProducers = 4;
  constexpr int kItems = 5000;
  Queue queue(3, kProducers, [] {});
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&queue, p] {
      for (int i = 0; i < kItems; ++i) ASSERT_TRUE(queue.Push(p * kItems + i));
      queue.Close(absl::OkStatus());
    });
  }
  std::vector<int> last(kProducers, -1);
  int received = 0;
  int item = 0;
  while (true) {
    const Queue::Next next = queue.TryPop(&item);
    if (next == Queue::Next::kDone) break;
    if (next == Queue::Next::kEmpty) {
      std::this_thread::yield();
      continue;
    }
    const int producer = item / kItems;
    EXPECT_GT(item % kItems, last[producer]);
    last[producer] = item % kItems;
    ++received;
  }
  for (std::thread& t : producers) t.join();
  EXPECT_EQ(received, kProducers * kItems);
  EXPECT_TRUE(queue.status().ok());
}

using std::chrono::milliseconds;

TEST(HandOffQueueTest, PushGivesUpOnAConsumerThatMakesNoProgress) {
  Queue queue(/*capacity=*/1, /*producers=*/1, [] {}, milliseconds(100),
              absl::DeadlineExceededError("stalled"));
  // The stall clock starts when the first message is queued for a consumer with nothing to send:
  // the wait is measured from before that Push, never from after it.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(queue.Push(1));
  EXPECT_FALSE(queue.Push(2));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(100));
  EXPECT_TRUE(queue.stalled());
  EXPECT_TRUE(queue.stopped());
  EXPECT_EQ(queue.status(), absl::DeadlineExceededError("stalled"));
  // A stall is not a failure of its own: a later failure does not replace it.
  queue.Close(absl::InternalError("later"));
  EXPECT_EQ(queue.status(), absl::DeadlineExceededError("stalled"));
}

TEST(HandOffQueueTest, ASlowConsumerThatMakesProgressNeverStalls) {
  Queue queue(
      1, 1, [] {}, milliseconds(300));
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    int item = 0;
    while (!done) {
      std::this_thread::sleep_for(milliseconds(100));
      if (queue.TryPop(&item) == Queue::Next::kItem) {
        std::this_thread::sleep_for(milliseconds(100));  // the write takes a while
        queue.Sent(0);
      }
    }
  });
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(queue.Push(i)) << i;
  EXPECT_TRUE(queue.WaitUntilSent());
  done = true;
  consumer.join();
  EXPECT_FALSE(queue.stalled());
}

TEST(HandOffQueueTest, AnIdleConsumerStartsItsStallClockWithTheNextPush) {
  Queue queue(
      1, 1, [] {}, milliseconds(200));
  // Nothing to send for longer than the stall timeout (a slow query, say).
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_TRUE(queue.Push(1));
  std::thread consumer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    int item = 0;
    EXPECT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  });
  EXPECT_TRUE(queue.Push(2));
  consumer.join();
  EXPECT_FALSE(queue.stalled());
}

TEST(HandOffQueueTest, WaitUntilSentWaitsForTheLastWriteAndStallsWithoutIt) {
  Queue queue(
      4, 1, [] {}, milliseconds(150));
  EXPECT_TRUE(queue.Push(1));
  int item = 0;
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    queue.Sent(0);
  });
  EXPECT_TRUE(queue.WaitUntilSent());
  writer.join();

  // Taken, never sent: the client stopped reading before the last message.
  EXPECT_TRUE(queue.Push(2));
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  EXPECT_FALSE(queue.WaitUntilSent());
  EXPECT_TRUE(queue.stalled());
}

// A transport that took a message holds it until its client has read it, and may take nothing
// more meanwhile: the bytes sent buy their reading time at the minimum rate, then the timeout.
TEST(HandOffQueueTest, SentBytesGiveTheConsumerTimeToReadThemAtTheMinimumRate) {
  // 300 bytes at 1000 bytes/s: 300 ms of credit, then 100 ms of timeout.
  Queue queue(4, 1, [] {}, milliseconds(100), absl::DeadlineExceededError("stalled"),
              {.bytes_per_second = 1000, .max_bytes = 1000});
  EXPECT_TRUE(queue.Push(1));
  int item = 0;
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  const auto sent = std::chrono::steady_clock::now();
  queue.Sent(300);
  EXPECT_TRUE(queue.Push(2));
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);  // its write never completes
  EXPECT_FALSE(queue.WaitUntilSent());
  const auto waited = std::chrono::steady_clock::now() - sent;
  EXPECT_GE(waited, milliseconds(400));
  EXPECT_LT(waited, milliseconds(2000));
  EXPECT_TRUE(queue.stalled());
}

TEST(HandOffQueueTest, UnreadBytesCountUpToTheCreditLimit) {
  // 10,000 bytes sent, 200 counted: 200 ms of credit, not 10 s.
  Queue queue(4, 1, [] {}, milliseconds(100), absl::DeadlineExceededError("stalled"),
              {.bytes_per_second = 1000, .max_bytes = 200});
  int item = 0;
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(queue.Push(i));
    ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
    queue.Sent(1000);
  }
  const auto sent = std::chrono::steady_clock::now();
  EXPECT_TRUE(queue.Push(10));
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  EXPECT_FALSE(queue.WaitUntilSent());
  const auto waited = std::chrono::steady_clock::now() - sent;
  EXPECT_GE(waited, milliseconds(250));
  EXPECT_LT(waited, milliseconds(2000));
}

TEST(HandOffQueueTest, StopEndsWaitUntilSent) {
  Queue queue(4, 1, [] {});
  EXPECT_TRUE(queue.Push(1));
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    queue.Stop(absl::CancelledError("client gone"));
  });
  EXPECT_FALSE(queue.WaitUntilSent());
  stopper.join();
  EXPECT_FALSE(queue.stalled());
}

// While others wait for its slot (ExportSlots' contention), a consumer that makes no progress is
// given up on after the contended timeout, with its own status; the producer waiting with the
// long timeout is woken for it.
TEST(HandOffQueueTest, ContentionEndsAStalledConsumerAfterTheContendedTimeout) {
  Queue queue(1, 1, [] {}, milliseconds(60000), absl::DeadlineExceededError("stalled"), {},
              {.timeout = milliseconds(200),
               .status = absl::DeadlineExceededError("stalled while others waited")});
  EXPECT_TRUE(queue.Push(1));
  const auto start = std::chrono::steady_clock::now();
  std::thread contention([&] {
    std::this_thread::sleep_for(milliseconds(500));
    queue.SetContended(true);
  });
  // Past the contended timeout already when the contention starts: given up on at once.
  EXPECT_FALSE(queue.Push(2));
  const auto waited = std::chrono::steady_clock::now() - start;
  contention.join();
  EXPECT_GE(waited, milliseconds(500));
  EXPECT_LT(waited, milliseconds(5000));
  EXPECT_TRUE(queue.stalled());
  EXPECT_TRUE(queue.contended_stall());
  EXPECT_EQ(queue.status(), absl::DeadlineExceededError("stalled while others waited"));
}

TEST(HandOffQueueTest, ContendedTimeoutRunsFromTheLastProgress) {
  Queue queue(1, 1, [] {}, milliseconds(60000), absl::DeadlineExceededError("stalled"), {},
              {.timeout = milliseconds(300), .status = absl::DeadlineExceededError("contended")});
  queue.SetContended(true);
  EXPECT_TRUE(queue.Push(1));
  // The consumer takes a message every 100 ms: never stalled, however long the contention.
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    int item = 0;
    while (!done) {
      std::this_thread::sleep_for(milliseconds(100));
      if (queue.TryPop(&item) == Queue::Next::kItem) queue.Sent(0);
    }
  });
  for (int i = 2; i < 10; ++i) EXPECT_TRUE(queue.Push(i)) << i;
  EXPECT_TRUE(queue.WaitUntilSent());
  done = true;
  consumer.join();
  EXPECT_FALSE(queue.stalled());
  // Then it stops: ended 300 ms after its last progress.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(queue.Push(10));
  EXPECT_FALSE(queue.Push(11));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(300));
  EXPECT_TRUE(queue.contended_stall());
}

TEST(HandOffQueueTest, ContentionThatEndsBringsBackTheStallTimeout) {
  Queue queue(1, 1, [] {}, milliseconds(60000), absl::DeadlineExceededError("stalled"), {},
              {.timeout = milliseconds(200), .status = absl::DeadlineExceededError("contended")});
  queue.SetContended(true);
  queue.SetContended(false);
  EXPECT_TRUE(queue.Push(1));
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(700));
    queue.Stop(absl::CancelledError("client gone"));
  });
  EXPECT_FALSE(queue.Push(2));  // stopped by Stop, not stalled
  stopper.join();
  EXPECT_FALSE(queue.stalled());
  EXPECT_FALSE(queue.contended_stall());
  EXPECT_EQ(queue.status().code(), absl::StatusCode::kCancelled);
}

// Credit (bytes the transport took, at the minimum rate) counts for at most the contended timeout
// while contended: a client holding megabytes unread is not given minutes.
TEST(HandOffQueueTest, CreditCountsForAtMostTheContendedTimeout) {
  // 1,000,000 bytes at 1000 bytes/s: 1000 s of credit uncontended.
  Queue queue(4, 1, [] {}, milliseconds(100), absl::DeadlineExceededError("stalled"),
              {.bytes_per_second = 1000, .max_bytes = 1000000},
              {.timeout = milliseconds(200), .status = absl::DeadlineExceededError("contended")});
  queue.SetContended(true);
  EXPECT_TRUE(queue.Push(1));
  int item = 0;
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);
  const auto sent = std::chrono::steady_clock::now();
  queue.Sent(1000000);
  EXPECT_TRUE(queue.Push(2));
  ASSERT_EQ(queue.TryPop(&item), Queue::Next::kItem);  // its write never completes
  EXPECT_FALSE(queue.WaitUntilSent());
  const auto waited = std::chrono::steady_clock::now() - sent;
  // 200 ms of credit, then 200 ms of timeout.
  EXPECT_GE(waited, milliseconds(400));
  EXPECT_LT(waited, milliseconds(3000));
  EXPECT_TRUE(queue.contended_stall());
  EXPECT_EQ(queue.status(), absl::DeadlineExceededError("contended"));
}

// A contended timeout longer than the stall timeout changes nothing: the stall timeout, with its
// own status, comes first.
TEST(HandOffQueueTest, ShorterStallTimeoutWinsOverALongerContendedOne) {
  Queue queue(1, 1, [] {}, milliseconds(100), absl::DeadlineExceededError("stalled"), {},
              {.timeout = milliseconds(60000), .status = absl::DeadlineExceededError("contended")});
  queue.SetContended(true);
  EXPECT_TRUE(queue.Push(1));
  EXPECT_FALSE(queue.Push(2));
  EXPECT_TRUE(queue.stalled());
  EXPECT_FALSE(queue.contended_stall());
  EXPECT_EQ(queue.status(), absl::DeadlineExceededError("stalled"));
}

}  // namespace
}  // namespace dvexport::pipeline
