// Fair shares of the export slots between users, against the real server and the private
// PostgreSQL (the small demo database with 6 KB comments, ~60 MB whole-database exports):
// - stalled clients of one user give up their slots within about 10 s once another user's export
//   waits (--stall_timeout_contended_s), where the plain stall timeout takes a minute and more;
// - with the default --max_exports_per_user, another user's export finds a slot at once;
// - a burst of one user does not starve another: the other's exports are served in turn, before
//   the burst's queued ones.
//
// Two kinds of users:
// - FairShareByAddressTest: unauthenticated callers, whose user is their address: one user dials
//   127.0.0.1, the other ::1 (the server listens on [::]). Runs now (reliability.fair_shares).
// - FairShareByTokenTest: two DHIS2 users made in the database, each calling with its personal
//   access token (authorization: ApiToken ...), both over IPv4 loopback: the slots key them by
//   their DHIS2 usernames (reliability.fair_shares_tokens).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/server/export_server.h"
#include "tests/deploy/metrics_scrape.h"
#include "tests/reliability/reliability_support.h"

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// How a test user's calls reach the server, and who they say they are.
struct TestUser {
  std::string name;           // for messages
  std::string target;         // what its channels dial, host:port
  std::string authorization;  // the authorization metadata; "" for none
};

// The two users of a scenario, "a" and "b", once the server's port is known.
struct Users {
  TestUser a;
  TestUser b;
};
using UsersFor = std::function<Users(int port)>;

// A channel of its own (a connection of its own: gRPC shares subchannels between channels with
// the same arguments), so that one client's stalled streams cannot hold up another's.
std::shared_ptr<grpc::Channel> OwnChannel(const TestUser& user, int id) {
  grpc::ChannelArguments arguments;
  arguments.SetInt("dvexport.test.fair_share_channel", id);
  return grpc::CreateCustomChannel(user.target, grpc::InsecureChannelCredentials(), arguments);
}

void Prepare(const TestUser& user, grpc::ClientContext* context, seconds deadline) {
  context->set_deadline(std::chrono::system_clock::now() + deadline);
  if (!user.authorization.empty()) context->AddMetadata("authorization", user.authorization);
}

// Clients blocked in their chunk callbacks until Release().
class Latch {
 public:
  void Arrive() {
    std::lock_guard<std::mutex> lock(mu_);
    ++arrived_;
  }
  int arrived() {
    std::lock_guard<std::mutex> lock(mu_);
    return arrived_;
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    released_cv_.wait(lock, [this] { return released_; });
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    released_cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable released_cv_;
  int arrived_ = 0;
  bool released_ = false;
};

// "count" whole-database exports of "user", each on a connection of its own, whose clients stop
// reading after their first message (blocked in "latch" until released): the server's writes
// stop completing and each holds its slot (or waits for one).
struct StalledClients {
  StalledClients(const TestUser& user, int count) : outcomes(count) {
    for (int i = 0; i < count; ++i) {
      contexts.push_back(std::make_unique<grpc::ClientContext>());
      Prepare(user, contexts.back().get(), seconds(180));
    }
    for (int i = 0; i < count; ++i) {
      clients.emplace_back([this, &user, i] {
        auto stub = v1::DataValueExport::NewStub(OwnChannel(user, i));
        outcomes[i] = ReadExport(stub.get(), contexts[i].get(), WholeDatabaseRequest(), [&](int n) {
          if (n != 1) return;
          latch.Arrive();
          latch.Wait();
        });
      });
    }
  }
  ~StalledClients() { CancelReleaseAndJoin(); }

  // The clients read on, to their exports' ends.
  void ReleaseAndJoin() {
    latch.Release();
    for (std::jthread& client : clients) {
      if (client.joinable()) client.join();
    }
  }
  // The clients cancel their calls.
  void CancelReleaseAndJoin() {
    for (auto& context : contexts) context->TryCancel();
    ReleaseAndJoin();
  }

  Latch latch;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<ExportOutcome> outcomes;
  std::vector<std::jthread> clients;
};

// The server listens on [::]; one user dials it over IPv4 loopback, the other over IPv6.
constexpr const char* kBothLoopbacks = "[::]:0";

// The server's options as dvexport-server's defaults make them (4 slots, --stall_timeout_s 60,
// --stall_timeout_contended_s 5, the default 64 KiB/s minimum rate and 16 MiB of credit), with
// "max_per_user" slots for one user.
server::ServerOptions Options(const std::string& listen, int max_per_user) {
  server::ServerOptions options;
  options.listen = listen;
  options.conninfo = PrivatePostgres::reader_conninfo();
  options.pool_size = 8;
  options.service.max_concurrent_exports = 4;
  options.service.max_exports_per_user = max_per_user;
  options.service.max_queued_exports = 64;
  options.service.max_queued_exports_per_user = 32;
  options.service.stall_timeout = seconds(60);
  options.service.stall_timeout_contended = seconds(5);
  // Callers by address carry no credentials: the slots then key them by address (--auth none).
  // Callers by token (listening on IPv4 only) are authenticated, and keyed by their username.
  options.service.auth =
      listen == kBothLoopbacks ? pipeline::AuthMode::kNone : pipeline::AuthMode::kDhis2;
  return options;
}

std::unique_ptr<server::ExportServer> StartServer(const server::ServerOptions& options) {
  auto started = server::ExportServer::Start(options);
  EXPECT_TRUE(started.ok()) << started.status();
  if (!started.ok()) return nullptr;
  return *std::move(started);
}

// Stalled clients of "a" (4 whole-database exports that read one chunk and stop) hold every slot
// (--max_exports_per_user 4): an export of "b" waits until the contended stall timeout ends one of
// them, about 10 s at most (5 s of credit at most, then 5 s), not the plain 60 s plus the credit
// of their windows.
void StalledClientsOfOneUserGiveUpTheirSlotsForAnother(const std::string& listen,
                                                       const UsersFor& users) {
  constexpr int kStalled = 4;
  server::ServerOptions options = Options(listen, kStalled);
  options.metrics_listen = "127.0.0.1:0";
  std::unique_ptr<server::ExportServer> server = StartServer(options);
  ASSERT_NE(server, nullptr);
  const Users both = users(server->port());
  const TestUser& a = both.a;
  const TestUser& b = both.b;
  StalledClients stalled(a, kStalled);
  Latch& latch = stalled.latch;
  std::vector<ExportOutcome>& outcomes = stalled.outcomes;
  ASSERT_TRUE(WaitFor([&] { return latch.arrived() == kStalled; }, seconds(60)));
  EXPECT_EQ(server->service().active_exports(), kStalled);

  const Clock::time_point asked = Clock::now();
  auto stub = v1::DataValueExport::NewStub(OwnChannel(b, 100));
  grpc::ClientContext context;
  Prepare(b, &context, seconds(120));
  ExportOutcome other = ReadExport(stub.get(), &context, SmallRequest());
  const auto waited_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - asked).count();
  EXPECT_TRUE(CompleteAndConsistent(other)) << other.status.error_message();
  // About 10 s: the bound the contended timeout gives, with room for a loaded machine; without it
  // the export would wait over 60 s.
  EXPECT_LT(waited_ms, 20000) << b.name << "'s export waited for " << a.name << "'s stalled ones";
  // Only as many stalled exports end as the waiter needs: once it had a slot, nobody waited and
  // the others went back to --stall_timeout_s (they may have stalled at the same moment).
  const int still_held = server->service().active_exports();
  EXPECT_LT(still_held, kStalled);
  std::printf(
      "{\"event\":\"fair_share_stalled\",\"users\":\"%s\",\"stalled\":%d,\"other_waited_ms\":%lld,"
      "\"stalled_still_holding\":%d}\n",
      a.authorization.empty() ? "address" : "token", kStalled, static_cast<long long>(waited_ms),
      still_held);

  // The clients read on: those ended say why, the others complete.
  stalled.ReleaseAndJoin();
  int contended = 0;
  for (const ExportOutcome& outcome : outcomes) {
    if (outcome.status.ok()) {
      EXPECT_TRUE(CompleteAndConsistent(outcome));
      continue;
    }
    EXPECT_FALSE(outcome.has_trailer);
    ++contended;
    EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << outcome.status.error_message();
    EXPECT_NE(outcome.status.error_message().find(
                  "while exports of other users waited for an export slot"),
              std::string::npos)
        << outcome.status.error_message();
  }
  EXPECT_GE(contended, 1);
  EXPECT_EQ(contended, kStalled - still_held);
  EXPECT_TRUE(WaitFor([&] { return server->service().active_exports() == 0; }, seconds(30)));
  const std::string metrics = dvexport::testing::HttpGet(server->metrics_port(), "/metrics");
  EXPECT_EQ(dvexport::testing::SumSamples(metrics, "dvexport_stalled_exports_total",
                                          {"timeout=\"stall_timeout_contended\""}),
            contended)
      << metrics;
}

// With the default share (3 of 4 slots), stalled clients of "a" never hold the last slot: "b"'s
// export takes it at once, while "a"'s fourth export waits for a slot of "a"'s own.
void OneUserNeverHoldsEverySlot(const std::string& listen, const UsersFor& users) {
  constexpr int kStalled = 4;
  std::unique_ptr<server::ExportServer> server = StartServer(Options(listen, 3));
  ASSERT_NE(server, nullptr);
  const Users both = users(server->port());
  const TestUser& a = both.a;
  const TestUser& b = both.b;
  StalledClients stalled(a, kStalled);
  Latch& latch = stalled.latch;
  ASSERT_TRUE(
      WaitFor([&] { return latch.arrived() == 3 && server->service().queued_exports() == 1; },
              seconds(60)));
  EXPECT_EQ(server->service().active_exports(), 3);

  const Clock::time_point asked = Clock::now();
  auto stub = v1::DataValueExport::NewStub(OwnChannel(b, 100));
  grpc::ClientContext context;
  Prepare(b, &context, seconds(60));
  ExportOutcome other = ReadExport(stub.get(), &context, SmallRequest());
  const auto waited_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - asked).count();
  EXPECT_TRUE(CompleteAndConsistent(other)) << other.status.error_message();
  // Done while "a"'s three still hold their slots and its fourth still waits: "b" did not wait
  // for any of them.
  EXPECT_EQ(server->service().active_exports(), 3);
  EXPECT_EQ(server->service().queued_exports(), 1);
  EXPECT_EQ(latch.arrived(), 3);
  std::printf("{\"event\":\"fair_share_cap\",\"users\":\"%s\",\"stalled\":%d,\"other_ms\":%lld}\n",
              a.authorization.empty() ? "address" : "token", kStalled,
              static_cast<long long>(waited_ms));

  stalled.CancelReleaseAndJoin();
  EXPECT_TRUE(WaitFor([&] { return server->service().active_exports() == 0; }, seconds(30)));
}

// A burst of 12 whole-database exports of "a", each read slowly (a few seconds), with every slot
// open to one user (--max_exports_per_user 4): "a" holds the 4 slots, 8 wait. An export of "b"
// that comes after the burst is served when the first slot frees, before the burst's queued
// ones (first come first served would put it behind all 8). Then, with the default share, "b"'s
// exports are served at once, however large the burst.
void ABurstOfOneUserDoesNotStarveAnother(const std::string& listen, const UsersFor& users,
                                         int max_per_user) {
  constexpr int kBurst = 12;
  std::unique_ptr<server::ExportServer> server = StartServer(Options(listen, max_per_user));
  ASSERT_NE(server, nullptr);
  const Users both = users(server->port());
  const TestUser& a = both.a;
  const TestUser& b = both.b;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  for (int i = 0; i < kBurst; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    Prepare(a, contexts.back().get(), seconds(300));
  }
  std::atomic<int> burst_done{0};
  std::vector<ExportOutcome> outcomes(kBurst);
  std::vector<std::jthread> clients;
  for (int i = 0; i < kBurst; ++i) {
    clients.emplace_back([&, i] {
      auto stub = v1::DataValueExport::NewStub(OwnChannel(a, i));
      // 20 ms per 256 KiB chunk: a 60 MB export takes about 5 s, however fast the server.
      outcomes[i] = ReadExport(stub.get(), contexts[i].get(), WholeDatabaseRequest(),
                               [](int) { std::this_thread::sleep_for(milliseconds(20)); });
      ++burst_done;
    });
  }
  const int holding = std::min(max_per_user, 4);
  ASSERT_TRUE(WaitFor(
      [&] {
        return server->service().active_exports() == holding &&
               server->service().queued_exports() == kBurst - holding;
      },
      seconds(60)));

  // "b" asks three exports one after the other.
  int done_before_first = -1;
  int done_before_last = -1;
  for (int i = 0; i < 3; ++i) {
    auto stub = v1::DataValueExport::NewStub(OwnChannel(b, 100 + i));
    grpc::ClientContext context;
    Prepare(b, &context, seconds(120));
    ExportOutcome other = ReadExport(stub.get(), &context, SmallRequest());
    EXPECT_TRUE(CompleteAndConsistent(other)) << other.status.error_message();
    if (i == 0) done_before_first = burst_done.load();
    done_before_last = burst_done.load();
  }
  // Served in turn with the burst: before the 8 queued exports of "a" ran (at most the 4 that
  // held the slots when "b" came ended before). First come first served: 8 at least.
  EXPECT_LE(done_before_first, holding) << "the burst's queued exports went first";
  if (max_per_user < 4) {
    // A slot was open to "b" all along: none of the burst had to end first.
    EXPECT_EQ(done_before_last, 0);
  }
  std::printf(
      "{\"event\":\"fair_share_burst\",\"users\":\"%s\",\"max_per_user\":%d,\"burst\":%d,"
      "\"burst_done_before_other\":%d,\"burst_done_before_others_third\":%d}\n",
      a.authorization.empty() ? "address" : "token", max_per_user, kBurst, done_before_first,
      done_before_last);

  for (auto& burst : contexts) burst->TryCancel();
  for (std::jthread& client : clients) client.join();
  for (const ExportOutcome& outcome : outcomes) {
    EXPECT_TRUE(outcome.status.ok() || outcome.status.error_code() == grpc::StatusCode::CANCELLED)
        << outcome.status.error_message();
  }
  EXPECT_TRUE(WaitFor([&] { return server->service().active_exports() == 0; }, seconds(30)));
}

// --- Unauthenticated callers: the user is the address ---

Users ByAddress(int port) {
  return {.a = {"127.0.0.1", absl::StrCat("127.0.0.1:", port), ""},
          .b = {"::1", absl::StrCat("[::1]:", port), ""}};
}

Users ByAddressSwapped(int port) {
  Users users = ByAddress(port);
  return {.a = users.b, .b = users.a};
}

TEST(FairShareByAddressTest, StalledClientsOfOneUserDelayAnotherByAtMostAbout10Seconds) {
  StalledClientsOfOneUserGiveUpTheirSlotsForAnother(kBothLoopbacks, ByAddress);
}

TEST(FairShareByAddressTest, OneUserNeverHoldsEverySlot) {
  OneUserNeverHoldsEverySlot(kBothLoopbacks, ByAddress);
}

TEST(FairShareByAddressTest, ABurstOfOneUserDoesNotStarveAnother) {
  ABurstOfOneUserDoesNotStarveAnother(kBothLoopbacks, ByAddress, 4);
  ABurstOfOneUserDoesNotStarveAnother(kBothLoopbacks, ByAddressSwapped, 3);
}

// --- DHIS2 users with personal access tokens ---

// Valid V2 tokens (their checksums hold); api_token.key is the lowercase hex SHA-256 of each.
constexpr const char* kTokenA = "d2p_xljboEp5qOpzC6XIoZd8S3HL1qmXuBkUMYm4sd7x3XzZ1RS5Rb";
constexpr const char* kTokenB = "d2p_EWp6Rq4Zojp6R7akt3WXhNkGQKiimrCqR51JuZNy4Vna4ImOnx";

// Two superusers of their own (not the demo's: ids from 990001, uids fairShare*), each with a
// token and the root org units as data capture and data view org units, so that both read the
// whole database.
class FairShareByTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RemoveUsers();
    AdminQuery(
        "INSERT INTO userinfo (userinfoid, uid, created, lastupdated, username, surname, "
        "firstname, disabled) VALUES "
        "(990001, 'fairShareUA', now(), now(), 'fair_share_a', 'A', 'Fair share', false), "
        "(990002, 'fairShareUB', now(), now(), 'fair_share_b', 'B', 'Fair share', false)");
    AdminQuery(
        "INSERT INTO userrole (userroleid, uid, created, lastupdated, name) VALUES "
        "(990001, 'fairShareR1', now(), now(), 'Fair share test superuser')");
    AdminQuery("INSERT INTO userroleauthorities (userroleid, authority) VALUES (990001, 'ALL')");
    AdminQuery(
        "INSERT INTO userrolemembers (userroleid, userid) VALUES (990001, 990001), "
        "(990001, 990002)");
    AdminQuery(
        "INSERT INTO usermembership (organisationunitid, userinfoid) "
        "SELECT organisationunitid, u FROM organisationunit, (VALUES (990001), (990002)) v(u) "
        "WHERE parentid IS NULL");
    AdminQuery(
        "INSERT INTO userdatavieworgunits (userinfoid, organisationunitid) "
        "SELECT u, organisationunitid FROM organisationunit, (VALUES (990001), (990002)) v(u) "
        "WHERE parentid IS NULL");
    AdminQuery(absl::StrCat(
        "INSERT INTO api_token (apitokenid, uid, created, lastupdated, lastupdatedby, createdby, "
        "version, type, expire, key, attributes) VALUES "
        "(990001, 'fairShareTA', now(), now(), 990001, 990001, 2, 'PERSONAL_ACCESS_TOKEN_V2', "
        "(extract(epoch FROM now() + interval '1 day') * 1000)::bigint, "
        "encode(sha256('",
        kTokenA,
        "'::bytea), 'hex'), '[]'), "
        "(990002, 'fairShareTB', now(), now(), 990002, 990002, 2, 'PERSONAL_ACCESS_TOKEN_V2', "
        "(extract(epoch FROM now() + interval '1 day') * 1000)::bigint, "
        "encode(sha256('",
        kTokenB, "'::bytea), 'hex'), '[]')"));
  }
  void TearDown() override { RemoveUsers(); }

  static void RemoveUsers() {
    AdminQuery("DELETE FROM api_token WHERE apitokenid IN (990001, 990002)");
    AdminQuery("DELETE FROM userdatavieworgunits WHERE userinfoid IN (990001, 990002)");
    AdminQuery("DELETE FROM usermembership WHERE userinfoid IN (990001, 990002)");
    AdminQuery("DELETE FROM userrolemembers WHERE userroleid = 990001");
    AdminQuery("DELETE FROM userroleauthorities WHERE userroleid = 990001");
    AdminQuery("DELETE FROM userrole WHERE userroleid = 990001");
    AdminQuery("DELETE FROM userinfo WHERE userinfoid IN (990001, 990002)");
  }

  // Both over IPv4 loopback: one address, two users.
  static Users ByToken(int port) {
    return {
        .a = {"fair_share_a", absl::StrCat("127.0.0.1:", port), absl::StrCat("ApiToken ", kTokenA)},
        .b = {"fair_share_b", absl::StrCat("127.0.0.1:", port),
              absl::StrCat("ApiToken ", kTokenB)}};
  }
  static Users ByTokenSwapped(int port) {
    Users users = ByToken(port);
    return {.a = users.b, .b = users.a};
  }
};

TEST_F(FairShareByTokenTest, StalledClientsOfOneUserDelayAnotherByAtMostAbout10Seconds) {
  StalledClientsOfOneUserGiveUpTheirSlotsForAnother("127.0.0.1:0", ByToken);
}

TEST_F(FairShareByTokenTest, OneUserNeverHoldsEverySlot) {
  OneUserNeverHoldsEverySlot("127.0.0.1:0", ByToken);
}

TEST_F(FairShareByTokenTest, ABurstOfOneUserDoesNotStarveAnother) {
  ABurstOfOneUserDoesNotStarveAnother("127.0.0.1:0", ByToken, 4);
  ABurstOfOneUserDoesNotStarveAnother("127.0.0.1:0", ByTokenSwapped, 3);
}

class PrivatePostgresEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_TRUE(PrivatePostgres::Start()); }
  void TearDown() override { PrivatePostgres::Stop(); }
};

}  // namespace
}  // namespace dvexport::reliability

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new dvexport::reliability::PrivatePostgresEnvironment);
  return RUN_ALL_TESTS();
}
