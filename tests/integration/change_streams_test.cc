// ListChangeStreams and DropChangeStream (docs/SYNC.md) against the real test database and a real
// gRPC server over loopback, and the change stream monitor's metrics and log. Slots are made as
// dvexport names them (dvexport_<16 hex>_<owner's userinfoid>) with admin SQL
// (DVEXPORT_TEST_PG_ADMIN); users and tokens in DHIS2's format in userinfo and api_token, removed
// afterwards; the demo's admin (a superuser) through its published token. A slot held by
// pg_recvlogical is "in use". A slot made lost (max_slot_wal_keep_size, WAL, CHECKPOINT) on the
// reliability tests' private PostgreSQL, whose settings no other test shares.

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/export_client.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/change_stream.h"
#include "service/dhis2/change_token.h"
#include "service/pipeline/change_stream_health.h"
#include "service/server/export_server.h"
#include "tests/deploy/metrics_scrape.h"
#include "tests/integration/test_database.h"
#include "tests/reliability/reliability_support.h"
#include "tests/support/api_token_rows.h"

extern char** environ;

namespace dvexport::testing {
namespace {

using std::chrono::seconds;

// The small demo database's superuser admin (docs/DEMO.md).
constexpr char kAdminToken[] = "d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb";

std::string AdminConninfo() {
  const char* conninfo = std::getenv("DVEXPORT_TEST_PG_ADMIN");
  if (conninfo == nullptr) {
    ADD_FAILURE() << "DVEXPORT_TEST_PG_ADMIN is not set";
    return "";
  }
  return conninfo;
}

// Runs "sql" on a new connection to "conninfo"; the first column of the first row ("" if none).
std::string Exec(const std::string& conninfo, const std::string& sql) {
  try {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    const pqxx::result result = tx.exec(sql);
    if (result.empty() || result[0].empty() || result[0][0].is_null()) return "";
    return result[0][0].c_str();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "statement failed: " << e.what() << "\n" << sql;
    return "";
  }
}

std::string AdminExec(const std::string& sql) { return Exec(AdminConninfo(), sql); }

// A slot id of this process (so that concurrent test binaries do not meet): 0xc5 in the top byte,
// the pid, then "n".
uint64_t SlotId(int n) {
  return uint64_t{0xc5} << 56 | static_cast<uint64_t>(getpid() & 0xffffff) << 24 |
         static_cast<uint64_t>(n);
}

void CreateSlot(const std::string& conninfo, const std::string& name) {
  Exec(conninfo,
       absl::StrCat("SELECT pg_create_logical_replication_slot('", name, "', 'pgoutput')"));
}

bool SlotExists(const std::string& conninfo, const std::string& name) {
  return Exec(conninfo, absl::StrCat("SELECT count(*) FROM pg_replication_slots WHERE "
                                     "slot_name = '",
                                     name, "'")) == "1";
}

void DropSlotIfExists(const std::string& conninfo, const std::string& name) {
  Exec(conninfo, absl::StrCat("SELECT pg_drop_replication_slot(slot_name) FROM "
                              "pg_replication_slots WHERE slot_name = '",
                              name, "' AND NOT active"));
}

// Users of this process (ids and names from its pid), each with a token.
struct StreamUsers {
  int base = 0;
  std::string alice, bob;
  std::string alice_token, bob_token;

  int64_t Id(int n) const { return 1100000000 + int64_t{base} * 100 + n; }
  std::string Uid(char kind, int n) const { return absl::StrFormat("%c%06dz%03d", kind, base, n); }

  void Create() {
    base = static_cast<int>(getpid() % 1000000);
    alice = absl::StrCat("cstream_alice_", base);
    bob = absl::StrCat("cstream_bob_", base);
    Remove();
    AdminExec(absl::StrCat(
        "INSERT INTO userinfo (userinfoid, uid, lastupdated, username, surname, firstname, "
        "disabled) VALUES (",
        Id(1), ", '", Uid('S', 1), "', now(), '", alice, "', 'A', 'Alice', false), (", Id(2), ", '",
        Uid('S', 2), "', now(), '", bob, "', 'B', 'Bob', false)"));
    alice_token = AddToken(Id(1), 10);
    bob_token = AddToken(Id(2), 11);
  }

  std::string AddToken(int64_t owner, int n) {
    return test_support::AddApiToken(
        AdminConninfo(), {.id = Id(n),
                          .uid = Uid('T', n),
                          .owner = owner,
                          .expire_ms = test_support::ExpireMsFromNow(std::chrono::hours(24))});
  }

  void Remove() {
    AdminExec(absl::StrCat("DELETE FROM api_token WHERE apitokenid BETWEEN ", Id(0), " AND ",
                           Id(99), "; DELETE FROM userinfo WHERE userinfoid BETWEEN ", Id(0),
                           " AND ", Id(99)));
  }
};

client::CallOptions As(const std::string& token) {
  client::CallOptions options;
  options.timeout = seconds(20);
  if (!token.empty()) options.credentials = client::CallCredentialsSpec::Token(token);
  return options;
}

const v1::ChangeStream* Find(const v1::ListChangeStreamsResponse& response,
                             const std::string& name) {
  for (const v1::ChangeStream& stream : response.streams()) {
    if (stream.name() == name) return &stream;
  }
  return nullptr;
}

v1::DropChangeStreamRequest ByName(const std::string& name) {
  v1::DropChangeStreamRequest request;
  request.set_name(name);
  return request;
}

v1::DropChangeStreamRequest ByToken(const std::string& token) {
  v1::DropChangeStreamRequest request;
  request.set_change_token(token);
  return request;
}

// grpc.health.v1's status of "service" from the server on "port" (reliability::HealthStatus).
std::string HealthOf(int port, const std::string& service) {
  return reliability::HealthStatus(reliability::PlaintextChannel(port), seconds(5), service);
}

// Waits until "service"'s health is "want"; false, with what it was, if it never is.
::testing::AssertionResult HealthBecomes(int port, const std::string& service,
                                         const std::string& want) {
  const std::shared_ptr<grpc::Channel> channel = reliability::PlaintextChannel(port);
  std::string status;
  if (reliability::WaitFor(
          [&] {
            status = reliability::HealthStatus(channel, seconds(5), service);
            return status == want;
          },
          seconds(15))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << service << " is " << status << ", not " << want;
}

// A change token of this database (as an export's would name it) for "slot_id".
dhis2::ChangeToken ThisDatabasesToken(uint64_t slot_id) {
  dhis2::ChangeToken token;
  token.kind = dhis2::ChangeTokenKind::kStream;
  token.system_identifier =
      std::stoull(AdminExec("SELECT (pg_control_system()).system_identifier::text"));
  token.database_oid = static_cast<uint32_t>(std::stoul(
      AdminExec("SELECT oid::text FROM pg_database WHERE datname = current_database()")));
  token.database_name_hash = dhis2::DatabaseNameHash(AdminExec("SELECT current_database()"));
  token.slot_id = slot_id;
  token.wal_lsn = 1;
  return token;
}

class ChangeStreamsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    users_ = new StreamUsers();
    users_->Create();
  }
  static void TearDownTestSuite() {
    users_->Remove();
    delete users_;
  }

  void TearDown() override {
    server_.reset();
    for (const std::string& name : slots_) DropSlotIfExists(AdminConninfo(), name);
  }

  static server::ServerOptions Options() {
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.conninfo = TestConninfo();
    return options;
  }

  void StartServer(server::ServerOptions options) {
    server_.reset();
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    client::ChannelOptions channel_options;
    channel_options.max_attempts = 1;
    auto channel =
        client::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()), channel_options);
    ASSERT_TRUE(channel.ok()) << channel.status();
    client_ = std::make_unique<client::ExportClient>(*std::move(channel));
  }

  // A new slot of user "owner" on the test database, dropped at the end of the test.
  std::string NewSlot(int64_t owner) {
    const std::string name = db::ChangeStreamSlotName(SlotId(++next_slot_), owner);
    slots_.push_back(name);
    CreateSlot(AdminConninfo(), name);
    return name;
  }

  std::string Metrics() { return HttpGet(server_->metrics_port(), "/metrics"); }

  static StreamUsers* users_;
  std::unique_ptr<server::ExportServer> server_;
  std::unique_ptr<client::ExportClient> client_;
  std::vector<std::string> slots_;
  int next_slot_ = 0;
};

StreamUsers* ChangeStreamsTest::users_ = nullptr;

TEST_F(ChangeStreamsTest, OwnerListsItsStreamsAndOthersDoNot) {
  StartServer(Options());
  const std::string alices = NewSlot(users_->Id(1));
  const std::string bobs = NewSlot(users_->Id(2));

  absl::StatusOr<v1::ListChangeStreamsResponse> listed =
      client_->ListChangeStreams(As(users_->alice_token));
  ASSERT_TRUE(listed.ok()) << listed.status();
  const v1::ChangeStream* stream = Find(*listed, alices);
  ASSERT_NE(stream, nullptr) << listed->DebugString();
  EXPECT_EQ(stream->owner_uid(), users_->Uid('S', 1));
  EXPECT_EQ(stream->owner_username(), users_->alice);
  EXPECT_EQ(stream->wal_status(), "reserved");
  EXPECT_FALSE(stream->active());
  EXPECT_GE(stream->retained_wal_bytes(), 0);
  EXPECT_TRUE(absl::StrContains(stream->confirmed_lsn(), "/")) << stream->confirmed_lsn();
  // The monitor is off (ServerOptions' default): unknown.
  EXPECT_EQ(stream->idle_seconds(), -1);
  EXPECT_EQ(Find(*listed, bobs), nullptr) << "alice sees bob's stream";
  for (const v1::ChangeStream& any : listed->streams()) {
    EXPECT_EQ(any.owner_username(), users_->alice) << any.name();
  }
  // The test database keeps streams (scripts/lib/pg.sh: wal_level logical, the publication).
  EXPECT_EQ(listed->token_kind(), "stream") << listed->token_kind_reason();
  EXPECT_EQ(listed->token_kind_reason(), "");

  listed = client_->ListChangeStreams(As(users_->bob_token));
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(Find(*listed, alices), nullptr) << "bob sees alice's stream";
  EXPECT_NE(Find(*listed, bobs), nullptr);

  // A superuser sees every one.
  listed = client_->ListChangeStreams(As(kAdminToken));
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_NE(Find(*listed, alices), nullptr);
  EXPECT_NE(Find(*listed, bobs), nullptr);

  // Without an identity: nothing.
  listed = client_->ListChangeStreams(As(""));
  EXPECT_EQ(listed.status().code(), absl::StatusCode::kUnauthenticated) << listed.status();
}

TEST_F(ChangeStreamsTest, OwnerDropsByNameAnotherUserMayNot) {
  StartServer(Options());
  const std::string name = NewSlot(users_->Id(1));

  absl::StatusOr<std::string> dropped =
      client_->DropChangeStream(ByName(name), As(users_->bob_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kPermissionDenied) << dropped.status();
  EXPECT_TRUE(SlotExists(AdminConninfo(), name));

  dropped = client_->DropChangeStream(ByName(name), As(users_->alice_token));
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(*dropped, name);
  EXPECT_FALSE(SlotExists(AdminConninfo(), name)) << "still in pg_replication_slots";

  // Gone: the second drop finds nothing.
  dropped = client_->DropChangeStream(ByName(name), As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kNotFound) << dropped.status();
}

TEST_F(ChangeStreamsTest, SuperuserDropsAnyStream) {
  StartServer(Options());
  const std::string name = NewSlot(users_->Id(2));
  absl::StatusOr<std::string> dropped = client_->DropChangeStream(ByName(name), As(kAdminToken));
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_FALSE(SlotExists(AdminConninfo(), name));
}

TEST_F(ChangeStreamsTest, DropByChangeToken) {
  StartServer(Options());
  const std::string name = NewSlot(users_->Id(1));
  const uint64_t slot_id = db::ParseChangeStreamSlotName(name)->slot_id;
  const dhis2::ChangeToken token = ThisDatabasesToken(slot_id);

  // A token of another cluster, or of another database: not here.
  dhis2::ChangeToken elsewhere = token;
  elsewhere.system_identifier ^= 1;
  absl::StatusOr<std::string> dropped = client_->DropChangeStream(
      ByToken(dhis2::EncodeChangeToken(elsewhere)), As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kFailedPrecondition) << dropped.status();
  EXPECT_TRUE(absl::StartsWith(dropped.status().message(), "change_token:")) << dropped.status();
  elsewhere = token;
  elsewhere.database_oid += 1;
  dropped = client_->DropChangeStream(ByToken(dhis2::EncodeChangeToken(elsewhere)),
                                      As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kFailedPrecondition) << dropped.status();
  // An export's snapshot token names no stream.
  dhis2::ChangeToken snapshot = token;
  snapshot.kind = dhis2::ChangeTokenKind::kSnapshot;
  snapshot.slot_id = 0;
  snapshot.xmin = 1000;
  dropped = client_->DropChangeStream(ByToken(dhis2::EncodeChangeToken(snapshot)),
                                      As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kFailedPrecondition) << dropped.status();
  EXPECT_TRUE(absl::StartsWith(dropped.status().message(), "change_token:")) << dropped.status();
  // Not a token at all.
  dropped = client_->DropChangeStream(ByToken("not-a-token"), As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kInvalidArgument) << dropped.status();
  EXPECT_TRUE(absl::StartsWith(dropped.status().message(), "change_token:")) << dropped.status();
  EXPECT_TRUE(SlotExists(AdminConninfo(), name));

  // Another user's token of the stream does not make it theirs.
  dropped =
      client_->DropChangeStream(ByToken(dhis2::EncodeChangeToken(token)), As(users_->bob_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kPermissionDenied) << dropped.status();

  dropped =
      client_->DropChangeStream(ByToken(dhis2::EncodeChangeToken(token)), As(users_->alice_token));
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(*dropped, name);
  EXPECT_FALSE(SlotExists(AdminConninfo(), name));
  dropped =
      client_->DropChangeStream(ByToken(dhis2::EncodeChangeToken(token)), As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kNotFound) << dropped.status();
}

TEST_F(ChangeStreamsTest, RequestsThatNameNoStreamAreRefused) {
  StartServer(Options());
  // Unknown, but a dvexport name.
  absl::StatusOr<std::string> dropped = client_->DropChangeStream(
      ByName(db::ChangeStreamSlotName(SlotId(999), users_->Id(1))), As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kNotFound) << dropped.status();
  // The owner part of a name is part of the name.
  const std::string name = NewSlot(users_->Id(1));
  dropped = client_->DropChangeStream(
      ByName(db::ChangeStreamSlotName(db::ParseChangeStreamSlotName(name)->slot_id, 0)),
      As(kAdminToken));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kNotFound) << dropped.status();
  // Another tool's slot is never ours to drop.
  dropped = client_->DropChangeStream(ByName("debezium"), As(kAdminToken));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kInvalidArgument) << dropped.status();
  EXPECT_TRUE(absl::StartsWith(dropped.status().message(), "name:")) << dropped.status();

  // Neither, both.
  dropped = client_->DropChangeStream(v1::DropChangeStreamRequest(), As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kInvalidArgument) << dropped.status();
  EXPECT_TRUE(absl::StrContains(dropped.status().message(), "change_token or name"))
      << dropped.status();
  v1::DropChangeStreamRequest both = ByName(name);
  both.set_change_token(
      dhis2::EncodeChangeToken(ThisDatabasesToken(db::ParseChangeStreamSlotName(name)->slot_id)));
  dropped = client_->DropChangeStream(both, As(users_->alice_token));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kInvalidArgument) << dropped.status();
  EXPECT_TRUE(absl::StrContains(dropped.status().message(), "change_token and name"))
      << dropped.status();
  // Without an identity the request's faults are not told.
  dropped = client_->DropChangeStream(both, As(""));
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kUnauthenticated) << dropped.status();
  EXPECT_TRUE(SlotExists(AdminConninfo(), name));
}

// A slot a consumer holds (here pg_recvlogical, as a delta's decoding call would): ABORTED, and
// the slot stays; once released, the drop goes through.
TEST_F(ChangeStreamsTest, StreamInUseIsAborted) {
  StartServer(Options());
  const std::string name = NewSlot(users_->Id(1));
  const char* bindir = std::getenv("PG_BINDIR");
  const std::string recvlogical =
      absl::StrCat(bindir != nullptr ? bindir : "/usr/lib/postgresql/15/bin", "/pg_recvlogical");
  const std::string conninfo = AdminConninfo();
  std::vector<std::string> args = {
      recvlogical, "-d",        conninfo,          "--slot", name,
      "--start",   "-o",        "proto_version=1", "-o",     "publication_names=dvexport",
      "-f",        "/dev/null", "--no-loop"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, recvlogical.c_str(), nullptr, nullptr, argv.data(), environ), 0)
      << recvlogical;
  const bool active = reliability::WaitFor(
      [&] {
        return AdminExec(absl::StrCat("SELECT active::text FROM pg_replication_slots WHERE "
                                      "slot_name = '",
                                      name, "'")) == "true";
      },
      seconds(10));
  if (active) {
    absl::StatusOr<std::string> dropped =
        client_->DropChangeStream(ByName(name), As(users_->alice_token));
    EXPECT_EQ(dropped.status().code(), absl::StatusCode::kAborted) << dropped.status();
    EXPECT_TRUE(absl::StrContains(dropped.status().message(), "in use")) << dropped.status();
    EXPECT_TRUE(SlotExists(AdminConninfo(), name));
    absl::StatusOr<v1::ListChangeStreamsResponse> listed =
        client_->ListChangeStreams(As(users_->alice_token));
    ASSERT_TRUE(listed.ok()) << listed.status();
    ASSERT_NE(Find(*listed, name), nullptr);
    EXPECT_TRUE(Find(*listed, name)->active());
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(active) << "pg_recvlogical never held the slot";
  EXPECT_TRUE(reliability::WaitFor(
      [&] {
        return AdminExec(absl::StrCat("SELECT active::text FROM pg_replication_slots WHERE "
                                      "slot_name = '",
                                      name, "'")) == "false";
      },
      seconds(10)));
  absl::StatusOr<std::string> dropped =
      client_->DropChangeStream(ByName(name), As(users_->alice_token));
  EXPECT_TRUE(dropped.ok()) << dropped.status();
}

// With --change_stream_poll_s: the gauges of each slot, the token kind, the listed idle seconds;
// a dropped slot's series go.
TEST_F(ChangeStreamsTest, MonitorShowsStreamsInMetrics) {
  server::ServerOptions options = Options();
  options.service.change_stream_poll = seconds(1);
  StartServer(options);
  const std::string name = NewSlot(users_->Id(1));
  // Some WAL after the slot's restart_lsn, so that it retains some.
  AdminExec("SELECT pg_switch_wal()");
  const std::string slot_label = absl::StrCat("slot=\"", name, "\"");
  std::string metrics;
  ASSERT_TRUE(reliability::WaitFor(
      [&] {
        metrics = Metrics();
        return absl::StrContains(metrics, slot_label) &&
               SumSamples(metrics, "dvexport_change_stream_retained_wal_bytes", {slot_label}) > 0;
      },
      seconds(15)))
      << metrics;
  EXPECT_EQ(SumSamples(metrics, "dvexport_change_stream_lost", {slot_label}), 0);
  EXPECT_GE(SumSamples(metrics, "dvexport_change_stream_idle_seconds", {slot_label}), 0);
  EXPECT_EQ(SumSamples(metrics, "dvexport_change_token_kind", {"kind=\"stream\""}), 1);
  EXPECT_EQ(SumSamples(metrics, "dvexport_change_token_kind", {"kind=\"snapshot\""}), 0);
  // Health reports the change streams apart from the server (a slot far below the warning).
  EXPECT_TRUE(HealthBecomes(server_->port(), pipeline::kChangeStreamsHealthService, "SERVING"));
  EXPECT_EQ(HealthOf(server_->port(), ""), "SERVING");

  // The monitor has seen it: its idle time is known, and grows while nothing confirms. (Not
  // counted from the first sighting: a poll may see the slot while PostgreSQL still creates it,
  // before its confirmed position is set, which is a move.)
  int64_t idle = -1;
  EXPECT_TRUE(reliability::WaitFor(
      [&] {
        absl::StatusOr<v1::ListChangeStreamsResponse> listed =
            client_->ListChangeStreams(As(users_->alice_token));
        EXPECT_TRUE(listed.ok()) << listed.status();
        if (!listed.ok() || Find(*listed, name) == nullptr) return false;
        idle = Find(*listed, name)->idle_seconds();
        return idle >= 2;
      },
      seconds(10)))
      << "idle seconds " << idle;

  absl::StatusOr<std::string> dropped =
      client_->DropChangeStream(ByName(name), As(users_->alice_token));
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_TRUE(
      reliability::WaitFor([&] { return !absl::StrContains(Metrics(), slot_label); }, seconds(15)))
      << "the dropped slot's series stay";
}

// --change_publication names a publication the database does not have: snapshot tokens, and why.
TEST_F(ChangeStreamsTest, MissingPublicationMeansSnapshotTokens) {
  server::ServerOptions options = Options();
  options.service.change_publication = "no_such_publication";
  options.service.change_stream_poll = seconds(1);
  StartServer(options);
  absl::StatusOr<v1::ListChangeStreamsResponse> listed =
      client_->ListChangeStreams(As(users_->alice_token));
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->token_kind(), "snapshot");
  EXPECT_EQ(listed->token_kind_reason(), "there is no publication \"no_such_publication\"");
  std::string metrics;
  EXPECT_TRUE(reliability::WaitFor(
      [&] {
        metrics = Metrics();
        return SumSamples(metrics, "dvexport_change_token_kind", {"kind=\"snapshot\""}) == 1;
      },
      seconds(15)))
      << metrics;
  EXPECT_EQ(SumSamples(metrics, "dvexport_change_token_kind", {"kind=\"stream\""}), 0);
  // A stream whose deltas this server refuses makes the change streams unhealthy; the server
  // itself serves on.
  NewSlot(users_->Id(1));
  EXPECT_TRUE(HealthBecomes(server_->port(), pipeline::kChangeStreamsHealthService, "NOT_SERVING"));
  EXPECT_EQ(HealthOf(server_->port(), ""), "SERVING");
}

// Without the monitor (--change_stream_poll_s 0) health knows no change streams.
TEST_F(ChangeStreamsTest, WithoutTheMonitorHealthHasNoChangeStreams) {
  StartServer(Options());
  EXPECT_TRUE(HealthBecomes(server_->port(), "", "SERVING"));
  EXPECT_EQ(HealthOf(server_->port(), pipeline::kChangeStreamsHealthService), "error: NOT_FOUND");
}

// Lost slots: max_slot_wal_keep_size on a PostgreSQL of the test's own (ALTER SYSTEM would reach
// every other test's slots on the shared one), then WAL and a checkpoint until PostgreSQL
// invalidates the slot.
class LostChangeStreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { started_ = reliability::PrivatePostgres::Start(); }
  static void TearDownTestSuite() { reliability::PrivatePostgres::Stop(); }

  static bool started_;
};

bool LostChangeStreamTest::started_ = false;

TEST_F(LostChangeStreamTest, LostSlotIsShownAndLogged) {
  ASSERT_TRUE(started_);
  const std::string admin = reliability::PrivatePostgres::admin_conninfo();
  const std::string name = db::ChangeStreamSlotName(SlotId(500), 0);
  CreateSlot(admin, name);

  const std::string log_path = absl::StrCat(::testing::TempDir(), "/lost_", getpid(), ".log");
  // The server's own lines (the monitor's) go to stderr: kept in a file for the test to read.
  std::fflush(stderr);
  const int saved_stderr = dup(STDERR_FILENO);
  FILE* log = std::fopen(log_path.c_str(), "w");
  ASSERT_NE(log, nullptr);
  dup2(fileno(log), STDERR_FILENO);

  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.metrics_listen = "127.0.0.1:0";
  options.conninfo = reliability::PrivatePostgres::reader_conninfo();
  options.service.auth = pipeline::AuthMode::kNone;
  options.service.change_stream_poll = seconds(1);
  auto server = server::ExportServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string slot_label = absl::StrCat("slot=\"", name, "\"");
  std::string metrics;
  EXPECT_TRUE(reliability::WaitFor(
      [&] {
        metrics = HttpGet((*server)->metrics_port(), "/metrics");
        return absl::StrContains(metrics, slot_label);
      },
      seconds(15)));
  EXPECT_EQ(SumSamples(metrics, "dvexport_change_stream_lost", {slot_label}), 0);
  EXPECT_TRUE(HealthBecomes((*server)->port(), pipeline::kChangeStreamsHealthService, "SERVING"));

  Exec(admin, "ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
  Exec(admin, "SELECT pg_reload_conf()");
  Exec(admin, "CREATE TABLE IF NOT EXISTS lost_slot_scratch (filler text)");
  std::string wal_status;
  for (int round = 0; round < 20 && wal_status != "lost"; ++round) {
    Exec(admin,
         "INSERT INTO lost_slot_scratch SELECT repeat(md5(i::text), 32) FROM "
         "generate_series(1, 2000) i");
    Exec(admin, "SELECT pg_switch_wal()");
    Exec(admin, "CHECKPOINT");
    wal_status = Exec(admin, absl::StrCat("SELECT wal_status FROM pg_replication_slots WHERE "
                                          "slot_name = '",
                                          name, "'"));
  }
  Exec(admin, "ALTER SYSTEM RESET max_slot_wal_keep_size");
  Exec(admin, "SELECT pg_reload_conf()");
  Exec(admin, "DROP TABLE IF EXISTS lost_slot_scratch");
  ASSERT_EQ(wal_status, "lost") << "PostgreSQL did not invalidate the slot";

  EXPECT_TRUE(reliability::WaitFor(
      [&] {
        metrics = HttpGet((*server)->metrics_port(), "/metrics");
        return SumSamples(metrics, "dvexport_change_stream_lost", {slot_label}) == 1;
      },
      seconds(15)))
      << metrics;
  EXPECT_TRUE(
      HealthBecomes((*server)->port(), pipeline::kChangeStreamsHealthService, "NOT_SERVING"));
  EXPECT_EQ(HealthOf((*server)->port(), ""), "SERVING");

  // Listed as lost, and still droppable (by user 0: --auth none).
  client::ChannelOptions channel_options;
  channel_options.max_attempts = 1;
  auto channel =
      client::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->port()), channel_options);
  ASSERT_TRUE(channel.ok());
  client::ExportClient client(*channel);
  absl::StatusOr<v1::ListChangeStreamsResponse> listed = client.ListChangeStreams(As(""));
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_NE(Find(*listed, name), nullptr) << listed->DebugString();
  EXPECT_EQ(Find(*listed, name)->wal_status(), "lost");
  absl::StatusOr<std::string> dropped = client.DropChangeStream(ByName(name), As(""));
  EXPECT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_FALSE(SlotExists(admin, name));
  EXPECT_TRUE(HealthBecomes((*server)->port(), pipeline::kChangeStreamsHealthService, "SERVING"));

  server->reset();
  std::fflush(stderr);
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  std::fclose(log);
  const std::string logged = reliability::ReadFile(log_path);
  std::remove(log_path.c_str());
  EXPECT_TRUE(absl::StrContains(logged, "change tokens: stream (publication dvexport)")) << logged;
  EXPECT_TRUE(absl::StrContains(logged, absl::StrCat("change stream ", name, " is lost")))
      << logged;
}

// A slot that retains more WAL than --change_stream_warn_wal_mb turns the change streams'
// health NOT_SERVING, and SERVING again once its consumer has moved it on.
TEST_F(LostChangeStreamTest, HealthFollowsTheWalASlotRetains) {
  ASSERT_TRUE(started_);
  const std::string admin = reliability::PrivatePostgres::admin_conninfo();
  const std::string name = db::ChangeStreamSlotName(SlotId(501), 0);
  CreateSlot(admin, name);

  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.conninfo = reliability::PrivatePostgres::reader_conninfo();
  options.service.auth = pipeline::AuthMode::kNone;
  options.service.change_stream_poll = seconds(1);
  options.service.change_stream_warn_wal_bytes = int64_t{24} << 20;
  auto server = server::ExportServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  EXPECT_TRUE(HealthBecomes(port, pipeline::kChangeStreamsHealthService, "SERVING"));

  // Three new WAL segments (16 MB each) past the slot's restart position: it retains more than
  // 32 MiB. (A switch without WAL since the last one does nothing: a message first.)
  for (int i = 0; i < 3; ++i) {
    Exec(admin, "SELECT pg_logical_emit_message(false, 'dvexport_test', 'wal')");
    Exec(admin, "SELECT pg_switch_wal()");
  }
  EXPECT_TRUE(HealthBecomes(port, pipeline::kChangeStreamsHealthService, "NOT_SERVING"));
  EXPECT_EQ(HealthOf(port, ""), "SERVING");

  // Its consumer confirms up to now, as a delta does. A logical slot's restart position moves
  // to a snapshot of the running transactions it has decoded, which a checkpoint writes: one
  // first, and a second round for the confirmation that makes the new position the slot's.
  for (int i = 0; i < 2; ++i) {
    Exec(admin, "CHECKPOINT");
    Exec(admin,
         absl::StrCat("SELECT pg_replication_slot_advance('", name, "', pg_current_wal_lsn())"));
  }
  EXPECT_TRUE(HealthBecomes(port, pipeline::kChangeStreamsHealthService, "SERVING"));

  server->reset();
  DropSlotIfExists(admin, name);
}

}  // namespace
}  // namespace dvexport::testing
