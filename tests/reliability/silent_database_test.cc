// A database that accepts TCP connections and never answers (a hung host, a
// silent network), played by a proxy in front of the private PostgreSQL
// (SilenceableProxy):
// - the real dvexport-server still starts (port file, "started"), says
//   NOT_SERVING, turns SERVING when the database answers and NOT_SERVING again
//   when it goes silent, and honours SIGTERM within --shutdown_grace_s
//   meanwhile, also with an export blocked mid-statement;
// - an export whose database goes silent mid-statement ends within about 1 s
//   of its deadline or of the client's cancel (the cancel request cannot reach
//   the database: the connection is severed), with the stop's code, gives its
//   connections back, and the pool recovers once the database answers again;
// - so does an export whose pool must open a connection to the silent
//   database (the connect is bounded by the call, not by connect_timeout).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/db/connection_pool.h"
#include "service/db/query_canceller.h"
#include "service/db/read_session.h"
#include "service/dhis2/export_request_validator.h"
#include "service/server/export_server.h"
#include "tests/deploy/metrics_scrape.h"
#include "tests/reliability/reliability_support.h"
#include "tests/reliability/silenceable_proxy.h"

extern char** environ;

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

std::string ThroughProxy(const SilenceableProxy& proxy) {
  return absl::StrCat("host=127.0.0.1 port=", proxy.port(), " dbname=dhis2 user=dvexport_reader");
}

// The real dvexport-server binary, listening on a free port of 127.0.0.1 that it writes to a port
// file, its standard error in a log file; both files are named after "name" in the test's
// temporary directory.
struct ServerProcess {
  struct Exit {
    bool exited = false;  // within 30 s of SIGTERM; else it was killed with SIGKILL
    int wstatus = -1;     // waitpid's
    int64_t ms = 0;       // from SIGTERM until the exit was seen (or the wait gave up)
  };

  explicit ServerProcess(const std::string& name)
      : port_file(absl::StrCat(::testing::TempDir(), name, getpid(), ".port")),
        log_file(absl::StrCat(::testing::TempDir(), name, getpid(), ".log")) {
    std::remove(port_file.c_str());
  }

  // Spawns the binary with --listen, --port_file and "flags"; posix_spawn's result.
  int Spawn(std::vector<std::string> flags) {
    std::vector<std::string> args = {DVEXPORT_SERVER_BINARY, "--listen=127.0.0.1:0", "--auth=none",
                                     "--port_file=" + port_file};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    spawned = Clock::now();
    const int result = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return result;
  }

  // Waits up to 20 s for the port in the port file; SIGKILLs the process if it does not come.
  bool WaitForPort() {
    const bool started = WaitFor(
        [&] {
          std::ifstream in(port_file);
          return static_cast<bool>(in >> port);
        },
        seconds(20));
    if (!started) kill(pid, SIGKILL);
    return started;
  }

  // Sends SIGTERM and waits up to 30 s for the exit, then SIGKILLs.
  Exit Terminate() {
    Exit terminated;
    const Clock::time_point signalled = Clock::now();
    kill(pid, SIGTERM);
    terminated.exited =
        WaitFor([&] { return waitpid(pid, &terminated.wstatus, WNOHANG) == pid; }, seconds(30));
    terminated.ms = std::chrono::duration_cast<milliseconds>(Clock::now() - signalled).count();
    if (!terminated.exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &terminated.wstatus, 0);
    }
    return terminated;
  }

  void RemoveFiles() {
    std::remove(port_file.c_str());
    std::remove(log_file.c_str());
  }

  const std::string port_file;
  const std::string log_file;
  pid_t pid = 0;
  Clock::time_point spawned;  // just before posix_spawn
  int port = 0;               // once WaitForPort() returned true
};

TEST(SilentDatabaseTest, ServerStartsServesWhenTheDatabaseAnswersAndStopsOnSigterm) {
  SilenceableProxy proxy(PrivatePostgres::port());
  ServerProcess server("dvexport-silent-");
  ASSERT_EQ(server.Spawn({"--pg=" + ThroughProxy(proxy), "--health_probe_interval_ms=500",
                          "--shutdown_grace_s=2"}),
            0);

  // Listening, logged and port file written although the database never answers.
  const bool started = server.WaitForPort();
  const auto startup_ms =
      std::chrono::duration_cast<milliseconds>(Clock::now() - server.spawned).count();
  ASSERT_TRUE(started) << ReadFile(server.log_file);
  EXPECT_LT(startup_ms, 5000);
  EXPECT_NE(ReadFile(server.log_file).find("\"event\":\"started\""), std::string::npos);
  auto channel = PlaintextChannel(server.port);
  EXPECT_EQ(HealthStatus(channel), "NOT_SERVING");

  proxy.SetSilent(false);
  EXPECT_TRUE(WaitFor([&] { return HealthStatus(channel) == "SERVING"; }, seconds(20)));

  // The database goes silent while the server runs: the probe's own timeout says so.
  proxy.SetSilent(true);
  EXPECT_TRUE(WaitFor([&] { return HealthStatus(channel) == "NOT_SERVING"; }, seconds(20)));

  // SIGTERM while probes hang on the silent database: out within the grace period.
  const ServerProcess::Exit terminated = server.Terminate();
  EXPECT_TRUE(terminated.exited);
  EXPECT_TRUE(WIFEXITED(terminated.wstatus) && WEXITSTATUS(terminated.wstatus) == 0)
      << terminated.wstatus;
  EXPECT_LT(terminated.ms, 2000 + 1000);
  std::printf("{\"event\":\"silent_database\",\"startup_ms\":%lld,\"sigterm_exit_ms\":%lld}\n",
              static_cast<long long>(startup_ms), static_cast<long long>(terminated.ms));
  server.RemoveFiles();
}

// The real binary, through the proxy: SIGTERM while an export's COPY waits on the silent
// database still exits within --shutdown_grace_s (and the 1 s it takes to sever).
TEST(SilentDatabaseTest, SigtermWhileAnExportWaitsMidStatementExitsOnTime) {
  constexpr int kGraceS = 2;
  SilenceableProxy proxy(PrivatePostgres::port(), /*silent=*/false);
  ServerProcess server("dvexport-silent-mid-");
  ASSERT_EQ(server.Spawn({"--pg=" + ThroughProxy(proxy), "--chunk_kib=16",
                          "--health_probe_interval_ms=200",
                          absl::StrCat("--shutdown_grace_s=", kGraceS)}),
            0);
  ASSERT_TRUE(server.WaitForPort()) << ReadFile(server.log_file);
  auto channel = PlaintextChannel(server.port);
  EXPECT_TRUE(WaitFor([&] { return HealthStatus(channel) == "SERVING"; }, seconds(20)));

  // The client reads one chunk; then the database goes silent, and the export's COPY waits.
  std::atomic<bool> silenced{false};
  ExportOutcome outcome;
  std::jthread client([&] {
    auto stub = v1::DataValueExport::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(120));
    outcome = ReadExport(stub.get(), &context, WholeDatabaseRequest(), [&](int n) {
      if (n != 1) return;
      proxy.SetSilent(true);
      silenced = true;
    });
  });
  ASSERT_TRUE(WaitFor([&] { return silenced.load(); }, seconds(60)));
  std::this_thread::sleep_for(milliseconds(500));  // what was in flight is drained

  const ServerProcess::Exit terminated = server.Terminate();
  client.join();
  EXPECT_TRUE(terminated.exited) << ReadFile(server.log_file);
  EXPECT_TRUE(WIFEXITED(terminated.wstatus) && WEXITSTATUS(terminated.wstatus) == 0)
      << terminated.wstatus;
  // The grace period, 1 s until the connection is severed, and the exit (slower sanitized).
  EXPECT_LT(terminated.ms, kGraceS * 1000 + 2000 + (kSanitized ? 2500 : 0))
      << ReadFile(server.log_file);
  EXPECT_FALSE(outcome.status.ok());
  EXPECT_FALSE(outcome.has_trailer);
  std::printf("{\"event\":\"silent_mid_statement_sigterm\",\"grace_ms\":%d,\"exit_ms\":%lld}\n",
              kGraceS * 1000, static_cast<long long>(terminated.ms));
  server.RemoveFiles();
}

// The server in-process, its pool and its health probes through the proxy.
class SilentMidStatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WaitFor([] { return ActiveCopies() == 0; }, seconds(30)));
    proxy_ = std::make_unique<SilenceableProxy>(PrivatePostgres::port(), /*silent=*/false);
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.conninfo = ThroughProxy(*proxy_);
    options.health_probe_interval = milliseconds(200);
    options.service.chunk_size = 16 * 1024;
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    channel_ = PlaintextChannel(server_->port());
    stub_ = v1::DataValueExport::NewStub(channel_);
    ASSERT_TRUE(WaitFor([&] { return HealthStatus(channel_) == "SERVING"; }, seconds(20)));
  }

  void TearDown() override {
    server_.reset();
    proxy_.reset();
  }

  // The sum of the server's metric "name" with "labels".
  double Metric(const std::string& name, const std::vector<std::string>& labels = {}) {
    return testing::SumSamples(testing::HttpGet(server_->metrics_port(), "/metrics"), name, labels);
  }

  // Milliseconds from "since" until the server holds no pool connection (30000: never).
  int64_t MillisUntilPoolIsFree(Clock::time_point since) {
    if (!WaitFor([&] { return Metric("dvexport_db_pool_in_use") == 0; }, seconds(30))) {
      return 30000;
    }
    return std::chrono::duration_cast<milliseconds>(Clock::now() - since).count();
  }

  // The export "outcome" ended with the call's deadline, and the server's pool was free within
  // 2 s of it; "event" logs how long that took. The call ended with its stop's code, not with
  // the severed socket's or connect_timeout's UNAVAILABLE, and the server logged and counted it
  // DEADLINE_EXCEEDED, not CANCELLED.
  void ExpectTheDeadlineEndedTheExport(const ExportOutcome& outcome,
                                       std::chrono::system_clock::time_point deadline,
                                       const char* event) {
    EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << outcome.status.error_message();
    EXPECT_FALSE(outcome.has_trailer);
    const Clock::time_point deadline_steady =
        Clock::now() -
        std::chrono::duration_cast<Clock::duration>(std::chrono::system_clock::now() - deadline);
    const int64_t free_ms = MillisUntilPoolIsFree(deadline_steady);
    EXPECT_LT(free_ms, 2000);
    // Logged and counted as what ended it, although the client's deadline reaches the server as
    // a cancel, before the server's own (grpc_door::CancelledCallStatus).
    EXPECT_TRUE(WaitFor([&] { return Metric("dvexport_exports_total") == 1; }, seconds(10)));
    EXPECT_EQ(Metric("dvexport_exports_total", {"code=\"DEADLINE_EXCEEDED\""}), 1);
    std::printf("{\"event\":\"%s\",\"pool_free_after_deadline_ms\":%lld}\n", event,
                static_cast<long long>(free_ms));
  }

  // The database answers again: health turns SERVING, the pool opens new connections for the
  // next export, every cancel request that waited for the silent database has its answer, and
  // the database ends up with no reader transaction.
  void ExpectRecoveryOnceTheDatabaseAnswers() {
    EXPECT_EQ(HealthStatus(channel_), "NOT_SERVING");
    proxy_->SetSilent(false);
    EXPECT_TRUE(WaitFor([&] { return HealthStatus(channel_) == "SERVING"; }, seconds(20)));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    ExportOutcome outcome = ReadExport(stub_.get(), &context, WholeDatabaseRequest());
    EXPECT_TRUE(CompleteAndConsistent(outcome)) << outcome.status.error_message();
    EXPECT_TRUE(WaitFor([] { return db::QueryCanceller::cancels_in_flight() == 0; }, seconds(20)))
        << db::QueryCanceller::cancels_in_flight() << " cancel requests still wait";
    EXPECT_TRUE(WaitFor([] { return ReaderTransactions() == 0; }, seconds(20)));
  }

  // The client reads one chunk of a whole-database export and nothing for "unread"; then the
  // database goes silent, and "silent" later the client cancels. The call ends CANCELLED, the
  // pool is free within 2 s of the cancel ("event" logs how long it took), and the server
  // recovers once the database answers.
  void CancelWhenSilent(milliseconds unread, milliseconds silent, const char* event) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(120));
    Clock::time_point cancelled;
    ExportOutcome outcome = ReadExport(stub_.get(), &context, WholeDatabaseRequest(), [&](int n) {
      if (n != 1) return;
      std::this_thread::sleep_for(unread);
      proxy_->SetSilent(true);
      std::this_thread::sleep_for(silent);  // the server's COPY now waits on the silence
      cancelled = Clock::now();
      context.TryCancel();
    });
    EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_FALSE(outcome.has_trailer);
    const int64_t free_ms = MillisUntilPoolIsFree(cancelled);
    EXPECT_LT(free_ms, 2000);
    EXPECT_TRUE(WaitFor([&] { return Metric("dvexport_exports_total") == 1; }, seconds(10)));
    EXPECT_EQ(Metric("dvexport_exports_total", {"code=\"CANCELLED\""}), 1);
    std::printf("{\"event\":\"%s\",\"pool_free_after_cancel_ms\":%lld}\n", event,
                static_cast<long long>(free_ms));
    ExpectRecoveryOnceTheDatabaseAnswers();
  }

  std::unique_ptr<SilenceableProxy> proxy_;
  std::unique_ptr<server::ExportServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

TEST_F(SilentMidStatementTest, DeadlineEndsTheExportWithinASecondAndFreesItsConnections) {
  grpc::ClientContext context;
  const auto deadline = std::chrono::system_clock::now() + seconds(3);
  context.set_deadline(deadline);
  ExportOutcome outcome = ReadExport(stub_.get(), &context, WholeDatabaseRequest(), [&](int n) {
    if (n == 1) proxy_->SetSilent(true);
  });
  ExpectTheDeadlineEndedTheExport(outcome, deadline, "silent_mid_statement_deadline");
  ExpectRecoveryOnceTheDatabaseAnswers();
}

TEST_F(SilentMidStatementTest, ClientCancelEndsTheExportWithinASecondAndFreesItsConnections) {
  CancelWhenSilent(/*unread=*/milliseconds(0), /*silent=*/milliseconds(500),
                   "silent_mid_statement_cancel");
}

// The client stops reading until the transport and the hand-off queue are full, so that the
// reader waits to hand over a chunk, not on the database; then the database goes silent and the
// client cancels. The reader's COPY is stopped without waiting on the silent database (once it
// sent its own cancel request, which waited for the database without a timeout: 40 s here, until
// the database answered again). 58 MB to send: far more than the transport's window and the queue
// hold. Once the database answers again its backend leaves its transaction: the severed
// connection's end reaches it through the proxy.
//
// Until 2026-12-05 this test was disabled: under load a socket of this process stayed ESTABLISHED
// with unread COPY rows and the backend in its transaction, and a teardown took up to 100 s. The
// holder was the test's proxy, not the server: its relay sat in a blocking write() towards the
// server's connection, which the server had severed (shutdown(2)), drained and closed within
// 1 s. A socket shut for reading sends no window update once drained, so the relay's write never
// returned until the orphaned socket's FIN-WAIT-2 timeout (60 s) or its zero-window probes
// (backed off to about a minute) got a reset; meanwhile the relay kept its connection to
// PostgreSQL (the ESTABLISHED socket, with the COPY rows it could not pass on) open. The relay
// now never blocks (SilenceableProxy::Relay).
TEST_F(SilentMidStatementTest, ClientCancelWhileTheReaderWaitsForTheClientEndsWithinASecond) {
  CancelWhenSilent(/*unread=*/seconds(2), /*silent=*/milliseconds(300),
                   "silent_cancel_while_waiting_for_the_client");
}

// The pool is empty and the database silent from the start: the export's connect waits on it.
// It ends with the call's deadline, far below connect_timeout (10 s), and frees the pool.
TEST_F(SilentMidStatementTest, DeadlineEndsAnExportWhoseNewConnectionWaits) {
  proxy_->SetSilent(true);
  ASSERT_EQ(Metric("dvexport_db_pool_in_use"), 0);
  grpc::ClientContext context;
  const auto deadline = std::chrono::system_clock::now() + seconds(2);
  context.set_deadline(deadline);
  ExportOutcome outcome = ReadExport(stub_.get(), &context, WholeDatabaseRequest());
  ExpectTheDeadlineEndedTheExport(outcome, deadline, "silent_connect_export_deadline");
  ExpectRecoveryOnceTheDatabaseAnswers();
}

// A count that ends at the client's deadline is logged and counted DEADLINE_EXCEEDED, not
// CANCELLED: its connect waits on the silent database until the deadline, which reaches the
// server as the client's cancel (RST_STREAM), before the server's own deadline. A count the
// client cancels stays CANCELLED.
TEST_F(SilentMidStatementTest, CountEndedByItsDeadlineIsLoggedAsDeadlineExceeded) {
  proxy_->SetSilent(true);
  v1::CountResponse response;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(1));
    const grpc::Status status =
        stub_->CountDataValues(&context, WholeDatabaseRequest().query(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  }
  EXPECT_TRUE(WaitFor([&] { return Metric("dvexport_exports_total") == 1; }, seconds(10)));
  EXPECT_EQ(
      Metric("dvexport_exports_total", {"rpc=\"CountDataValues\"", "code=\"DEADLINE_EXCEEDED\""}),
      1);
  // The first count's call may still be live after its metric (a loaded machine): the canceller
  // below must see the second one's, not cancel before the second is sent.
  ASSERT_TRUE(WaitFor([&] { return server_->service().live_calls() == 0; }, seconds(10)));
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    std::jthread canceller([&] {
      // Cancelled once the server has the call (then it waits on the silence), long before its
      // deadline.
      WaitFor([&] { return server_->service().live_calls() == 1; }, seconds(30));
      context.TryCancel();
    });
    const grpc::Status status =
        stub_->CountDataValues(&context, WholeDatabaseRequest().query(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
  }
  EXPECT_TRUE(WaitFor([&] { return Metric("dvexport_exports_total") == 2; }, seconds(10)));
  EXPECT_EQ(Metric("dvexport_exports_total", {"rpc=\"CountDataValues\"", "code=\"CANCELLED\""}), 1);
  ExpectRecoveryOnceTheDatabaseAnswers();
}

// The database side alone: opening a connection to a database that is silent from the start
// (an empty pool, connect_timeout 10 s) ends with the stop's status within about 50 ms of the
// deadline or of Cancel(), and the pool counts no connection afterwards.
TEST(SilentDatabaseSessionTest, ConnectToASilentDatabaseEndsWithTheStopsStatus) {
  SilenceableProxy proxy(PrivatePostgres::port(), /*silent=*/true);
  db::ConnectionPool pool(ThroughProxy(proxy), 1);
  absl::StatusOr<dhis2::ExportParams> params =
      dhis2::ValidateExportRequest(WholeDatabaseRequest().query());
  ASSERT_TRUE(params.ok()) << params.status();
  for (const bool by_deadline : {true, false}) {
    SCOPED_TRACE(by_deadline ? "deadline" : "cancel");
    const auto deadline = std::chrono::system_clock::now() + seconds(by_deadline ? 2 : 60);
    db::ReadSession session(&pool, db::ReadSessionOptions(), deadline);
    std::jthread canceller;
    if (!by_deadline) {
      canceller = std::jthread([&] {
        std::this_thread::sleep_for(milliseconds(500));
        session.Cancel();
      });
    }
    const Clock::time_point start = Clock::now();
    const absl::Status status = session.Begin(*params, /*principal=*/nullptr);
    const auto took_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
    if (canceller.joinable()) canceller.join();
    EXPECT_EQ(status.code(),
              by_deadline ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kCancelled)
        << status;
    // The stop (2 s deadline or cancel at 0.5 s) and a little: far below connect_timeout.
    EXPECT_LT(took_ms, (by_deadline ? 2000 : 500) + 1500);
    EXPECT_EQ(pool.in_use(), 0);
    std::printf("{\"event\":\"silent_connect_%s\",\"took_ms\":%lld}\n",
                by_deadline ? "deadline" : "cancel", static_cast<long long>(took_ms));
  }
  // The pool's one connection was given back: once the database answers, it opens it.
  proxy.SetSilent(false);
  absl::StatusOr<db::PooledConnection> conn = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_EQ(pool.in_use(), 1);
}

// The database side alone: a statement that waits on the silent database ends with the status
// of what stopped it (never Unavailable from the severed socket), within about 1 s of it.
TEST(SilentDatabaseSessionTest, StatementOnASilentDatabaseEndsWithTheStopsStatus) {
  SilenceableProxy proxy(PrivatePostgres::port(), /*silent=*/false);
  db::ConnectionPool pool(ThroughProxy(proxy), 2);
  absl::StatusOr<dhis2::ExportParams> params =
      dhis2::ValidateExportRequest(WholeDatabaseRequest().query());
  ASSERT_TRUE(params.ok()) << params.status();
  for (const bool by_deadline : {true, false}) {
    SCOPED_TRACE(by_deadline ? "deadline" : "cancel");
    proxy.SetSilent(false);
    const auto deadline = std::chrono::system_clock::now() + seconds(by_deadline ? 3 : 60);
    auto session = std::make_unique<db::ReadSession>(&pool, db::ReadSessionOptions(), deadline);
    ASSERT_TRUE(session->Begin(*params, /*principal=*/nullptr).ok());
    proxy.SetSilent(true);
    std::jthread canceller;
    if (!by_deadline) {
      canceller = std::jthread([&] {
        std::this_thread::sleep_for(milliseconds(500));
        session->Cancel();
      });
    }
    const Clock::time_point start = Clock::now();
    absl::StatusOr<int64_t> count = session->Count();
    const auto took_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
    if (canceller.joinable()) canceller.join();
    EXPECT_EQ(count.status().code(),
              by_deadline ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kCancelled)
        << count.status();
    // The stop (3 s deadline or cancel at 0.5 s), then 1 s until the connection is severed.
    EXPECT_LT(took_ms, (by_deadline ? 3000 : 500) + 2000);
    // The ROLLBACK on the severed connection fails at once; the connection is dropped.
    const Clock::time_point destroying = Clock::now();
    session.reset();
    EXPECT_LT(Clock::now() - destroying, milliseconds(1500));
    EXPECT_EQ(pool.in_use(), 0);
  }
  // The database answers again: new connections, and they work.
  proxy.SetSilent(false);
  db::ReadSession session(&pool, db::ReadSessionOptions(),
                          std::chrono::system_clock::now() + seconds(60));
  ASSERT_TRUE(session.Begin(*params, /*principal=*/nullptr).ok());
  absl::StatusOr<int64_t> count = session.Count();
  EXPECT_TRUE(count.ok()) << count.status();
  EXPECT_TRUE(session.Finish().ok());
}

}  // namespace
}  // namespace dvexport::reliability
