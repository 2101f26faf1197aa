// Authentication of every call against the real test database and a real gRPC server over
// loopback: users and tokens made in DHIS2's format in userinfo and api_token (through
// DVEXPORT_TEST_PG_ADMIN, removed afterwards), passwords hashed with libxcrypt's bcrypt, tokens
// generated as DHIS2 generates them. Covers: no credentials refused for every method while
// health answers; tokens, passwords and mapped client certificates accepted; the identity cache
// (a revoked token works until the TTL, then not; at once with TTL 0); the failed-attempt limits
// per peer and per username (a cached credential still passes); shared verifications and the
// bounded queue; the call's deadline bounding authentication on a silent database; --auth none;
// the call log's auth fields and the metrics.

#include <crypt.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/export_client.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/auth/authenticator.h"
#include "service/auth/client_identities.h"
#include "service/dhis2/api_token.h"
#include "service/server/export_server.h"
#include "tests/deploy/metrics_scrape.h"
#include "tests/integration/test_database.h"
#include "tests/reliability/reliability_support.h"
#include "tests/reliability/silenceable_proxy.h"
#include "tests/support/api_token_rows.h"

namespace dvexport::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

std::string AdminConninfo() {
  const char* conninfo = std::getenv("DVEXPORT_TEST_PG_ADMIN");
  if (conninfo == nullptr) {
    ADD_FAILURE() << "DVEXPORT_TEST_PG_ADMIN is not set";
    return "";
  }
  return conninfo;
}

void AdminExec(const std::string& sql) {
  try {
    pqxx::connection conn(AdminConninfo());
    pqxx::nontransaction tx(conn);
    tx.exec(sql);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "admin statement failed: " << e.what() << "\n" << sql;
  }
}

// A bcrypt hash of "password" as DHIS2 stores it ($2b$ here; DHIS2 writes $2a$, same
// algorithm), made by libxcrypt.
std::string Bcrypt(const std::string& password) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2b$", 10, nullptr, 0, setting, sizeof setting), nullptr);
  crypt_data data{};
  const char* hash = crypt_rn(password.c_str(), setting, &data, sizeof data);
  EXPECT_NE(hash, nullptr);
  return hash == nullptr ? "" : hash;
}

std::string Basic(const std::string& username, const std::string& password) {
  return "Basic " + absl::Base64Escape(username + ":" + password);
}

// Users and tokens of this process (ids and names from its pid, so that concurrent test
// binaries do not meet).
struct TestUsers {
  int base = 0;
  std::string alice, bob;  // usernames
  std::string alice_password = "correct horse battery staple";
  std::string bob_password = "tr0ub4dor&3";
  std::string token;  // alice's, no rules
  std::string token_uid;
  int next_token = 0;

  int64_t Id(int n) const { return 880000000 + base * 100 + n; }
  std::string Uid(char kind, int n) const { return absl::StrFormat("%c%06dz%03d", kind, base, n); }

  void Create() {
    base = static_cast<int>(getpid() % 1000000);
    alice = absl::StrCat("authn_alice_", base);
    bob = absl::StrCat("authn_bob_", base);
    Remove();
    AdminExec(absl::StrCat(
        "INSERT INTO userinfo (userinfoid, uid, lastupdated, username, password, surname, "
        "firstname, disabled) VALUES (",
        Id(1), ", '", Uid('U', 1), "', now(), '", alice, "', '", Bcrypt(alice_password),
        "', 'A', 'Alice', false), (", Id(2), ", '", Uid('U', 2), "', now(), '", bob, "', '",
        Bcrypt(bob_password), "', 'B', 'Bob', false)"));
    // What they may read (DHIS2's rules apply to their calls): the small demo database's group
    // "HMIS officers" reads every data set, and their data view is the demo's country.
    AdminExec(absl::StrCat(
        "INSERT INTO usergroupmembers (userid, usergroupid) SELECT u, usergroupid FROM usergroup, "
        "(VALUES (",
        Id(1), "), (", Id(2),
        ")) v(u) WHERE uid = 'zuSgfg9TbHl'; "
        "INSERT INTO userdatavieworgunits (userinfoid, organisationunitid) SELECT u, "
        "organisationunitid FROM organisationunit, (VALUES (",
        Id(1), "), (", Id(2), ")) v(u) WHERE uid = 'ImspTQPwCqd'"));
    token = AddToken(Id(1), "[]", &token_uid);
  }

  // A new V2 token of user "owner" with api_token.attributes "attributes"; its uid in "*uid".
  std::string AddToken(int64_t owner, const std::string& attributes, std::string* uid = nullptr) {
    const int n = 10 + next_token++;
    if (uid != nullptr) *uid = Uid('T', n);
    return test_support::AddApiToken(
        AdminConninfo(), {.id = Id(n),
                          .uid = Uid('T', n),
                          .owner = owner,
                          .expire_ms = test_support::ExpireMsFromNow(std::chrono::hours(24)),
                          .attributes = attributes});
  }

  void RevokeToken(const std::string& uid) {
    AdminExec(absl::StrCat("DELETE FROM api_token WHERE uid = '", uid, "'"));
  }

  void Remove() {
    AdminExec(
        absl::StrCat("DELETE FROM api_token WHERE apitokenid BETWEEN ", Id(0), " AND ", Id(99),
                     "; DELETE FROM usergroupmembers WHERE userid BETWEEN ", Id(0), " AND ", Id(99),
                     "; DELETE FROM userdatavieworgunits WHERE userinfoid "
                     "BETWEEN ",
                     Id(0), " AND ", Id(99), "; DELETE FROM userinfo WHERE userinfoid BETWEEN ",
                     Id(0), " AND ", Id(99)));
  }
};

// One small export's query: the demo's first data set, one leaf org unit, one month.
v1::ExportRequest SmallQuery() {
  v1::ExportRequest query;
  const std::vector<std::string> data_sets = QueryColumn("SELECT uid FROM dataset ORDER BY uid");
  if (!data_sets.empty()) query.add_data_set(data_sets.front());
  query.add_org_unit("JhqLZoNBxt6");
  query.add_period("202401");
  return query;
}

class AuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    users_ = new TestUsers();
    users_->Create();
    query_ = new v1::ExportRequest(SmallQuery());
  }
  static void TearDownTestSuite() {
    users_->Remove();
    delete users_;
    delete query_;
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
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::DataValueExport::NewStub(channel_);
  }

  static void Prepare(grpc::ClientContext* context, const std::string& authorization,
                      milliseconds deadline) {
    context->set_deadline(std::chrono::system_clock::now() + deadline);
    if (!authorization.empty()) context->AddMetadata("authorization", authorization);
  }

  grpc::Status Count(const std::string& authorization, milliseconds deadline = seconds(20),
                     v1::DataValueExport::Stub* stub = nullptr) {
    grpc::ClientContext context;
    Prepare(&context, authorization, deadline);
    v1::CountResponse response;
    return (stub != nullptr ? stub : stub_.get())->CountDataValues(&context, *query_, &response);
  }

  // A CountDataValues call on a thread of its own, for a test that acts while the call waits.
  // Its destructor cancels the call and joins the thread: a failed assertion that leaves the
  // test's scope neither aborts the binary (a joinable std::thread) nor waits for the deadline.
  class BackgroundCount {
   public:
    BackgroundCount(AuthTest* test, const std::string& authorization, milliseconds deadline) {
      Prepare(&context_, authorization, deadline);
      v1::DataValueExport::Stub* stub = test->stub_.get();
      const v1::ExportRequest* query = query_;
      thread_ = std::jthread([this, stub, query] {
        const auto start = std::chrono::steady_clock::now();
        v1::CountResponse response;
        status_ = stub->CountDataValues(&context_, *query, &response);
        seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      });
    }
    ~BackgroundCount() { Cancel(); }  // then thread_ joins
    BackgroundCount(const BackgroundCount&) = delete;
    BackgroundCount& operator=(const BackgroundCount&) = delete;

    // The client cancels the call (before it started too: gRPC cancels it when it starts).
    void Cancel() { context_.TryCancel(); }
    // Waits until the call has ended; its status.
    const grpc::Status& Wait() {
      if (thread_.joinable()) thread_.join();
      return status_;
    }
    // How long the call took; after Wait.
    double seconds_taken() const { return seconds_; }

   private:
    grpc::ClientContext context_;
    grpc::Status status_;
    double seconds_ = 0;
    std::jthread thread_;  // last: joined before the members it uses go
  };

  // Reads the whole stream; its status and how many messages came.
  grpc::Status ExportFile(const std::string& authorization, int* messages = nullptr) {
    grpc::ClientContext context;
    Prepare(&context, authorization, seconds(20));
    v1::ExportFileRequest request;
    *request.mutable_query() = *query_;
    auto reader = stub_->ExportFile(&context, request);
    v1::FileChunk chunk;
    int count = 0;
    while (reader->Read(&chunk)) ++count;
    if (messages != nullptr) *messages = count;
    return reader->Finish();
  }

  grpc::Status Stream(const std::string& authorization, int* messages = nullptr) {
    grpc::ClientContext context;
    Prepare(&context, authorization, seconds(20));
    auto reader = stub_->StreamDataValues(&context, *query_);
    v1::DataValueBatch batch;
    int count = 0;
    while (reader->Read(&batch)) ++count;
    if (messages != nullptr) *messages = count;
    return reader->Finish();
  }

  std::string Metrics() { return HttpGet(server_->metrics_port(), "/metrics"); }

  double Refusals(const std::string& reason) {
    return SumSamples(Metrics(), "dvexport_auth_refusals_total",
                      {absl::StrCat("reason=\"", reason, "\"")});
  }

  static TestUsers* users_;
  static v1::ExportRequest* query_;
  std::unique_ptr<server::ExportServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

TestUsers* AuthTest::users_ = nullptr;
v1::ExportRequest* AuthTest::query_ = nullptr;

std::string ApiToken(const std::string& token) { return "ApiToken " + token; }

TEST_F(AuthTest, EveryMethodButHealthNeedsCredentials) {
  StartServer(Options());
  int messages = -1;
  grpc::Status status = ExportFile("", &messages);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_EQ(messages, 0) << "a refused export sends nothing";
  status = Stream("", &messages);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_EQ(messages, 0);
  status = Count("");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_EQ(reliability::HealthStatus(channel_), "SERVING");
  EXPECT_EQ(Refusals("no_credentials"), 3);
  EXPECT_EQ(SumSamples(Metrics(), "dvexport_auth_mode", {"mode=\"dhis2\""}), 1);
  // A malformed token is refused without the database.
  status = Count("ApiToken d2p_not-a-token");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Refusals("bad_checksum"), 1);
}

// As DHIS2 authenticates before it reads a request: a caller without an identity learns nothing
// about its request, not even that it is invalid; with an identity, the same request is refused
// for what it is.
TEST_F(AuthTest, AnInvalidRequestWithoutCredentialsIsUnauthenticated) {
  StartServer(Options());
  const v1::ExportRequest valid = *query_;
  query_->Clear();  // no data set, no data element, no org unit: E2001 and more
  int messages = -1;
  EXPECT_EQ(ExportFile("", &messages).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Stream("", &messages).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Count("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Count("ApiToken d2p_not-a-token").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ExportFile(ApiToken(users_->token), &messages).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Count(ApiToken(users_->token)).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  *query_ = valid;
}

TEST_F(AuthTest, TokenAndPasswordAreAcceptedByEveryMethod) {
  StartServer(Options());
  int messages = 0;
  grpc::Status status = ExportFile(ApiToken(users_->token), &messages);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(messages, 0);
  status = Stream(ApiToken(users_->token), &messages);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(messages, 0);
  status = Count(ApiToken(users_->token));
  EXPECT_TRUE(status.ok()) << status.error_message();
  status = Count(Basic(users_->alice, users_->alice_password));
  EXPECT_TRUE(status.ok()) << status.error_message();
  status = ExportFile(Basic(users_->bob, users_->bob_password));
  EXPECT_TRUE(status.ok()) << status.error_message();
  // The token was verified once, then found in the cache.
  const std::string metrics = Metrics();
  EXPECT_EQ(SumSamples(metrics, "dvexport_auth_cache_lookups_total", {"result=\"hit\""}), 2);
  EXPECT_EQ(SumSamples(metrics, "dvexport_auth_cache_lookups_total", {"result=\"miss\""}), 3);
  // A wrong password: DHIS2's message, whether or not the user exists.
  status = Count(Basic(users_->alice, "wrong"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status.error_message(), "Unauthorized");
  status = Count(Basic("authn_nobody_at_all", "wrong"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status.error_message(), "Unauthorized");
  EXPECT_EQ(Refusals("wrong_password"), 2);
}

// The token's allowed-IP list is checked against the peer's address, cached or not.
TEST_F(AuthTest, TokenIpListIsCheckedAgainstThePeer) {
  StartServer(Options());
  const std::string here =
      users_->AddToken(users_->Id(1), R"([{"type":"IpAllowedList","allowedIps":["127.0.0.1"]}])");
  const std::string elsewhere =
      users_->AddToken(users_->Id(1), R"([{"type":"IpAllowedList","allowedIps":["10.9.9.9"]}])");
  for (int call = 0; call < 2; ++call) {
    grpc::Status status = Count(ApiToken(here));
    EXPECT_TRUE(status.ok()) << status.error_message();
    status = Count(ApiToken(elsewhere));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(status.error_message(),
              "Failed to authenticate API token, request ip address is not allowed.");
  }
}

TEST_F(AuthTest, RevokedTokenWorksUntilTheCacheTtlThenNot) {
  server::ServerOptions options = Options();
  options.service.authentication.cache_ttl = seconds(2);
  StartServer(options);
  std::string uid;
  const std::string token = users_->AddToken(users_->Id(1), "[]", &uid);
  ASSERT_TRUE(Count(ApiToken(token)).ok());
  const auto verified = std::chrono::steady_clock::now();
  users_->RevokeToken(uid);
  grpc::Status status = Count(ApiToken(token));
  if (std::chrono::steady_clock::now() - verified < milliseconds(1500)) {
    EXPECT_TRUE(status.ok()) << "revoked, still in the cache: " << status.error_message();
  }
  std::this_thread::sleep_until(verified + milliseconds(2200));
  status = Count(ApiToken(token));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status.error_message(), "The API token does not exists");
}

TEST_F(AuthTest, WithoutCacheARevokedTokenIsRefusedAtOnce) {
  server::ServerOptions options = Options();
  options.service.authentication.cache_ttl = seconds(0);
  StartServer(options);
  std::string uid;
  const std::string token = users_->AddToken(users_->Id(1), "[]", &uid);
  ASSERT_TRUE(Count(ApiToken(token)).ok());
  ASSERT_TRUE(Count(ApiToken(token)).ok());
  EXPECT_EQ(SumSamples(Metrics(), "dvexport_auth_cache_lookups_total", {"result=\"hit\""}), 0);
  users_->RevokeToken(uid);
  grpc::Status status = Count(ApiToken(token));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status.error_message(), "The API token does not exists");
}

TEST_F(AuthTest, FailedAttemptsAreLimitedPerPeerButACachedCredentialPasses) {
  server::ServerOptions options = Options();
  options.service.authentication.max_failures_per_peer = 3;
  options.service.authentication.max_failures_per_user = 100;
  options.service.authentication.failure_window = seconds(300);
  StartServer(options);
  // Cached before the guesses.
  ASSERT_TRUE(Count(ApiToken(users_->token)).ok());
  for (int guess = 0; guess < 3; ++guess) {
    grpc::Status status = Count(Basic(absl::StrCat("authn_guess_", guess), "wrong"));
    EXPECT_EQ(status.error_message(), "Unauthorized");
  }
  // Over the limit: every new credential from this peer is refused, right or wrong, user or
  // token, without a verification.
  const double misses_before =
      SumSamples(Metrics(), "dvexport_auth_cache_lookups_total", {"result=\"miss\""});
  for (const std::string& authorization :
       {Basic("authn_guess_9", "wrong"), Basic(users_->bob, users_->bob_password),
        ApiToken(users_->AddToken(users_->Id(2), "[]"))}) {
    grpc::Status status = Count(authorization);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_THAT(status.error_message(),
                ::testing::MatchesRegex("too many failed authentication attempts from this "
                                        "address; retry in [0-9]+ s"));
  }
  EXPECT_EQ(Refusals("rate_limited"), 3);
  // Refused before any verification (a miss counts only what is verified).
  EXPECT_EQ(SumSamples(Metrics(), "dvexport_auth_cache_lookups_total", {"result=\"miss\""}),
            misses_before);
  // The cached token is no guess.
  grpc::Status status = Count(ApiToken(users_->token));
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(AuthTest, FailedPasswordsAreLimitedPerUsernameWhetherOrNotItExists) {
  server::ServerOptions options = Options();
  options.service.authentication.max_failures_per_peer = 100;
  options.service.authentication.max_failures_per_user = 2;
  StartServer(options);
  for (const std::string& username : {users_->bob, std::string("authn_nobody_here")}) {
    for (int guess = 0; guess < 2; ++guess) {
      EXPECT_EQ(Count(Basic(username, "wrong")).error_message(), "Unauthorized");
    }
    grpc::Status status = Count(Basic(username, "wrong again"));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_THAT(status.error_message(),
                ::testing::MatchesRegex("too many failed authentication attempts for this "
                                        "username; retry in [0-9]+ s"));
  }
  // Bob's right password too, until the bucket refills; Alice is not held back.
  EXPECT_THAT(Count(Basic(users_->bob, users_->bob_password)).error_message(),
              HasSubstr("too many failed authentication attempts for this username"));
  grpc::Status status = Count(Basic(users_->alice, users_->alice_password));
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// A fake database that accepts connections and never answers: verifications hang on it.
class SilentDatabaseAuthTest : public AuthTest {
 protected:
  void SetUp() override {
    // The test database's port, from its conninfo ("host=127.0.0.1 port=N ...", scripts/lib/pg.sh).
    const std::string conninfo = TestConninfo();
    const size_t at = conninfo.find("port=");
    ASSERT_NE(at, std::string::npos) << conninfo;
    const size_t end = conninfo.find(' ', at);
    const int port = std::atoi(conninfo.substr(at + 5, end - at - 5).c_str());
    proxy_ = std::make_unique<reliability::SilenceableProxy>(port, /*silent=*/false);
    server::ServerOptions options = Options();
    options.conninfo = conninfo.substr(0, at) + absl::StrCat("port=", proxy_->port()) +
                       (end == std::string::npos ? "" : conninfo.substr(end));
    options.service.authentication.workers = 1;
    options.service.authentication.max_pending = 1;
    options.health_probe_interval = milliseconds(200);
    StartServer(options);
    // The database answers until the server has read its DHIS2 version (a call that comes before
    // waits for that, not for authentication: Dhis2VersionGate); then it goes silent, on the
    // pool's connections too.
    ASSERT_TRUE(reliability::WaitFor(
        [&] { return reliability::HealthStatus(channel_) == "SERVING"; }, seconds(30)));
    proxy_->SetSilent(true);
  }

  const auth::Authenticator& authenticator() { return *server_->service().authenticator(); }

  std::unique_ptr<reliability::SilenceableProxy> proxy_;
};

TEST_F(SilentDatabaseAuthTest, DeadlineBoundsAuthenticationAndConcurrentMissesShareIt) {
  using Counts = auth::Authenticator::Counts;
  const std::string token = ApiToken(users_->token);
  std::vector<std::unique_ptr<BackgroundCount>> calls;
  calls.push_back(std::make_unique<BackgroundCount>(this, token, milliseconds(1500)));
  // The worker took it and hangs on the database.
  ASSERT_TRUE(authenticator().AwaitCounts(
      [](const Counts& n) { return n.verifying == 1 && n.pending == 0 && n.waiting == 1; },
      seconds(30)));
  // The same credential joins the verification in progress: no queue place taken.
  for (int i = 1; i <= 3; ++i) {
    calls.push_back(std::make_unique<BackgroundCount>(this, token, milliseconds(1500)));
  }
  ASSERT_TRUE(authenticator().AwaitCounts(
      [](const Counts& n) { return n.waiting == 4 && n.verifying == 1; }, seconds(30)));
  EXPECT_EQ(authenticator().pending(), 0);
  // Another credential waits in the queue (its one place), a third is refused at once.
  calls.push_back(
      std::make_unique<BackgroundCount>(this, Basic(users_->bob, "whatever"), milliseconds(4000)));
  ASSERT_TRUE(
      authenticator().AwaitCounts([](const Counts& n) { return n.pending == 1; }, seconds(30)));
  const grpc::Status refused = Count(Basic(users_->alice, "whatever"), seconds(5));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  // The deadline ends the hanging verification: the worker moves on to the queued one.
  EXPECT_TRUE(
      authenticator().AwaitCounts([](const Counts& n) { return n.pending == 0; }, seconds(4)))
      << "the first verification outlived its call's deadline";
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(calls[i]->Wait().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << i << ": " << calls[i]->Wait().error_message();
    EXPECT_LT(calls[i]->seconds_taken(), 5) << i;
  }
  // The queued one hangs too, until its own deadline; the server's calls all end.
  EXPECT_EQ(calls[4]->Wait().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(
      reliability::WaitFor([&] { return server_->service().live_calls() == 0; }, seconds(5)));
}

// A call that goes away while its verification waits for a worker takes it out of the queue at
// once: the verification is never run, and the queue place is free for others. Every step waits
// on the authenticator's own counts (AwaitCounts), and the calls end when the test cancels them,
// not at deadlines that a slow machine could pass before a call even arrives (the waits' bounds
// only keep a failure from hanging).
TEST_F(SilentDatabaseAuthTest, AbandonedWaitLeavesTheQueueAtOnce) {
  using Counts = auth::Authenticator::Counts;
  // Hangs on the silent database until the test cancels it.
  BackgroundCount hanging(this, ApiToken(users_->token), seconds(120));
  ASSERT_TRUE(authenticator().AwaitCounts(
      [](const Counts& n) { return n.verifying == 1 && n.pending == 0; }, seconds(60)));
  // Another credential waits in the queue's one place.
  BackgroundCount queued(this, Basic(users_->bob, "whatever"), seconds(120));
  ASSERT_TRUE(authenticator().AwaitCounts(
      [](const Counts& n) { return n.pending == 1 && n.waiting == 2; }, seconds(60)));
  // It goes away: it leaves the queue while the hanging verification still runs.
  queued.Cancel();
  EXPECT_EQ(queued.Wait().error_code(), grpc::StatusCode::CANCELLED)
      << queued.Wait().error_message();
  EXPECT_TRUE(authenticator().AwaitCounts(
      [](const Counts& n) { return n.pending == 0 && n.waiting == 1; }, seconds(60)));
  EXPECT_EQ(authenticator().counts().verifying, 1);
  // The place is free again: another credential queues instead of being refused.
  BackgroundCount next(this, Basic(users_->alice, "whatever"), seconds(120));
  EXPECT_TRUE(authenticator().AwaitCounts(
      [](const Counts& n) { return n.pending == 1 && n.waiting == 2; }, seconds(60)));
  next.Cancel();
  EXPECT_EQ(next.Wait().error_code(), grpc::StatusCode::CANCELLED) << next.Wait().error_message();
  hanging.Cancel();
  EXPECT_EQ(hanging.Wait().error_code(), grpc::StatusCode::CANCELLED)
      << hanging.Wait().error_message();
  // The cancelled verification ends with its call, and so does every call of the server.
  EXPECT_TRUE(authenticator().AwaitCounts(
      [](const Counts& n) { return n.verifying == 0 && n.pending == 0 && n.waiting == 0; },
      seconds(60)));
  EXPECT_TRUE(
      reliability::WaitFor([&] { return server_->service().live_calls() == 0; }, seconds(10)));
}

TEST_F(AuthTest, AuthNoneAsksNothingAndSaysSoInTheMetrics) {
  server::ServerOptions options = Options();
  options.service.auth = pipeline::AuthMode::kNone;
  StartServer(options);
  grpc::Status status = Count("");
  EXPECT_TRUE(status.ok()) << status.error_message();
  int messages = 0;
  status = ExportFile("", &messages);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(messages, 0);
  EXPECT_EQ(SumSamples(Metrics(), "dvexport_auth_mode", {"mode=\"none\""}), 1);
  EXPECT_EQ(server_->service().authenticator(), nullptr);
}

// stderr of this process into a file while alive (the call log writes there).
class CapturedStderr {
 public:
  CapturedStderr() : path_(absl::StrCat(::testing::TempDir(), "authn-stderr-", getpid())) {
    std::fflush(stderr);
    saved_ = dup(2);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
  }
  // What was written so far; stderr is restored.
  std::string Finish() {
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    const std::string text = reliability::ReadFile(path_);
    std::remove(path_.c_str());
    return text;
  }

 private:
  std::string path_;
  int saved_ = -1;
};

TEST_F(AuthTest, CallLogNamesTheUserAndTokenUidNeverTheSecret) {
  StartServer(Options());
  CapturedStderr captured;
  grpc::Status by_token = Count(ApiToken(users_->token));
  grpc::Status by_password = Count(Basic(users_->alice, users_->alice_password));
  grpc::Status refused = Count(Basic(users_->alice, "wrong-secret-xyz"));
  server_.reset();
  const std::string log = captured.Finish();
  EXPECT_TRUE(by_token.ok()) << by_token.error_message();
  EXPECT_TRUE(by_password.ok()) << by_password.error_message();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(log, HasSubstr(absl::StrCat("\"auth\":\"api_token\",\"user\":\"", users_->alice,
                                          "\",\"token_uid\":\"", users_->token_uid, "\"")));
  EXPECT_THAT(log,
              HasSubstr(absl::StrCat("\"auth\":\"password\",\"user\":\"", users_->alice, "\"")));
  EXPECT_THAT(log, HasSubstr("\"status\":\"UNAUTHENTICATED\""));
  EXPECT_EQ(log.find(users_->token), std::string::npos);
  EXPECT_EQ(log.find(dhis2::ApiTokenKey(users_->token)), std::string::npos);
  EXPECT_EQ(log.find(users_->alice_password), std::string::npos);
  EXPECT_EQ(log.find("wrong-secret-xyz"), std::string::npos);
}

// Mutual TLS with certificates openssl makes now; --client_identities maps the client's
// certificate to a user.
class CertificateAuthTest : public AuthTest {
 protected:
  static void SetUpTestSuite() {
    AuthTest::SetUpTestSuite();
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "dvexport-authn-tls-", getpid()));
    reliability::MakeTestCertificates(*dir_);
  }
  static void TearDownTestSuite() {
    std::system(("rm -rf " + *dir_).c_str());
    delete dir_;
    AuthTest::TearDownTestSuite();
  }
  static std::string File(const std::string& name) { return *dir_ + "/" + name; }

  // A mutual-TLS server whose --client_identities holds "identities".
  void StartTlsServer(const std::string& identities) {
    std::ofstream(File("identities")) << identities;
    server::ServerOptions options = Options();
    options.tls_cert_file = File("server.pem");
    options.tls_key_file = File("server.key");
    options.tls_client_ca_file = File("ca.pem");
    options.client_identities_file = File("identities");
    StartServer(options);
    client::ChannelOptions channel_options;
    channel_options.tls_ca_file = File("ca.pem");
    channel_options.tls_cert_file = File("client.pem");
    channel_options.tls_key_file = File("client.key");
    auto channel =
        client::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()), channel_options);
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *channel;
    stub_ = v1::DataValueExport::NewStub(channel_);
  }

  static std::string* dir_;
};

std::string* CertificateAuthTest::dir_ = nullptr;

TEST_F(CertificateAuthTest, ListedCertificateStandsForItsUser) {
  StartTlsServer(
      absl::StrCat("# client certificates\n\nCN=dvexport-test-client   ", users_->alice, "\n"));
  CapturedStderr captured;
  grpc::Status status = Count("");
  server_.reset();
  const std::string log = captured.Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(log,
              HasSubstr(absl::StrCat("\"auth\":\"certificate\",\"user\":\"", users_->alice, "\"")));
}

TEST_F(CertificateAuthTest, UnlistedCertificateNeedsATokenOrPassword) {
  StartTlsServer(absl::StrCat("CN=someone-else ", users_->alice, "\n"));
  grpc::Status status = Count("");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  status = Count(ApiToken(users_->token));
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(CertificateAuthTest, ClientIdentitiesNeedAClientCa) {
  std::ofstream(File("identities")) << "CN=x y\n";
  server::ServerOptions options = Options();
  options.tls_cert_file = File("server.pem");
  options.tls_key_file = File("server.key");
  options.client_identities_file = File("identities");
  auto started = server::ExportServer::Start(options);
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(std::string(started.status().message()), HasSubstr("tls_client_ca"));
}

TEST(ClientIdentitiesTest, ParsesSubjectsWithSpacesCommentsAndUris) {
  absl::StatusOr<auth::ClientIdentities> parsed = auth::ClientIdentities::Parse(
      "# comment\n  \nCN=Data Warehouse,O=Ministry of Health   warehouse\n"
      "spiffe://example.org/etl\tetl\n",
      "--client_identities f");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->size(), 2u);
  EXPECT_EQ(parsed->Find("CN=Data Warehouse,O=Ministry of Health", {}), "warehouse");
  EXPECT_EQ(parsed->Find("CN=other", {"spiffe://example.org/etl"}), "etl");
  EXPECT_EQ(parsed->Find("CN=Data Warehouse", {}), std::nullopt);
  EXPECT_EQ(parsed->Find("", {}), std::nullopt);
}

TEST(ClientIdentitiesTest, RefusesOneFieldAndDuplicates) {
  EXPECT_EQ(auth::ClientIdentities::Parse("warehouse\n", "f").status().message(),
            "f: line 1 is not \"<subject DN or URI SAN> <username>\" (one field only)");
  EXPECT_EQ(auth::ClientIdentities::Parse("CN=a x\nCN=a y\n", "f").status().message(),
            "f: line 2 lists \"CN=a\" again (each subject once)");
  EXPECT_EQ(auth::ClientIdentities::Load("/nonexistent/identities").status().message(),
            "--client_identities /nonexistent/identities: cannot be read");
}

}  // namespace
}  // namespace dvexport::testing
