// Exports from a streaming hot standby (issue 11, "read replicas"): a real primary and a real
// standby of it (tests/reliability/standby_pg.sh), a dvexport server in-process reading from
// each, real gRPC over loopback. docs/DEPLOYMENT.md's read-replica section says what they prove.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/server/export_server.h"
#include "tests/reliability/reliability_support.h"
#include "tests/reliability/standby_pair.h"
#include "tests/support/export_readers.h"
#include "tests/support/read_plans.h"

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::FileExport;
using testing::OneCopy;
using testing::SlicedPlan;
using testing::SortedValues;

// A dvexport server in-process on "conninfo".
class Server {
 public:
  Server(const std::string& conninfo, const db::ReadPlanOptions& plan) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = conninfo;
    options.health_probe_interval = milliseconds(200);
    options.service.chunk_size = 16 * 1024;
    options.service.read_plan = plan;
    auto started = server::ExportServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    server_ = *std::move(started);
    stub_ = v1::DataValueExport::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials()));
  }

  // The whole file; "after_chunk(n)" runs after the n-th data chunk (1-based).
  FileExport ExportFile(const v1::ExportFileRequest& request,
                        const std::function<void(int)>& after_chunk = nullptr) {
    return testing::ReadFileExport(stub_.get(), request, seconds(120), after_chunk);
  }

  // Every value of the typed stream, serialized, sorted.
  std::vector<std::string> StreamValues(const v1::ExportRequest& query, grpc::Status* status) {
    return testing::ReadSortedStreamValues(stub_.get(), query, seconds(120), status);
  }

  int64_t sliced_exports() const { return server_->service().sliced_exports(); }

 private:
  std::unique_ptr<server::ExportServer> server_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

// Every data set and root org unit with children: the whole demo database.
v1::ExportRequest WholeDatabase() {
  v1::ExportRequest query;
  const std::string& admin = StandbyPair::primary_admin();
  for (absl::string_view uid : absl::StrSplit(
           QueryOn(admin, "SELECT string_agg(uid, ',' ORDER BY uid) FROM dataset"), ',')) {
    query.add_data_set(std::string(uid));
  }
  for (absl::string_view uid :
       absl::StrSplit(QueryOn(admin,
                              "SELECT string_agg(uid, ',' ORDER BY uid) FROM organisationunit "
                              "WHERE parentid IS NULL"),
                      ',')) {
    query.add_org_unit(std::string(uid));
  }
  query.set_children(true);
  query.set_start_date("1900-01-01");
  query.set_end_date("2100-12-31");
  return query;
}

v1::ExportFileRequest JsonFile(const v1::ExportRequest& query) {
  v1::ExportFileRequest request;
  *request.mutable_query() = query;
  request.set_format(v1::FORMAT_JSON);
  return request;
}

TEST(StandbyPairTest, StandbyReplaysWhatThePrimaryWrites) {
  EXPECT_EQ(QueryOn(StandbyPair::standby_admin(), "SELECT pg_is_in_recovery()"), "t");
  EXPECT_EQ(QueryOn(StandbyPair::primary_admin(), "SELECT pg_is_in_recovery()"), "f");
  const std::string count = "SELECT count(*) FROM datavalue";
  EXPECT_EQ(QueryOn(StandbyPair::standby_reader(), count),
            QueryOn(StandbyPair::primary_reader(), count));

  QueryOn(StandbyPair::primary_admin(), "CREATE TABLE standby_replay_probe AS SELECT 42 AS answer");
  StandbyPair::WaitForReplay();
  EXPECT_EQ(QueryOn(StandbyPair::standby_admin(), "SELECT answer FROM standby_replay_probe"), "42");
  QueryOn(StandbyPair::primary_admin(), "DROP TABLE standby_replay_probe");
  StandbyPair::WaitForReplay();
}

TEST(StandbyExportTest, FileAndStreamFromTheStandbyMatchThePrimary) {
  Server primary(StandbyPair::primary_reader(), OneCopy());
  Server standby(StandbyPair::standby_reader(), OneCopy());
  const v1::ExportRequest query = WholeDatabase();

  FileExport from_primary = primary.ExportFile(JsonFile(query));
  FileExport from_standby = standby.ExportFile(JsonFile(query));
  ASSERT_TRUE(from_primary.status.ok()) << from_primary.status.error_message();
  ASSERT_TRUE(from_standby.status.ok()) << from_standby.status.error_message();
  EXPECT_TRUE(from_standby.has_trailer);
  EXPECT_GT(from_primary.values, 9000);
  EXPECT_EQ(from_standby.values, from_primary.values);
  // One COPY each of the same physical table (the base backup's copy): the same bytes.
  EXPECT_TRUE(from_standby.bytes == from_primary.bytes);
  EXPECT_EQ(SortedValues(from_standby.bytes), SortedValues(from_primary.bytes));

  grpc::Status primary_status, standby_status;
  std::vector<std::string> primary_values = primary.StreamValues(query, &primary_status);
  std::vector<std::string> standby_values = standby.StreamValues(query, &standby_status);
  ASSERT_TRUE(primary_status.ok()) << primary_status.error_message();
  ASSERT_TRUE(standby_status.ok()) << standby_status.error_message();
  EXPECT_EQ(static_cast<int64_t>(standby_values.size()), from_primary.values);
  EXPECT_TRUE(standby_values == primary_values);
}

TEST(StandbyExportTest, SlicedExportFromTheStandbyMatchesThePrimary) {
  Server primary(StandbyPair::primary_reader(), OneCopy());
  Server standby(StandbyPair::standby_reader(), SlicedPlan());
  const v1::ExportRequest query = WholeDatabase();

  FileExport from_primary = primary.ExportFile(JsonFile(query));
  FileExport sliced = standby.ExportFile(JsonFile(query));
  ASSERT_TRUE(from_primary.status.ok()) << from_primary.status.error_message();
  ASSERT_TRUE(sliced.status.ok()) << sliced.status.error_message();
  EXPECT_EQ(standby.sliced_exports(), 1) << "the standby's export was not read in slices";
  EXPECT_EQ(sliced.values, from_primary.values);
  EXPECT_EQ(SortedValues(sliced.bytes), SortedValues(from_primary.bytes));

  grpc::Status primary_status, standby_status;
  std::vector<std::string> primary_values = primary.StreamValues(query, &primary_status);
  std::vector<std::string> standby_values = standby.StreamValues(query, &standby_status);
  ASSERT_TRUE(primary_status.ok()) << primary_status.error_message();
  ASSERT_TRUE(standby_status.ok()) << standby_status.error_message();
  EXPECT_EQ(standby.sliced_exports(), 2) << "the standby's stream was not read in slices";
  EXPECT_TRUE(standby_values == primary_values);
}

// Waits until the primary's walsender reports that the standby has flushed all the WAL the primary
// has written so far (replayed or not).
void WaitUntilTheStandbyHasReceivedEverything() {
  const std::string target = QueryOn(StandbyPair::primary_admin(), "SELECT pg_current_wal_lsn()");
  const std::string received = absl::StrCat(
      "SELECT count(*) FROM pg_stat_replication WHERE flush_lsn >= '", target, "'::pg_lsn");
  const auto until = std::chrono::steady_clock::now() + seconds(30);
  while (QueryOn(StandbyPair::primary_admin(), received) != "1") {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "the standby did not receive " << target;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

// Queries the standby cancelled for snapshot conflicts since it started.
int SnapshotConflicts() {
  return std::stoi(QueryOn(StandbyPair::standby_admin(),
                           "SELECT confl_snapshot FROM pg_stat_database_conflicts "
                           "WHERE datname = current_database()"));
}

// Rewrites every row on the primary (a no-op UPDATE) and vacuums the old versions away: their
// removal, replayed on the standby, conflicts with a snapshot that still sees them.
void RewriteAndVacuumOnPrimary() {
  QueryOn(StandbyPair::primary_admin(), "UPDATE datavalue SET comment = comment");
  QueryOn(StandbyPair::primary_admin(), "VACUUM datavalue");
}

class RecoveryConflictTest : public ::testing::Test {
 protected:
  void SetUp() override { StandbyPair::SetStandbySetting("max_standby_streaming_delay", "0", "0"); }
  void TearDown() override {
    StandbyPair::SetStandbySetting("hot_standby_feedback", "off", "off");
    StandbyPair::SetStandbySetting("max_standby_streaming_delay", "30s", "30s");
    StandbyPair::WaitForReplay();
  }
};

TEST_F(RecoveryConflictTest, ConflictEndsTheExportAbortedNamingTheSettings) {
  Server standby(StandbyPair::standby_reader(), OneCopy());
  const v1::ExportRequest query = WholeDatabase();
  const int conflicts_before = SnapshotConflicts();
  FileExport paused = standby.ExportFile(JsonFile(query), [&](int chunk) {
    if (chunk != 2) return;
    RewriteAndVacuumOnPrimary();
    // The standby replays the VACUUM once it has it, and cancels the export's COPY at once
    // (max_standby_streaming_delay = 0). A backend blocked writing to its paused client sees
    // the cancel only when the client reads again: replay waits for that.
    WaitUntilTheStandbyHasReceivedEverything();
    std::this_thread::sleep_for(milliseconds(500));
  });
  EXPECT_EQ(paused.status.error_code(), grpc::StatusCode::ABORTED)
      << paused.status.error_code() << ": " << paused.status.error_message();
  EXPECT_NE(paused.status.error_message().find("hot_standby_feedback=on"), std::string::npos)
      << paused.status.error_message();
  EXPECT_NE(paused.status.error_message().find("max_standby_streaming_delay"), std::string::npos)
      << paused.status.error_message();
  EXPECT_FALSE(paused.has_trailer);
  StandbyPair::WaitForReplay();
  // The cancelled backend reports the conflict to the statistics at most once a second.
  EXPECT_TRUE(WaitFor([&] { return SnapshotConflicts() > conflicts_before; }, seconds(10)))
      << "the standby cancelled no query";

  // The server's pool is fine: the next export from the standby succeeds (replay has nothing
  // left that conflicts).
  FileExport next = standby.ExportFile(JsonFile(query));
  EXPECT_TRUE(next.status.ok()) << next.status.error_message();
  EXPECT_TRUE(next.has_trailer);
}

TEST_F(RecoveryConflictTest, HotStandbyFeedbackAvoidsTheConflict) {
  StandbyPair::SetStandbySetting("hot_standby_feedback", "on", "on");
  // The primary knows the standby's oldest snapshot once the walsender shows its xmin.
  const auto until = std::chrono::steady_clock::now() + seconds(20);
  while (QueryOn(StandbyPair::primary_admin(),
                 "SELECT count(*) FROM pg_stat_replication WHERE backend_xmin IS NOT NULL") !=
         "1") {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "no hot standby feedback arrived";
    std::this_thread::sleep_for(milliseconds(20));
  }
  Server standby(StandbyPair::standby_reader(), OneCopy());
  const int conflicts_before = SnapshotConflicts();
  FileExport paused = standby.ExportFile(JsonFile(WholeDatabase()), [&](int chunk) {
    if (chunk != 2) return;
    RewriteAndVacuumOnPrimary();
    StandbyPair::WaitForReplay();
  });
  EXPECT_TRUE(paused.status.ok()) << paused.status.error_message();
  EXPECT_TRUE(paused.has_trailer);
  EXPECT_GT(paused.values, 9000);
  EXPECT_EQ(SnapshotConflicts(), conflicts_before);
}

}  // namespace
}  // namespace dvexport::reliability
