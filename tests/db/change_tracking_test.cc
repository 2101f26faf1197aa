#include "service/db/change_tracking.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace dvexport::db {
namespace {

constexpr uint64_t kCluster = 7714004448367194327u;
constexpr uint32_t kDatabase = 16384;
const uint64_t kName = dhis2::DatabaseNameHash("dhis2");

dhis2::ChangeToken Token(uint64_t xmin, uint64_t wal_lsn) {
  return dhis2::ChangeToken{kCluster, kDatabase, kName, xmin, wal_lsn};
}

// A snapshot of the token's database, on a primary unless "in_recovery".
SnapshotFacts Snapshot(uint64_t xmax, bool in_recovery = false) {
  SnapshotFacts facts;
  facts.token = Token(xmax - 5, 0);
  facts.xmax = xmax;
  facts.in_recovery = in_recovery;
  return facts;
}

WalPosition Position(bool in_recovery, uint64_t lsn) {
  return WalPosition{kCluster, kDatabase, kName, in_recovery, lsn};
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

TEST(CheckSnapshotTest, RefusesAnotherClusterOrDatabase) {
  SnapshotFacts other = Snapshot(1000);
  other.token.system_identifier = kCluster + 1;
  absl::Status status = CheckSnapshot(Token(900, 0), other);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(status, "another database cluster")) << status;

  // Another OID (another database, a copy, a restored dump), or the same OID under another name
  // (renamed, or an OID used again after the database was dropped).
  for (const auto& [oid, name] :
       {std::pair{kDatabase + 1, kName},
        std::pair{kDatabase, dhis2::DatabaseNameHash("dhis2_training")}}) {
    other = Snapshot(1000);
    other.token.database_oid = oid;
    other.token.database_name_hash = name;
    status = CheckSnapshot(Token(900, 0), other);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(Contains(status, "changes_since: the token belongs to another database")) << status;
    EXPECT_TRUE(Contains(status, "export everything again")) << status;
  }
}

TEST(CheckSnapshotTest, ATokenAheadIsUnavailableOnAReplicaOnly) {
  // A replica's replay has not reached the token's snapshot yet: waiting helps.
  absl::Status status = CheckSnapshot(Token(2000, 0), Snapshot(1000, /*in_recovery=*/true));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(status, "changes_since: this replica's snapshot")) << status;
  EXPECT_TRUE(Contains(status, "retry later")) << status;
  // A primary's xmax only grows: a token ahead of it is not of its history.
  status = CheckSnapshot(Token(2000, 0), Snapshot(1000));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(status,
                       "changes_since: the token's snapshot (transaction 2000) is ahead "
                       "of this primary's (next transaction 1000)"))
      << status;
  EXPECT_TRUE(Contains(status, "export everything again")) << status;
  // Equal is not ahead: nothing has happened since.
  EXPECT_TRUE(CheckSnapshot(Token(1000, 0), Snapshot(1000)).ok());
}

TEST(CheckWalPositionTest, WaitsOnlyForAReplicaBehindTheToken) {
  bool retry = true;
  EXPECT_TRUE(CheckWalPosition(Token(1, 5000), Position(true, 5000), &retry).ok());
  EXPECT_FALSE(retry);
  EXPECT_TRUE(CheckWalPosition(Token(1, 5000), Position(false, 9000), &retry).ok());

  absl::Status status = CheckWalPosition(Token(1, 0x100000020), Position(true, 0x10), &retry);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(retry);
  EXPECT_TRUE(Contains(status, "replayed WAL up to 0/10 but the token's export saw up to 1/20"))
      << status;

  status = CheckWalPosition(Token(1, 9000), Position(false, 5000), &retry);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(retry);
  EXPECT_TRUE(Contains(status, "this primary has written only up to")) << status;

  WalPosition other = Position(false, 5000);
  other.system_identifier = kCluster - 1;
  status = CheckWalPosition(Token(1, 0), other, &retry);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(retry);
  EXPECT_TRUE(Contains(status, "another database cluster")) << status;

  // Another database is judged before the WAL position: a replica does not wait for it.
  other = Position(true, 10);
  other.database_oid = kDatabase + 1;
  status = CheckWalPosition(Token(1, 9000), other, &retry);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(retry);
  EXPECT_TRUE(Contains(status, "another database of this cluster")) << status;
}

}  // namespace
}  // namespace dvexport::db
