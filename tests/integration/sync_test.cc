// Change tokens (docs/SYNC.md) under real concurrent writers: a copy kept by applying each delta
// (changes_since) to the first export, upserting by key, equals a full export of the same
// committed state, value for value; and tokens that cannot be judged are refused. The data is
// written into a database of its own (tests/parity's fixture, created and dropped through
// DVEXPORT_TEST_PG_ADMIN), so that the tests reading the demo database meanwhile are not
// disturbed.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/transaction>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/change_stream.h"
#include "service/db/change_tracking.h"
#include "service/db/read_plan.h"
#include "service/dhis2/change_token.h"
#include "service/server/export_server.h"
#include "tests/parity/fixture_database.h"

namespace dvexport {
namespace {

using v1::DataValue;
using v1::DataValueBatch;
using v1::ExportFileRequest;
using v1::ExportRequest;

// Sixty more monthly periods (2019-01 .. 2023-12), ids 1000-1059, for keys to write.
constexpr char kExtraSql[] =
    "INSERT INTO period (periodid, periodtypeid, startdate, enddate) "
    "SELECT 1000 + i, 8, (DATE '2019-01-01' + i * INTERVAL '1 month')::date, "
    "(DATE '2019-01-01' + (i + 1) * INTERVAL '1 month' - INTERVAL '1 day')::date "
    "FROM generate_series(0, 59) i; "
    // What change streams read (docs/SYNC.md).
    "CREATE PUBLICATION dvexport FOR TABLE datavalue";

// Data element, period, org unit, category option combo, attribute option combo (uids).
using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
// Value, stored by, last updated (milliseconds, as the JSON has it), comment, followup, deleted.
using Fields = std::vector<std::optional<std::string>>;
using Copy = std::map<Key, Fields>;

std::string LongGmtDate(const google::protobuf::Timestamp& t) {
  const std::time_t seconds = static_cast<std::time_t>(t.seconds());
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, t.nanos() / 1000000);
  return text;
}

std::pair<Key, Fields> FromTyped(const DataValue& v) {
  auto optional = [](bool has, const std::string& s) {
    return has ? std::optional<std::string>(s) : std::nullopt;
  };
  return {Key{v.data_element(), v.period(), v.org_unit(), v.category_option_combo(),
              v.attribute_option_combo()},
          Fields{optional(v.has_value(), v.value()), optional(v.has_stored_by(), v.stored_by()),
                 LongGmtDate(v.last_updated()), optional(v.has_comment(), v.comment()),
                 v.followup() ? "true" : "false", v.deleted() ? "true" : "false"}};
}

std::pair<Key, Fields> FromJson(const nlohmann::json& v) {
  auto text = [&](const char* key) {
    const nlohmann::json& field = v.at(key);
    return field.is_null() ? std::nullopt : std::optional<std::string>(field.get<std::string>());
  };
  return {Key{*text("dataElement"), *text("period"), *text("orgUnit"), *text("categoryOptionCombo"),
              *text("attributeOptionCombo")},
          Fields{text("value"), text("storedBy"), text("lastUpdated"), text("comment"),
                 v.at("followup").get<bool>() ? "true" : "false",
                 v.value("deleted", false) ? "true" : "false"}};
}

struct Delta {
  grpc::Status status;
  std::vector<std::pair<Key, Fields>> values;
  std::string change_token;
};

struct FullExport {
  grpc::Status status;
  Copy values;
  std::string change_token;
};

class SyncTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new testing::FixtureDatabase("_sync", kExtraSql);
    if (fixture_->reader_conninfo().empty()) return;
    single_ = StartServer(db::ReadPlanOptions{.max_streams = 1});
    // Slices as small as the fixture allows: the delta's condition holds on every connection.
    sliced_ = StartServer(db::ReadPlanOptions{
        .max_streams = 3, .min_rows = 0, .slices_per_stream = 4, .min_slice_blocks = 1});
  }
  static void TearDownTestSuite() {
    delete single_;
    delete sliced_;
    delete fixture_;
  }

  struct Server {
    std::unique_ptr<server::ExportServer> server;
    std::unique_ptr<v1::DataValueExport::Stub> stub;
  };

  static Server* StartServer(const db::ReadPlanOptions& plan) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = fixture_->reader_conninfo();
    options.pool_size = 8;
    options.service.batch_bytes = 4 * 1024;  // several batches
    options.service.read_plan = plan;
    auto started = server::ExportServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return nullptr;
    auto* s = new Server;
    s->server = *std::move(started);
    s->stub = v1::DataValueExport::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", s->server->port()), grpc::InsecureChannelCredentials()));
    return s;
  }

  void SetUp() override {
    ASSERT_FALSE(fixture_->admin_conninfo().empty());
    ASSERT_NE(single_, nullptr);
    ASSERT_NE(sliced_, nullptr);
  }

  // Every value of the fixture's root and its children, deleted ones left out.
  static ExportRequest Everything() {
    ExportRequest request;
    for (const char* de : {"deAlpha0001", "deBravo0002", "deCharl0003"})
      request.add_data_element(de);
    request.add_org_unit("ouRoot00001");
    request.set_children(true);
    request.set_start_date("2000-01-01");
    request.set_end_date("2100-12-31");
    return request;
  }

  static Delta Stream(Server* server, const ExportRequest& request) {
    Delta delta;
    grpc::ClientContext context;
    auto reader = server->stub->StreamDataValues(&context, request);
    DataValueBatch batch;
    while (reader->Read(&batch)) {
      for (const DataValue& v : batch.data_values()) delta.values.push_back(FromTyped(v));
      if (batch.last()) {
        delta.change_token = batch.change_token();
      } else {
        EXPECT_TRUE(batch.change_token().empty()) << "only the last batch carries the token";
      }
    }
    delta.status = reader->Finish();
    return delta;
  }

  static FullExport ExportJson(Server* server, const ExportRequest& query) {
    FullExport result;
    ExportFileRequest request;
    *request.mutable_query() = query;
    request.set_format(v1::FORMAT_JSON);
    grpc::ClientContext context;
    auto reader = server->stub->ExportFile(&context, request);
    std::string bytes;
    v1::FileChunk chunk;
    while (reader->Read(&chunk)) {
      if (chunk.has_trailer()) {
        result.change_token = chunk.trailer().change_token();
      } else {
        bytes += chunk.data();
      }
    }
    result.status = reader->Finish();
    if (!result.status.ok()) return result;
    const nlohmann::json document = nlohmann::json::parse(bytes);
    for (const nlohmann::json& v : document.at("dataValues")) {
      EXPECT_TRUE(result.values.insert(FromJson(v)).second) << "a key exported twice";
    }
    return result;
  }

  // Runs "sql" as the admin in the fixture's database.
  static void AdminExec(const std::string& sql) {
    pqxx::connection conn(fixture_->admin_conninfo());
    pqxx::nontransaction tx(conn);
    tx.exec("SET synchronous_commit = on");
    tx.exec(sql);
  }
  // The first column of the first row of "sql", run as the admin in the fixture's database.
  static std::string AdminValue(const std::string& sql) {
    pqxx::connection conn(fixture_->admin_conninfo());
    pqxx::nontransaction tx(conn);
    const pqxx::result result = tx.exec(sql);
    return result.empty() || result[0][0].is_null() ? "" : result[0][0].c_str();
  }

  // The first export of Everything() with start_change_stream: a stream token, and its slot's
  // name (the servers run without authentication: owner 0).
  static void StartStream(FullExport* first, std::string* slot) {
    ExportRequest request = Everything();
    request.set_start_change_stream(true);
    *first = ExportJson(single_, request);
    ASSERT_TRUE(first->status.ok()) << first->status.error_message();
    absl::StatusOr<dhis2::ChangeToken> decoded = dhis2::DecodeChangeToken(first->change_token);
    ASSERT_TRUE(decoded.ok());
    ASSERT_EQ(decoded->kind, dhis2::ChangeTokenKind::kStream);
    *slot = db::ChangeStreamSlotName(decoded->slot_id, 0);
  }

  // Applies "delta" to a copy of an export that leaves deleted values out.
  static void Apply(const Delta& delta, Copy* copy) {
    for (const auto& [key, fields] : delta.values) {
      if (fields.back() == "true") {
        copy->erase(key);
      } else {
        (*copy)[key] = fields;
      }
    }
  }

  static testing::FixtureDatabase* fixture_;
  static Server* single_;
  static Server* sliced_;
};

testing::FixtureDatabase* SyncTest::fixture_ = nullptr;
SyncTest::Server* SyncTest::single_ = nullptr;
SyncTest::Server* SyncTest::sliced_ = nullptr;

// DHIS2's commits, as PostgreSQL's default: flushed before they are visible (the test cluster
// runs with synchronous_commit = off, for speed). docs/SYNC.md: an asynchronous commit may come
// one delta late in a change stream.
void SynchronousCommit(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  tx.exec("SET synchronous_commit = on");
}

// Writer "w" writes keys of org unit 401 + w only (no lock waits between writers): inserts,
// updates, soft deletes, undeletes and hard DELETEs (of one value, and now and then of every
// value of its org unit, the fixture's own ones included) in transactions of 1 to 8 statements
// that sleep between statements, some with a savepoint rolled back or kept, one in ten rolled
// back whole. COMMIT runs under "commit_mu" held shared, so that the checker can hold every
// commit back.
void RunWriter(const std::string& conninfo, int w, std::shared_mutex* commit_mu,
               std::atomic<bool>* stop, std::atomic<int>* commits) {
  std::mt19937 rng(1234 + w);
  try {
    pqxx::connection conn(conninfo);
    SynchronousCommit(conn);
    while (!stop->load()) {
      pqxx::work tx(conn);
      const int statements = 1 + static_cast<int>(rng() % 8);
      const int savepoint_at = static_cast<int>(rng() % 16);  // often none
      for (int i = 0; i < statements; ++i) {
        if (i == savepoint_at) tx.exec("SAVEPOINT s");
        const std::string key =
            absl::StrCat(101 + rng() % 3, ", ", 1000 + rng() % 60, ", ", 401 + w);
        switch (rng() % 10) {
          case 0:
          case 1:
          case 2:
          case 3:
            tx.exec(absl::StrCat(
                "INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid, "
                "attributeoptioncomboid, value, storedby, created, lastupdated, comment, "
                "followup, deleted) VALUES (",
                key, ", 21, 21, '", rng() % 100000, "', 'writer", w,
                "', now(), now(), NULL, false, false) ON CONFLICT ON CONSTRAINT datavalue_pkey "
                "DO UPDATE SET value = EXCLUDED.value, lastupdated = now(), deleted = false"));
            break;
          case 4:
          case 5:
            tx.exec(absl::StrCat(
                "UPDATE datavalue SET deleted = true, lastupdated = now() WHERE (dataelementid, "
                "periodid, sourceid) = (",
                key, ") AND categoryoptioncomboid = 21 AND attributeoptioncomboid = 21"));
            break;
          case 8:
            tx.exec(absl::StrCat(
                "DELETE FROM datavalue WHERE (dataelementid, periodid, sourceid) = (", key,
                ") AND categoryoptioncomboid = 21 AND attributeoptioncomboid = 21"));
            break;
          case 9:
            if (rng() % 6 == 0) {
              tx.exec(absl::StrCat("DELETE FROM datavalue WHERE sourceid = ", 401 + w));
              break;
            }
            [[fallthrough]];
          default:
            tx.exec(absl::StrCat(
                "UPDATE datavalue SET comment = 'c", rng() % 1000,
                "', lastupdated = now() WHERE (dataelementid, periodid, sourceid) = (", key,
                ") AND categoryoptioncomboid = 21 AND attributeoptioncomboid = 21"));
            break;
        }
        if (i > savepoint_at && rng() % 3 == 0) tx.exec("ROLLBACK TO SAVEPOINT s");
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 15));
      }
      if (rng() % 10 == 0) {
        tx.abort();
        continue;
      }
      std::shared_lock<std::shared_mutex> lock(*commit_mu);
      tx.commit();
      commits->fetch_add(1);
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "writer " << w << ": " << e.what();
  }
}

// The two kinds of change token (docs/SYNC.md): a snapshot token (the first export asks for
// nothing) and a change stream (the first export asks start_change_stream).
class SyncKindTest : public SyncTest, public ::testing::WithParamInterface<dhis2::ChangeTokenKind> {
 protected:
  static bool Streams() { return GetParam() == dhis2::ChangeTokenKind::kStream; }

  static ExportRequest FirstRequest() {
    ExportRequest request = Everything();
    request.set_start_change_stream(Streams());
    return request;
  }
};

INSTANTIATE_TEST_SUITE_P(Kinds, SyncKindTest,
                         ::testing::Values(dhis2::ChangeTokenKind::kSnapshot,
                                           dhis2::ChangeTokenKind::kStream),
                         [](const ::testing::TestParamInfo<dhis2::ChangeTokenKind>& info) {
                           return info.param == dhis2::ChangeTokenKind::kStream ? "Stream"
                                                                                : "Snapshot";
                         });

TEST_P(SyncKindTest, DeltasAppliedToTheFirstExportEqualAFullExportUnderConcurrentWriters) {
  // A transaction open across an export and a delta, writing in a subtransaction (whose xid
  // pg_current_snapshot() does not list), with lastupdated from before both. A snapshot token's
  // first export runs while it is open; a stream's cannot (PostgreSQL makes a new slot
  // consistent only once the transactions running at its start have ended), so it opens after
  // the first export and stays open across the full exports of rounds 0 and 1.
  pqxx::connection long_conn(fixture_->admin_conninfo());
  SynchronousCommit(long_conn);
  std::optional<pqxx::work> long_tx;
  const auto open_long_tx = [&] {
    long_tx.emplace(long_conn);
    long_tx->exec("SAVEPOINT inner_write");
    long_tx->exec(
        "INSERT INTO datavalue VALUES (101, 1000, 401, 21, 22, 'long', 'long', "
        "now() - INTERVAL '1 hour', now() - INTERVAL '1 hour', NULL, false, false)");
    long_tx->exec("RELEASE SAVEPOINT inner_write");
  };
  const Key long_key{"deAlpha0001", "201901", "ouRoot00001", "HllvX50cXC0", "aocAP1x0022"};
  // And one rolled back in round 1: its value must never appear.
  pqxx::connection rolled_conn(fixture_->admin_conninfo());
  std::optional<pqxx::work> rolled_tx;
  const auto open_rolled_tx = [&] {
    rolled_tx.emplace(rolled_conn);
    rolled_tx->exec(
        "INSERT INTO datavalue VALUES (101, 1001, 401, 21, 22, 'rolled back', 'x', now(), "
        "now(), NULL, false, false)");
  };
  if (!Streams()) {
    open_long_tx();
    open_rolled_tx();
  }

  std::shared_mutex commit_mu;
  std::atomic<bool> stop{false};
  std::atomic<int> commits{0};
  std::vector<std::jthread> writers;
  // Joins the writers also when an assertion returns early.
  struct JoinWriters {
    std::atomic<bool>* stop;
    std::vector<std::jthread>* writers;
    ~JoinWriters() {
      stop->store(true);
      for (std::jthread& writer : *writers) {
        if (writer.joinable()) writer.join();
      }
    }
  } join_writers{&stop, &writers};
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back(RunWriter, fixture_->admin_conninfo(), w, &commit_mu, &stop, &commits);
  }

  // The first export, while the writers run.
  FullExport first = ExportJson(single_, FirstRequest());
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_EQ(first.change_token.size(), dhis2::kChangeTokenLength);
  absl::StatusOr<dhis2::ChangeToken> first_token = dhis2::DecodeChangeToken(first.change_token);
  ASSERT_TRUE(first_token.ok()) << first_token.status();
  ASSERT_EQ(first_token->kind, GetParam()) << "the fixture's database can keep change streams";
  EXPECT_EQ(first.values.count(long_key), 0u);
  if (Streams()) {
    open_long_tx();
    open_rolled_tx();
  }
  Copy copy = first.values;
  std::string token = first.change_token;

  int64_t delta_values = 0;
  int deletions = 0;
  int hard_deletions = 0;
  int rounds_with_commits = 0;
  int commits_seen = 0;
  const int64_t sliced_before = sliced_->server->service().sliced_exports();
  for (int round = 0; round < 8; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    if (round == 1) rolled_tx->abort();
    if (round == 2) {
      // Committed while other transactions are open.
      std::unique_lock<std::shared_mutex> lock(commit_mu);
      long_tx->commit();
    }
    // No commit from here to the end of the round: the delta and the full export see the same
    // committed transactions (transactions still open are invisible to both).
    std::unique_lock<std::shared_mutex> lock(commit_mu);
    if (commits.load() > commits_seen) ++rounds_with_commits;
    commits_seen = commits.load();
    ExportRequest request = Everything();
    request.set_changes_since(token);
    Delta delta = Stream(single_, request);
    ASSERT_TRUE(delta.status.ok()) << delta.status.error_message();
    ASSERT_EQ(delta.change_token.size(), dhis2::kChangeTokenLength);
    // The same delta again on another server (sliced where the kind reads the table): a delta
    // confirms only what came before its token, so it can be read again.
    Delta again = Stream(sliced_, request);
    ASSERT_TRUE(again.status.ok()) << again.status.error_message();
    std::sort(delta.values.begin(), delta.values.end());
    std::sort(again.values.begin(), again.values.end());
    EXPECT_TRUE(again.values == delta.values) << "round " << round;

    bool long_seen = false;
    for (const auto& [key, fields] : delta.values) {
      if (key == long_key) long_seen = true;
      if (fields.back() == "true") ++deletions;
      EXPECT_NE(fields[0], "rolled back");
    }
    if (round == 2) {
      EXPECT_TRUE(long_seen) << "the long transaction's value was missed";
    } else if (round < 2) {
      EXPECT_FALSE(long_seen) << "a value of a transaction not yet committed";
    }
    Apply(delta, &copy);
    delta_values += static_cast<int64_t>(delta.values.size());
    token = delta.change_token;

    FullExport full = ExportJson(single_, Everything());
    ASSERT_TRUE(full.status.ok()) << full.status.error_message();
    // Every key the table still holds, soft-deleted ones too: a key missing there was removed
    // with DELETE.
    ExportRequest with_deleted = Everything();
    with_deleted.set_include_deleted(true);
    FullExport rows = ExportJson(single_, with_deleted);
    ASSERT_TRUE(rows.status.ok()) << rows.status.error_message();
    for (const auto& [key, fields] : delta.values) {
      if (fields.back() == "true" && rows.values.count(key) == 0) {
        ++hard_deletions;
        EXPECT_FALSE(fields[2]->empty()) << "a hard delete has the time it committed";
      }
    }
    for (const auto& [key, fields] : full.values) {
      auto it = copy.find(key);
      ASSERT_NE(it, copy.end()) << "round " << round << ": a value the deltas missed";
      ASSERT_EQ(it->second, fields) << "round " << round << ": a change the deltas missed";
    }
    if (Streams()) {
      ASSERT_EQ(copy.size(), full.values.size())
          << "round " << round << ": a hard DELETE the stream missed";
    } else {
      // A snapshot token cannot see hard DELETEs (docs/SYNC.md, "Limits"): the copy keeps
      // those values, and only those.
      for (const auto& [key, fields] : copy) {
        if (full.values.count(key) == 0) {
          EXPECT_EQ(rows.values.count(key), 0u) << "round " << round << ": a value the copy "
                                                << "keeps although the table has it deleted";
        }
      }
    }
  }
  stop.store(true);
  for (std::jthread& writer : writers) writer.join();
  writers.clear();

  EXPECT_GE(rounds_with_commits, 6);
  EXPECT_GT(deletions, 0) << "deltas carry deletions";
  if (Streams()) {
    EXPECT_GT(hard_deletions, 0) << "a change stream carries hard DELETEs";
  } else {
    EXPECT_EQ(hard_deletions, 0) << "a snapshot token cannot see a hard DELETE";
    EXPECT_GT(sliced_->server->service().sliced_exports(), sliced_before);
  }
  // Deltas are deltas: together smaller than the exports they replace.
  EXPECT_LT(delta_values, 8 * static_cast<int64_t>(copy.size()));

  // With nothing written since, a delta is empty (once no transaction of another test holds the
  // cluster's oldest running xid back: those make a delta repeat values, never miss them).
  int64_t empty_after = -1;
  for (int attempt = 0; attempt < 50 && empty_after != 0; ++attempt) {
    ExportRequest request = Everything();
    request.set_changes_since(token);
    Delta delta = Stream(single_, request);
    ASSERT_TRUE(delta.status.ok()) << delta.status.error_message();
    empty_after = static_cast<int64_t>(delta.values.size());
    token = delta.change_token;
    if (empty_after != 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(empty_after, 0);
}

// A change stream's own rules, without concurrent writers: a delta that was not applied (the
// consumer crashed before its output was in place) is sent again with the same token; once a
// later token has been presented, the older one is refused; a hard DELETE is a deleted key.
TEST_F(SyncTest, AStreamRepeatsADeltaNotYetConfirmedAndRefusesATokenItMovedPast) {
  FullExport first;
  std::string slot;
  ASSERT_NO_FATAL_FAILURE(StartStream(&first, &slot));
  EXPECT_EQ(AdminValue(absl::StrCat("SELECT count(*) FROM pg_replication_slots WHERE "
                                    "slot_name = '",
                                    slot, "'")),
            "1");

  // One value inserted, one updated, one of the fixture's removed with DELETE.
  const Key removed{"deAlpha0001", "202401", "ouClinA0001", "HllvX50cXC0", "HllvX50cXC0"};
  ASSERT_EQ(first.values.count(removed), 1u);
  AdminExec(
      "INSERT INTO datavalue VALUES (102, 1010, 403, 21, 21, 'new', 'x', now(), now(), NULL, "
      "false, false) ON CONFLICT ON CONSTRAINT datavalue_pkey DO UPDATE SET value = 'new'");
  AdminExec(
      "UPDATE datavalue SET value = 'changed', lastupdated = now() WHERE dataelementid = 102 "
      "AND periodid = 601 AND sourceid = 402");
  AdminExec(
      "DELETE FROM datavalue WHERE dataelementid = 101 AND periodid = 601 AND sourceid = 402");

  ExportRequest request = Everything();
  request.set_changes_since(first.change_token);
  Delta lost = Stream(single_, request);  // the consumer crashes before applying it
  ASSERT_TRUE(lost.status.ok()) << lost.status.error_message();
  Delta repeated = Stream(single_, request);
  ASSERT_TRUE(repeated.status.ok()) << repeated.status.error_message();
  std::sort(lost.values.begin(), lost.values.end());
  std::sort(repeated.values.begin(), repeated.values.end());
  EXPECT_TRUE(lost.values == repeated.values);
  ASSERT_EQ(repeated.values.size(), 3u);
  bool removed_seen = false;
  for (const auto& [key, fields] : repeated.values) {
    if (key == removed) {
      removed_seen = true;
      EXPECT_EQ(fields.back(), "true");
      EXPECT_EQ(fields[0], std::nullopt) << "a removed value has no value";
    } else {
      EXPECT_EQ(fields.back(), "false");
    }
  }
  EXPECT_TRUE(removed_seen);
  Copy copy = first.values;
  Apply(repeated, &copy);
  FullExport full = ExportJson(single_, Everything());
  ASSERT_TRUE(full.status.ok());
  EXPECT_TRUE(copy == full.values);

  // The same delta in every file format, compressed too: the three values, the removed one as
  // deleted.
  for (const auto& [format, compression] : std::vector<std::pair<v1::Format, v1::Compression>>{
           {v1::FORMAT_CSV, v1::COMPRESSION_NONE},
           {v1::FORMAT_XML, v1::COMPRESSION_NONE},
           {v1::FORMAT_JSON_PRETTY, v1::COMPRESSION_NONE},
           {v1::FORMAT_CSV, v1::COMPRESSION_GZIP}}) {
    ExportFileRequest file_request;
    *file_request.mutable_query() = request;
    file_request.set_format(format);
    file_request.set_compression(compression);
    grpc::ClientContext context;
    auto reader = single_->stub->ExportFile(&context, file_request);
    v1::FileChunk chunk;
    int64_t values = -1;
    std::string bytes;
    while (reader->Read(&chunk)) {
      if (chunk.has_trailer()) {
        values = chunk.trailer().values();
      } else {
        bytes += chunk.data();
      }
    }
    ASSERT_TRUE(reader->Finish().ok()) << format;
    EXPECT_EQ(values, 3) << format;
    if (compression == v1::COMPRESSION_NONE) {
      EXPECT_NE(bytes.find(format == v1::FORMAT_CSV   ? ",true"
                           : format == v1::FORMAT_XML ? "deleted=\"true\""
                                                      : "\"deleted\": true"),
                std::string::npos)
          << format << ": " << bytes;
    }
  }

  // The next delta confirms the repeated one: empty, and the first token is now refused.
  request.set_changes_since(repeated.change_token);
  Delta next = Stream(single_, request);
  ASSERT_TRUE(next.status.ok()) << next.status.error_message();
  EXPECT_TRUE(next.values.empty());
  request.set_changes_since(first.change_token);
  Delta stale = Stream(single_, request);
  EXPECT_EQ(stale.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(stale.status.error_message().rfind(
                "changes_since: the change stream has moved past the token", 0),
            0u)
      << stale.status.error_message();

  // A count with the token reads the same stream, and a token of a slot that is gone is refused.
  request.set_changes_since(next.change_token);
  AdminExec(
      "UPDATE datavalue SET value = 'again' WHERE dataelementid = 102 AND periodid = 601 "
      "AND sourceid = 402");
  grpc::ClientContext context;
  v1::CountResponse count;
  ASSERT_TRUE(single_->stub->CountDataValues(&context, request, &count).ok());
  EXPECT_EQ(count.count(), 1);
  AdminExec(absl::StrCat("SELECT pg_drop_replication_slot('", slot, "')"));
  Delta gone = Stream(single_, request);
  EXPECT_EQ(gone.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(gone.status.error_message().rfind(
                "changes_since: the token's change stream no longer exists", 0),
            0u)
      << gone.status.error_message();
}

// A first export asked to start a stream that fails drops its slot: nobody holds its token.
TEST_F(SyncTest, AFirstExportThatFailsLeavesNoSlot) {
  const std::string before = AdminValue("SELECT count(*) FROM pg_replication_slots");
  ExportRequest request = Everything();
  request.set_start_change_stream(true);
  request.add_data_element("deNoSuch001");  // NOT_FOUND once the slot exists
  FullExport failed = ExportJson(single_, request);
  EXPECT_EQ(failed.status.error_code(), grpc::StatusCode::NOT_FOUND)
      << failed.status.error_message();
  std::string after;
  for (int i = 0; i < 100; ++i) {  // dropped on a thread of its own
    after = AdminValue("SELECT count(*) FROM pg_replication_slots");
    if (after == before) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(after, before);
}

// A slot PostgreSQL invalidated (it kept more WAL than max_slot_wal_keep_size) is refused, never
// read, and dropped. Alone (RUN_SERIAL): the setting is the cluster's.
TEST_F(SyncTest, AnInvalidatedStreamIsRefusedAndDropped) {
  FullExport first;
  std::string slot;
  ASSERT_NO_FATAL_FAILURE(StartStream(&first, &slot));
  const std::string status_sql =
      absl::StrCat("SELECT wal_status FROM pg_replication_slots WHERE slot_name = '", slot, "'");

  AdminExec("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
  AdminExec("SELECT pg_reload_conf()");
  struct Reset {
    ~Reset() {
      AdminExec("ALTER SYSTEM RESET max_slot_wal_keep_size");
      AdminExec("SELECT pg_reload_conf()");
    }
  } reset;
  AdminExec("CREATE TABLE IF NOT EXISTS wal_filler (t text)");
  std::string wal_status;
  for (int i = 0; i < 40 && wal_status != "lost"; ++i) {
    AdminExec("INSERT INTO wal_filler SELECT repeat('x', 1000) FROM generate_series(1, 2000)");
    AdminExec("SELECT pg_switch_wal()");
    AdminExec("CHECKPOINT");
    wal_status = AdminValue(status_sql);
  }
  ASSERT_EQ(wal_status, "lost");

  ExportRequest request = Everything();
  request.set_changes_since(first.change_token);
  Delta refused = Stream(single_, request);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(refused.status.error_message().rfind(
                "changes_since: the token's change stream was invalidated by PostgreSQL", 0),
            0u)
      << refused.status.error_message();
  EXPECT_TRUE(refused.values.empty());
  EXPECT_EQ(AdminValue(absl::StrCat("SELECT count(*) FROM pg_replication_slots WHERE "
                                    "slot_name = '",
                                    slot, "'")),
            "0");
}

TEST_F(SyncTest, EveryCompleteExportCarriesATokenButALimitedOne) {
  FullExport full = ExportJson(sliced_, Everything());
  ASSERT_TRUE(full.status.ok()) << full.status.error_message();
  EXPECT_EQ(full.change_token.size(), dhis2::kChangeTokenLength);
  Delta stream = Stream(single_, Everything());
  ASSERT_TRUE(stream.status.ok()) << stream.status.error_message();
  EXPECT_EQ(stream.change_token.size(), dhis2::kChangeTokenLength);

  ExportRequest limited = Everything();
  limited.set_limit(2);
  FullExport limited_export = ExportJson(single_, limited);
  ASSERT_TRUE(limited_export.status.ok()) << limited_export.status.error_message();
  EXPECT_EQ(limited_export.change_token, "");
}

TEST_F(SyncTest, RefusesTokensItCannotJudge) {
  Delta base = Stream(single_, Everything());
  ASSERT_TRUE(base.status.ok());
  absl::StatusOr<dhis2::ChangeToken> token = dhis2::DecodeChangeToken(base.change_token);
  ASSERT_TRUE(token.ok()) << token.status();

  auto refusal = [&](const std::string& changes_since) {
    ExportRequest request = Everything();
    request.set_changes_since(changes_since);
    return Stream(single_, request).status;
  };

  grpc::Status status = refusal("not-a-token");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().rfind("changes_since: not a change token", 0), 0u)
      << status.error_message();
  std::string altered = base.change_token;
  altered[20] = altered[20] == 'x' ? 'y' : 'x';
  status = refusal(altered);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("checksum"), std::string::npos) << status.error_message();

  dhis2::ChangeToken other_cluster = *token;
  other_cluster.system_identifier ^= 1;
  status = refusal(dhis2::EncodeChangeToken(other_cluster));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("another database cluster"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("export everything again"), std::string::npos);

  // WAL this primary never wrote: another history (a promoted replica, a restored backup).
  dhis2::ChangeToken other_history = *token;
  other_history.wal_lsn += uint64_t{1} << 40;
  status = refusal(dhis2::EncodeChangeToken(other_history));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(status.error_message().find("export everything again"), std::string::npos)
      << status.error_message();

  // A snapshot ahead of this primary's: not of its history, and waiting would not help.
  dhis2::ChangeToken future = *token;
  future.xmin += 1000000;
  status = refusal(dhis2::EncodeChangeToken(future));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_EQ(status.error_message().rfind("changes_since: the token's snapshot (transaction ", 0),
            0u)
      << status.error_message();
  EXPECT_NE(status.error_message().find("is ahead of this primary's"), std::string::npos)
      << status.error_message();
  EXPECT_NE(status.error_message().find("export everything again"), std::string::npos);

  // The database's OID or name differs: another database of this cluster.
  for (int field = 0; field < 2; ++field) {
    dhis2::ChangeToken other_database = *token;
    if (field == 0) other_database.database_oid ^= 1;
    if (field == 1) other_database.database_name_hash ^= 1;
    status = refusal(dhis2::EncodeChangeToken(other_database));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << field;
    EXPECT_EQ(status.error_message().rfind(
                  "changes_since: the token belongs to another database of this cluster", 0),
              0u)
        << status.error_message();
  }

  // A token of version 1 (before tokens named their database; Python: struct, zlib.crc32,
  // base64.urlsafe_b64encode), as a state file of an earlier dvexport holds it.
  status = refusal("Adewtdwspg1rQOIBAAMAAABvXk08KxoAAPInw4g");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_EQ(status.error_message().rfind("changes_since: the token is of version 1", 0), 0u)
      << status.error_message();
  EXPECT_NE(status.error_message().find("export everything again"), std::string::npos);

  // CountDataValues judges it the same way.
  ExportRequest request = Everything();
  request.set_changes_since(dhis2::EncodeChangeToken(other_cluster));
  grpc::ClientContext context;
  v1::CountResponse response;
  status = single_->stub->CountDataValues(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

// Two databases of one cluster (as dhis2 and dhis2_training often are), with the same schema
// and data: a token of one is refused by the other, before any row is read; each accepts its own.
TEST_F(SyncTest, ATokenOfAnotherDatabaseOfTheClusterIsRefused) {
  testing::FixtureDatabase other_fixture("_sync_other", kExtraSql);
  ASSERT_FALSE(other_fixture.reader_conninfo().empty());
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.conninfo = other_fixture.reader_conninfo();
  options.pool_size = 2;
  auto started = server::ExportServer::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  Server other{*std::move(started), nullptr};
  other.stub = v1::DataValueExport::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", other.server->port()), grpc::InsecureChannelCredentials()));

  Delta here = Stream(single_, Everything());
  ASSERT_TRUE(here.status.ok()) << here.status.error_message();
  Delta there = Stream(&other, Everything());
  ASSERT_TRUE(there.status.ok()) << there.status.error_message();
  EXPECT_FALSE(there.values.empty());
  EXPECT_NE(here.change_token, there.change_token);

  for (auto [server, token] :
       {std::pair{&other, here.change_token}, std::pair{single_, there.change_token}}) {
    ExportRequest request = Everything();
    request.set_changes_since(token);
    Delta refused = Stream(server, request);
    EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
        << refused.status.error_message() << " (" << refused.values.size() << " values)";
    EXPECT_EQ(refused.status.error_message(),
              "changes_since: the token belongs to another database of this cluster (or to this "
              "database before it was re-created, restored or renamed); export everything again "
              "without changes_since");
    EXPECT_TRUE(refused.values.empty());
  }
  ExportRequest request = Everything();
  request.set_changes_since(there.change_token);
  Delta own = Stream(&other, request);
  EXPECT_TRUE(own.status.ok()) << own.status.error_message();
}

}  // namespace
}  // namespace dvexport
