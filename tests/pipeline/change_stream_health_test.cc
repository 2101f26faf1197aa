// ChangeStreamsHealthy and the ChangeStreamHealth observer: what grpc.health.v1.Health reports as
// dvexport.ChangeStreams after each poll of the change stream monitor.

#include "service/pipeline/change_stream_health.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dvexport::pipeline {
namespace {

ChangeStreamGauges Slot(const std::string& name, bool lost = false, bool over_warning = false) {
  return {.slot = name,
          .retained_wal_bytes = 1 << 20,
          .idle_seconds = 5,
          .lost = lost,
          .over_warning = over_warning};
}

TEST(ChangeStreamsHealthyTest, HealthyWithoutSlotsWhateverTheKind) {
  EXPECT_TRUE(ChangeStreamsHealthy(true, {}));
  EXPECT_TRUE(ChangeStreamsHealthy(false, {}));
}

TEST(ChangeStreamsHealthyTest, HealthySlotsOnADatabaseThatGivesStreamTokens) {
  EXPECT_TRUE(ChangeStreamsHealthy(true, {Slot("a"), Slot("b")}));
}

TEST(ChangeStreamsHealthyTest, ALostSlotIsUnhealthy) {
  EXPECT_FALSE(ChangeStreamsHealthy(true, {Slot("a"), Slot("b", /*lost=*/true)}));
}

TEST(ChangeStreamsHealthyTest, ASlotOverTheWarningIsUnhealthy) {
  EXPECT_FALSE(
      ChangeStreamsHealthy(true, {Slot("a", /*lost=*/false, /*over_warning=*/true), Slot("b")}));
}

// wal_level lowered, the publication dropped, the privilege revoked: the slots' consumers get
// refused deltas.
TEST(ChangeStreamsHealthyTest, SlotsWithoutStreamTokensAreUnhealthy) {
  EXPECT_FALSE(ChangeStreamsHealthy(false, {Slot("a")}));
}

class RecordingObserver final : public ChangeStreamObserver {
 public:
  void ChangeTokenKindPolled(bool stream) override { kinds.push_back(stream); }
  void ChangeStreamsPolled(const std::vector<ChangeStreamGauges>& streams) override {
    polls.push_back(streams.size());
  }

  std::vector<bool> kinds;
  std::vector<size_t> polls;
};

TEST(ChangeStreamHealthTest, PassesEveryPollOnAndReportsItsHealth) {
  RecordingObserver next;
  std::vector<bool> reported;
  ChangeStreamHealth health(&next, [&](bool healthy) { reported.push_back(healthy); });

  health.ChangeTokenKindPolled(true);
  health.ChangeStreamsPolled({Slot("a")});
  health.ChangeTokenKindPolled(true);
  health.ChangeStreamsPolled({Slot("a", /*lost=*/true)});
  health.ChangeTokenKindPolled(false);
  health.ChangeStreamsPolled({Slot("a")});
  health.ChangeTokenKindPolled(false);
  health.ChangeStreamsPolled({});

  EXPECT_EQ(next.kinds, (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(next.polls, (std::vector<size_t>{1, 1, 1, 0}));
  EXPECT_EQ(reported, (std::vector<bool>{true, false, false, true}));
}

TEST(ChangeStreamHealthTest, WorksWithoutMetrics) {
  std::vector<bool> reported;
  ChangeStreamHealth health(nullptr, [&](bool healthy) { reported.push_back(healthy); });
  health.ChangeTokenKindPolled(true);
  health.ChangeStreamsPolled({Slot("a", /*lost=*/false, /*over_warning=*/true)});
  EXPECT_EQ(reported, (std::vector<bool>{false}));
}

}  // namespace
}  // namespace dvexport::pipeline
