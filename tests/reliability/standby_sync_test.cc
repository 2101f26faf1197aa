// Change tokens across a primary and its streaming hot standby (docs/SYNC.md): a token from the
// primary works on the standby and the reverse, the deltas keep a copy equal to a full export;
// a standby that has not replayed what the token saw waits for it, then answers UNAVAILABLE; a
// standby whose snapshot is behind the token's answers UNAVAILABLE too (a primary would refuse
// it for good).
// A real primary and standby (tests/reliability/standby_pg.sh), a dvexport server in-process
// on each, real gRPC over loopback.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/dhis2/change_token.h"
#include "service/server/export_server.h"
#include "tests/reliability/standby_pair.h"

namespace dvexport::reliability {
namespace {

using v1::DataValue;
using v1::DataValueBatch;
using v1::ExportRequest;

using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
// Value, comment, last updated (seconds, nanos), deleted.
using Fields =
    std::tuple<std::optional<std::string>, std::optional<std::string>, int64_t, int32_t, bool>;

struct Stream {
  grpc::Status status;
  std::vector<std::pair<Key, Fields>> values;
  std::string change_token;
};

struct Server {
  explicit Server(const std::string& conninfo) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = conninfo;
    options.pool_size = 4;
    auto started = server::ExportServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    server = *std::move(started);
    stub = v1::DataValueExport::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server->port()), grpc::InsecureChannelCredentials()));
  }

  Stream Run(const ExportRequest& request) {
    Stream result;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto reader = stub->StreamDataValues(&context, request);
    DataValueBatch batch;
    while (reader->Read(&batch)) {
      for (const DataValue& v : batch.data_values()) {
        result.values.emplace_back(
            Key{v.data_element(), v.period(), v.org_unit(), v.category_option_combo(),
                v.attribute_option_combo()},
            Fields{v.has_value() ? std::optional<std::string>(v.value()) : std::nullopt,
                   v.has_comment() ? std::optional<std::string>(v.comment()) : std::nullopt,
                   v.last_updated().seconds(), v.last_updated().nanos(), v.deleted()});
      }
      if (batch.last()) result.change_token = batch.change_token();
    }
    result.status = reader->Finish();
    return result;
  }

  std::unique_ptr<server::ExportServer> server;
  std::unique_ptr<v1::DataValueExport::Stub> stub;
};

// Everything in the demo database, deleted values left out.
ExportRequest Everything() {
  ExportRequest request;
  const std::string admin = StandbyPair::primary_admin();
  for (absl::string_view ds :
       absl::StrSplit(QueryOn(admin, "SELECT string_agg(uid, ',') FROM dataset"), ',')) {
    request.add_data_set(std::string(ds));
  }
  for (absl::string_view ou : absl::StrSplit(
           QueryOn(admin,
                   "SELECT string_agg(uid, ',') FROM organisationunit WHERE parentid IS NULL"),
           ',')) {
    request.add_org_unit(std::string(ou));
  }
  request.set_children(true);
  request.set_start_date("1900-01-01");
  request.set_end_date("2100-12-31");
  return request;
}

std::map<Key, Fields> ToCopy(const Stream& stream) {
  std::map<Key, Fields> copy;
  for (const auto& [key, fields] : stream.values) copy[key] = fields;
  return copy;
}

// Upserts "delta" into "copy" by key; deleted values leave it.
void Apply(const Stream& delta, std::map<Key, Fields>* copy) {
  for (const auto& [key, fields] : delta.values) {
    if (std::get<4>(fields)) {
      copy->erase(key);
    } else {
      (*copy)[key] = fields;
    }
  }
}

// Changes "n" values of Everything() on the primary (a new value, a comment, now() as
// lastupdated) and soft-deletes one more, in one transaction; returns how many rows it wrote.
int ChangeOnPrimary(int n, const std::string& tag) {
  const std::string columns =
      "dataelementid, periodid, sourceid, categoryoptioncomboid, attributeoptioncomboid";
  const std::string keys = absl::StrCat("(", columns, ")");
  const std::string changed = QueryOn(
      StandbyPair::primary_admin(),
      absl::StrCat(
          "WITH u AS (UPDATE datavalue SET value = '", tag, "', comment = '", tag,
          "', lastupdated = now() WHERE ", keys, " IN (SELECT ", columns,
          " FROM datavalue WHERE NOT deleted AND dataelementid IN (SELECT dataelementid FROM "
          "datasetelement) ORDER BY ",
          keys, " OFFSET 100 LIMIT ", n,
          ") RETURNING 1), d AS (UPDATE datavalue SET deleted = true, lastupdated = "
          "now() WHERE ",
          keys, " IN (SELECT ", columns,
          " FROM datavalue WHERE NOT deleted AND dataelementid IN (SELECT dataelementid FROM "
          "datasetelement) ORDER BY ",
          keys,
          " LIMIT 1) RETURNING 1) SELECT (SELECT count(*) FROM u) + (SELECT count(*) "
          "FROM d)"));
  return std::stoi(changed.empty() ? "0" : changed);
}

TEST(StandbySyncTest, TokensOfThePrimaryWorkOnTheStandbyAndTheReverse) {
  Server primary(StandbyPair::primary_reader());
  Server standby(StandbyPair::standby_reader());
  ASSERT_NE(primary.stub, nullptr);
  ASSERT_NE(standby.stub, nullptr);
  const ExportRequest everything = Everything();

  Stream first = primary.Run(everything);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_FALSE(first.change_token.empty());
  std::map<Key, Fields> copy = ToCopy(first);

  // Written on the primary and replayed by the standby: the standby's delta with the
  // primary's token holds all of it (asked before replaying it, the standby would answer at its
  // own older snapshot, rightly without it).
  ASSERT_EQ(ChangeOnPrimary(20, "sync-1"), 21);
  StandbyPair::WaitForReplay();
  ExportRequest request = everything;
  request.set_changes_since(first.change_token);
  Stream on_standby = standby.Run(request);
  ASSERT_TRUE(on_standby.status.ok()) << on_standby.status.error_message();
  // The primary's first token saw nothing of the change; the standby's delta holds all of it.
  EXPECT_EQ(on_standby.values.size(), 21u);
  Apply(on_standby, &copy);
  Stream full_standby = standby.Run(everything);
  ASSERT_TRUE(full_standby.status.ok());
  EXPECT_TRUE(copy == ToCopy(full_standby)) << "the standby's delta missed a change";

  // The standby's token on the primary: another change, then a delta from the primary.
  ASSERT_EQ(ChangeOnPrimary(5, "sync-2"), 6);
  request.set_changes_since(on_standby.change_token);
  Stream on_primary = primary.Run(request);
  ASSERT_TRUE(on_primary.status.ok()) << on_primary.status.error_message();
  EXPECT_EQ(on_primary.values.size(), 6u);
  Apply(on_primary, &copy);
  Stream full_primary = primary.Run(everything);
  ASSERT_TRUE(full_primary.status.ok());
  EXPECT_TRUE(copy == ToCopy(full_primary)) << "the primary's delta missed a change";
}

// Change streams live on the primary (PostgreSQL 15 keeps slots there only): a standby asked to
// start one gives a snapshot token, and refuses a stream token; the primary's stream, read by
// any dvexport of the primary, carries a hard DELETE the standby's snapshot token cannot see.
TEST(StandbySyncTest, ChangeStreamsAreThePrimarysAndTheStandbyFallsBackToSnapshotTokens) {
  Server primary(StandbyPair::primary_reader());
  Server other_primary(StandbyPair::primary_reader());
  Server standby(StandbyPair::standby_reader());
  ASSERT_NE(primary.stub, nullptr);
  ASSERT_NE(standby.stub, nullptr);
  ExportRequest start = Everything();
  start.set_start_change_stream(true);

  Stream on_standby = standby.Run(start);
  ASSERT_TRUE(on_standby.status.ok()) << on_standby.status.error_message();
  absl::StatusOr<dhis2::ChangeToken> standby_token =
      dhis2::DecodeChangeToken(on_standby.change_token);
  ASSERT_TRUE(standby_token.ok());
  EXPECT_EQ(standby_token->kind, dhis2::ChangeTokenKind::kSnapshot);

  Stream first = primary.Run(start);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  absl::StatusOr<dhis2::ChangeToken> token = dhis2::DecodeChangeToken(first.change_token);
  ASSERT_TRUE(token.ok());
  ASSERT_EQ(token->kind, dhis2::ChangeTokenKind::kStream);
  struct DropSlot {
    std::string name;
    ~DropSlot() {
      QueryOn(StandbyPair::primary_admin(),
              absl::StrCat("SELECT pg_drop_replication_slot(slot_name) FROM "
                           "pg_replication_slots WHERE slot_name = '",
                           name, "'"));
    }
  } drop_slot{absl::StrCat("dvexport_", absl::Hex(token->slot_id, absl::kZeroPad16), "_0")};
  std::map<Key, Fields> copy = ToCopy(first);

  // 20 values changed, one soft-deleted, one removed with DELETE.
  ASSERT_EQ(ChangeOnPrimary(20, "stream-1"), 21);
  const std::string removed = QueryOn(
      StandbyPair::primary_admin(),
      "WITH d AS (DELETE FROM datavalue WHERE (dataelementid, periodid, sourceid, "
      "categoryoptioncomboid, attributeoptioncomboid) IN (SELECT dataelementid, periodid, "
      "sourceid, categoryoptioncomboid, attributeoptioncomboid FROM datavalue WHERE NOT deleted "
      "AND dataelementid IN (SELECT dataelementid FROM datasetelement) ORDER BY 1, 2, 3, 4, 5 "
      "OFFSET 50 LIMIT 1) RETURNING 1) SELECT count(*) FROM d");
  ASSERT_EQ(removed, "1");
  StandbyPair::WaitForReplay();

  ExportRequest request = Everything();
  request.set_changes_since(first.change_token);
  Stream refused = standby.Run(request);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(refused.status.error_message().rfind(
                "changes_since: the token names a change stream, which only the primary can "
                "read",
                0),
            0u)
      << refused.status.error_message();

  // Another dvexport of the same primary reads the same stream.
  Stream delta = other_primary.Run(request);
  ASSERT_TRUE(delta.status.ok()) << delta.status.error_message();
  EXPECT_EQ(delta.values.size(), 22u);
  Apply(delta, &copy);
  Stream full = primary.Run(Everything());
  ASSERT_TRUE(full.status.ok());
  EXPECT_TRUE(copy == ToCopy(full)) << "the stream's delta missed a change";

  // The standby's snapshot token sees the 21 updates but not the DELETE.
  request.set_changes_since(on_standby.change_token);
  Stream snapshot_delta = standby.Run(request);
  ASSERT_TRUE(snapshot_delta.status.ok()) << snapshot_delta.status.error_message();
  EXPECT_EQ(snapshot_delta.values.size(), 21u);
}

TEST(StandbySyncTest, AStandbyBehindTheTokenWaitsThenAnswersUnavailable) {
  Server primary(StandbyPair::primary_reader());
  Server standby(StandbyPair::standby_reader());
  ASSERT_NE(standby.stub, nullptr);
  const ExportRequest everything = Everything();
  QueryOn(StandbyPair::standby_admin(), "SELECT pg_wal_replay_pause()");
  // Resumed however the test ends.
  struct Resume {
    ~Resume() { QueryOn(StandbyPair::standby_admin(), "SELECT pg_wal_replay_resume()"); }
  } resume;
  ASSERT_EQ(ChangeOnPrimary(3, "sync-3"), 4);
  Stream after = primary.Run(everything);
  ASSERT_TRUE(after.status.ok()) << after.status.error_message();

  ExportRequest request = everything;
  request.set_changes_since(after.change_token);
  const auto start = std::chrono::steady_clock::now();
  Stream refused = standby.Run(request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.status.error_message();
  EXPECT_NE(refused.status.error_message().find("this replica has replayed WAL up to"),
            std::string::npos)
      << refused.status.error_message();
  EXPECT_GE(seconds, 4.5) << "it did not wait for the replica";
  EXPECT_LT(seconds, 15.0);

  // Replayed, the same request succeeds with nothing changed since.
  QueryOn(StandbyPair::standby_admin(), "SELECT pg_wal_replay_resume()");
  StandbyPair::WaitForReplay();
  Stream delta = standby.Run(request);
  ASSERT_TRUE(delta.status.ok()) << delta.status.error_message();
  EXPECT_EQ(delta.values.size(), 0u);
}

// The token's WAL position replayed but not its snapshot (a token made by hand, with an older
// WAL position): the standby's snapshot is behind the token's, and it is UNAVAILABLE, since
// replaying on may reach it; on the primary, whose snapshot is not behind, the same token works.
TEST(StandbySyncTest, AStandbyWhoseSnapshotIsBehindTheTokenAnswersUnavailable) {
  Server primary(StandbyPair::primary_reader());
  Server standby(StandbyPair::standby_reader());
  ASSERT_NE(primary.stub, nullptr);
  ASSERT_NE(standby.stub, nullptr);
  const ExportRequest everything = Everything();
  StandbyPair::WaitForReplay();
  QueryOn(StandbyPair::standby_admin(), "SELECT pg_wal_replay_pause()");
  struct Resume {
    ~Resume() { QueryOn(StandbyPair::standby_admin(), "SELECT pg_wal_replay_resume()"); }
  } resume;
  ASSERT_EQ(ChangeOnPrimary(2, "sync-4"), 3);
  Stream after = primary.Run(everything);
  ASSERT_TRUE(after.status.ok()) << after.status.error_message();
  absl::StatusOr<dhis2::ChangeToken> token = dhis2::DecodeChangeToken(after.change_token);
  ASSERT_TRUE(token.ok()) << token.status();
  const uint64_t standby_xmax = std::stoull(
      QueryOn(StandbyPair::standby_admin(), "SELECT pg_snapshot_xmax(pg_current_snapshot())"));
  ASSERT_GT(token->xmin, standby_xmax) << "the standby already saw the change";
  token->wal_lsn = 0;

  ExportRequest request = everything;
  request.set_changes_since(dhis2::EncodeChangeToken(*token));
  Stream refused = standby.Run(request);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << refused.status.error_message();
  EXPECT_EQ(refused.status.error_message().rfind("changes_since: this replica's snapshot", 0), 0u)
      << refused.status.error_message();
  EXPECT_NE(refused.status.error_message().find("retry later"), std::string::npos);

  Stream on_primary = primary.Run(request);
  EXPECT_TRUE(on_primary.status.ok()) << on_primary.status.error_message();
  QueryOn(StandbyPair::standby_admin(), "SELECT pg_wal_replay_resume()");
  // A standby learns of transaction ids that left no commit record in its WAL only from the
  // primary's next running-transactions record (a checkpoint writes one, the background writer
  // one every 15 s): until then its snapshot may stay just behind, which is UNAVAILABLE, "retry
  // later", as a client would.
  QueryOn(StandbyPair::primary_admin(), "CHECKPOINT");
  StandbyPair::WaitForReplay();
  Stream replayed = standby.Run(request);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (replayed.status.error_code() == grpc::StatusCode::UNAVAILABLE &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    replayed = standby.Run(request);
  }
  EXPECT_TRUE(replayed.status.ok()) << replayed.status.error_message();
}

}  // namespace
}  // namespace dvexport::reliability
