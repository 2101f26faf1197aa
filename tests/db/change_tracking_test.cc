#include "service/db/change_tracking.h"

#include <gtest/gtest.h>

#include <string>

namespace dvexport::db {
namespace {

constexpr uint64_t kCluster = 7714004448367194327u;

dhis2::ChangeToken Token(uint64_t xmin, uint64_t wal_lsn) {
  return dhis2::ChangeToken{kCluster, xmin, wal_lsn};
}

SnapshotFacts Snapshot(uint64_t xmax) {
  SnapshotFacts facts;
  facts.token = Token(xmax - 5, 0);
  facts.xmax = xmax;
  return facts;
}

bool Contains(const absl::Status& status, const std::string& text) {
  return std::string(status.message()).find(text) != std::string::npos;
}

TEST(CheckSnapshotTest, AcceptsTokensUpToTheSafeAgeAcrossEpochs) {
  const uint64_t epoch5 = uint64_t{5} << 32;
  EXPECT_TRUE(CheckSnapshot(Token(epoch5 + 100, 0), Snapshot(epoch5 + 100)).ok());
  // The token in the previous epoch, the snapshot in the next: 64-bit xids compare directly.
  EXPECT_TRUE(CheckSnapshot(Token(epoch5 - 1000, 0), Snapshot(epoch5 + 1000)).ok());
  EXPECT_TRUE(CheckSnapshot(Token(epoch5, 0), Snapshot(epoch5 + kMaxChangeTokenAge)).ok());
}

TEST(CheckSnapshotTest, RefusesATokenTooOldToJudge) {
  const uint64_t epoch5 = uint64_t{5} << 32;
  absl::Status status = CheckSnapshot(Token(epoch5, 0), Snapshot(epoch5 + kMaxChangeTokenAge + 1));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(status, "changes_since: the token is too old to judge")) << status;
  EXPECT_TRUE(Contains(status, "export everything again")) << status;
  // A token of an earlier epoch with a larger 32-bit xid is not mistaken for a recent one.
  status =
      CheckSnapshot(Token((uint64_t{4} << 32) + 4000000000u, 0), Snapshot(epoch5 + 2000000000u));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
}

TEST(CheckSnapshotTest, RefusesAnotherClusterAndASnapshotOlderThanTheToken) {
  SnapshotFacts other = Snapshot(1000);
  other.token.system_identifier = kCluster + 1;
  absl::Status status = CheckSnapshot(Token(900, 0), other);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(status, "another database cluster")) << status;

  status = CheckSnapshot(Token(2000, 0), Snapshot(1000));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(status, "retry later")) << status;
}

TEST(CheckWalPositionTest, WaitsOnlyForAReplicaBehindTheToken) {
  bool retry = true;
  EXPECT_TRUE(CheckWalPosition(Token(1, 5000), WalPosition{kCluster, true, 5000}, &retry).ok());
  EXPECT_FALSE(retry);
  EXPECT_TRUE(CheckWalPosition(Token(1, 5000), WalPosition{kCluster, false, 9000}, &retry).ok());

  absl::Status status =
      CheckWalPosition(Token(1, 0x100000020), WalPosition{kCluster, true, 0x10}, &retry);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(retry);
  EXPECT_TRUE(Contains(status, "replayed WAL up to 0/10 but the token's export saw up to 1/20"))
      << status;

  status = CheckWalPosition(Token(1, 9000), WalPosition{kCluster, false, 5000}, &retry);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(retry);
  EXPECT_TRUE(Contains(status, "this primary has written only up to")) << status;

  status = CheckWalPosition(Token(1, 0), WalPosition{kCluster - 1, false, 5000}, &retry);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(retry);
  EXPECT_TRUE(Contains(status, "another database cluster")) << status;
}

}  // namespace
}  // namespace dvexport::db
