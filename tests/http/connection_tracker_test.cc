#include "service/http/connection_tracker.h"

#include <chrono>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "service/http/http_connection.h"

namespace dvexport::http {
namespace {

// A connection that only counts what it is told.
class FakeConnection final : public HttpConnection {
 public:
  void Ready() override {}
  void Abort(const absl::Status& /*status*/) override {}
  void Stop() override { ++stops; }
  void CancelExport() override {}
  void EvictSlowHead() override { ++evictions; }

  int stops = 0;
  int evictions = 0;

 protected:
  void Begin() override {}
};

TEST(ConnectionTrackerTest, AdmitsUpToBothLimits) {
  ConnectionTracker tracker(/*max_connections=*/3, /*max_per_peer=*/2, /*max_pending_heads=*/2);
  EXPECT_TRUE(tracker.Admit("10.0.0.1"));
  EXPECT_TRUE(tracker.Admit("10.0.0.1"));
  EXPECT_FALSE(tracker.Admit("10.0.0.1"));  // per peer
  EXPECT_TRUE(tracker.Admit("10.0.0.2"));
  EXPECT_FALSE(tracker.Admit("10.0.0.3"));  // in all
  EXPECT_EQ(tracker.connections(), 3);
  const auto connection = std::make_shared<FakeConnection>();
  tracker.Add(connection);
  tracker.Remove(connection.get(), "10.0.0.1");
  EXPECT_EQ(tracker.connections(), 2);
  EXPECT_TRUE(tracker.Admit("10.0.0.1"));
}

TEST(ConnectionTrackerTest, TheLongestWaitingHeadIsEvictedBeyondTheLimit) {
  ConnectionTracker tracker(10, 10, /*max_pending_heads=*/2);
  const auto first = std::make_shared<FakeConnection>();
  const auto second = std::make_shared<FakeConnection>();
  const auto third = std::make_shared<FakeConnection>();
  EXPECT_EQ(tracker.HeadStarted(first), nullptr);
  EXPECT_EQ(tracker.HeadStarted(first), nullptr);  // counted once
  EXPECT_EQ(tracker.HeadStarted(second), nullptr);
  EXPECT_EQ(tracker.pending_heads(), 2);
  EXPECT_EQ(tracker.HeadStarted(third), first);
  EXPECT_EQ(tracker.pending_heads(), 2);
  EXPECT_EQ(tracker.evicted_heads(), 1);
  tracker.HeadEnded(second.get());
  tracker.HeadEnded(first.get());  // no longer counted: nothing happens
  EXPECT_EQ(tracker.pending_heads(), 1);
  EXPECT_EQ(tracker.HeadStarted(second), nullptr);
  EXPECT_EQ(tracker.evicted_heads(), 1);
}

TEST(ConnectionTrackerTest, StopListsTheOpenConnectionsAndAdmitsNoMore) {
  ConnectionTracker tracker(10, 10, 5);
  ASSERT_TRUE(tracker.Admit("::1"));
  const auto connection = std::make_shared<FakeConnection>();
  tracker.Add(connection);
  EXPECT_FALSE(tracker.stopping());
  const std::vector<std::shared_ptr<HttpConnection>> listed = tracker.Stop();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0], connection);
  EXPECT_TRUE(tracker.stopping());
  EXPECT_FALSE(tracker.Admit("::1"));
}

TEST(ConnectionTrackerTest, WaitsForExportsUntilTheDeadline) {
  ConnectionTracker tracker(10, 10, 5);
  EXPECT_TRUE(tracker.WaitForExports(std::chrono::system_clock::now()));
  tracker.ExportStarted();
  EXPECT_FALSE(
      tracker.WaitForExports(std::chrono::system_clock::now() + std::chrono::milliseconds(10)));
  tracker.ExportEnded();
  EXPECT_TRUE(tracker.WaitForExports(std::chrono::system_clock::now()));
  tracker.ConnectionFailed("192.0.2.1", "a test's failure");
  EXPECT_EQ(tracker.failures(), 1);
}

}  // namespace
}  // namespace dvexport::http
