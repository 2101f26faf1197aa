// SIGTERM and SIGINT against the real dvexport-server binary: health turns
// NOT_SERVING, new calls are refused, a running export finishes within
// --shutdown_grace_s (or is cancelled when it does not) and its client reads
// all of it, then exit 0.

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/export_client.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/reliability/reliability_support.h"

extern char** environ;

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

class ServerProcess {
 public:
  // Starts dvexport-server on "port" (0: a free one); fails the test if it does not come up.
  void Start(int grace_s, int port = 0) {
    port_file_ = absl::StrCat(::testing::TempDir(), "dvexport-shutdown-port-", getpid());
    std::remove(port_file_.c_str());
    std::vector<std::string> args = {DVEXPORT_SERVER_BINARY,
                                     absl::StrCat("--listen=127.0.0.1:", port),
                                     "--auth=none",
                                     "--port_file=" + port_file_,
                                     "--pg=" + PrivatePostgres::reader_conninfo(),
                                     "--chunk_kib=16",
                                     "--health_probe_interval_ms=200",
                                     absl::StrCat("--shutdown_grace_s=", grace_s)};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ), 0);
    ASSERT_TRUE(WaitFor(
        [&] {
          std::ifstream in(port_file_);
          return static_cast<bool>(in >> port_);
        },
        seconds(60)))
        << "the server did not write its port";
  }

  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::remove(port_file_.c_str());
  }

  // Waits up to "timeout" for the process to exit; its wait status, or -1.
  int WaitExit(std::chrono::milliseconds timeout) {
    int wstatus = -1;
    bool exited = WaitFor([&] { return waitpid(pid_, &wstatus, WNOHANG) == pid_; }, timeout);
    if (!exited) return -1;
    pid_ = 0;
    return wstatus;
  }

  pid_t pid() const { return pid_; }
  int port() const { return port_; }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
  std::string port_file_;
};

class ShutdownTest : public ::testing::TestWithParam<int> {};

TEST_P(ShutdownTest, RunningExportFinishesThenServerExitsZero) {
  ServerProcess server;
  ASSERT_NO_FATAL_FAILURE(server.Start(60));
  auto channel = PlaintextChannel(server.port());
  ASSERT_TRUE(WaitFor([&] { return HealthStatus(channel) == "SERVING"; }, seconds(30)));

  // A health watch opened before the signal sees NOT_SERVING.
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext watch_context;
  grpc::health::v1::HealthCheckRequest watch_request;
  auto watch = health->Watch(&watch_context, watch_request);
  grpc::health::v1::HealthCheckResponse update;
  ASSERT_TRUE(watch->Read(&update));
  ASSERT_EQ(update.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  auto stub = v1::DataValueExport::NewStub(channel);
  grpc::ClientContext context;
  ExportOutcome outcome = ReadExport(stub.get(), &context, WholeDatabaseRequest(), [&](int n) {
    // After the signal the client reads slowly: when the server's call ends, the end of the export
    // is still on its way (gRPC's window, the sockets' buffers), and the client's WINDOW_UPDATEs
    // go on arriving. A connection the server closed then would be reset, and the end lost.
    if (n > 2) std::this_thread::sleep_for(std::chrono::microseconds(300));
    if (n != 2) return;
    // The export is mid-stream, the client paused: now the signal.
    ASSERT_EQ(kill(server.pid(), GetParam()), 0);
    bool not_serving = false;
    while (watch->Read(&update)) {
      if (update.status() == grpc::health::v1::HealthCheckResponse::NOT_SERVING) {
        not_serving = true;
        break;
      }
    }
    EXPECT_TRUE(not_serving);
    watch_context.TryCancel();
    // While running calls finish, a new connection is told NOT_SERVING, and a new export is
    // refused with UNAVAILABLE: the client goes to another server.
    auto late_channel = PlaintextChannel(server.port());
    EXPECT_EQ(HealthStatus(late_channel), "NOT_SERVING");
    auto late_stub = v1::DataValueExport::NewStub(late_channel);
    grpc::ClientContext late_context;
    late_context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    ExportOutcome late = ReadExport(late_stub.get(), &late_context, SmallRequest());
    EXPECT_EQ(late.status.error_code(), grpc::StatusCode::UNAVAILABLE)
        << late.status.error_message();
    EXPECT_EQ(late.status.error_message(), "the server is shutting down; try again");
    EXPECT_EQ(late.data_bytes, 0);
  });
  watch->Finish().IgnoreError();
  EXPECT_TRUE(CompleteAndConsistent(outcome)) << outcome.status.error_message();
  EXPECT_GT(outcome.data_bytes, 50 << 20);
  int wstatus = server.WaitExit(seconds(60));
  ASSERT_TRUE(WIFEXITED(wstatus)) << wstatus;
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
}

TEST_P(ShutdownTest, ExportStillRunningAfterGraceIsCancelledThenServerExitsZero) {
  ServerProcess server;
  ASSERT_NO_FATAL_FAILURE(server.Start(2));
  auto channel = PlaintextChannel(server.port());
  ASSERT_TRUE(WaitFor([&] { return HealthStatus(channel) == "SERVING"; }, seconds(30)));
  auto stub = v1::DataValueExport::NewStub(channel);
  grpc::ClientContext context;
  int wstatus = -1;
  Clock::duration exit_after{};
  ExportOutcome outcome = ReadExport(stub.get(), &context, WholeDatabaseRequest(), [&](int n) {
    if (n != 2) return;
    auto signalled = Clock::now();
    ASSERT_EQ(kill(server.pid(), GetParam()), 0);
    // The client never resumes within the grace period.
    wstatus = server.WaitExit(seconds(60));
    exit_after = Clock::now() - signalled;
  });
  EXPECT_FALSE(outcome.has_trailer);
  EXPECT_FALSE(outcome.status.ok());
  ASSERT_TRUE(WIFEXITED(wstatus)) << wstatus;
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  EXPECT_GE(exit_after, seconds(2) - milliseconds(100));
  EXPECT_LT(exit_after, seconds(30));
  EXPECT_TRUE(WaitFor([] { return ActiveCopies() == 0; }, seconds(10)));
}

// The server process dies (SIGKILL) mid-export: the client library reports
// the broken stream and leaves neither a partial file at the target nor its
// temporary file; a file that was at the target stays as it was.
TEST(KilledServerTest, ClientLeavesTheTargetAsItWas) {
  ServerProcess server;
  ASSERT_NO_FATAL_FAILURE(server.Start(60));
  auto channel = PlaintextChannel(server.port());
  ASSERT_TRUE(WaitFor([&] { return HealthStatus(channel) == "SERVING"; }, seconds(30)));

  const std::string dir = absl::StrCat(::testing::TempDir(), "dvexport-killed-", getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string fresh = dir + "/fresh.json";
  const std::string existing = dir + "/existing.json";
  std::ofstream(existing) << "an earlier export";

  std::optional<client::ExportClient> client(std::in_place, channel);
  for (const std::string& target : {fresh, existing}) {
    client::ExportOptions options;
    // The attempts that follow find no server; short waits between them keep the test fast.
    options.retry_backoff = milliseconds(10);
    bool killed = false;
    options.on_progress = [&](const client::ExportProgress&) {
      if (killed) return;
      killed = true;
      ASSERT_EQ(kill(server.pid(), SIGKILL), 0);
      server.WaitExit(seconds(30));
    };
    absl::StatusOr<client::ExportSummary> summary =
        client->ExportToFile(WholeDatabaseRequest(), target, options);
    EXPECT_TRUE(killed) << "the export ended before the server could be killed";
    EXPECT_FALSE(summary.ok()) << target;
    if (target == fresh) {
      ASSERT_NO_FATAL_FAILURE(server.Start(60));
      channel = PlaintextChannel(server.port());
      client.emplace(channel);
    }
  }
  EXPECT_NE(access(fresh.c_str(), F_OK), 0) << "a partial file at the target";
  std::ifstream in(existing);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "an earlier export");
  // Only the file that was there before remains: no temporary file.
  int entries = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") ++entries;
    }
    closedir(d);
  }
  EXPECT_EQ(entries, 1) << "files left in " << dir;
  std::remove(existing.c_str());
  rmdir(dir.c_str());
}

// The server is killed (SIGKILL) mid-export and started again on the same port 3 s later, as
// a supervisor restarts it. The CLI's retries once stopped at "attempt 2 of 4": the reconnect
// was refused (UNAVAILABLE before any response, gRPC's own retries failing at once in the
// channel's reconnect backoff). Now attempts 3 and 4 run, and the export completes.
TEST(KilledServerTest, CliExportCompletesAcrossAServerRestart) {
  ServerProcess server;
  ASSERT_NO_FATAL_FAILURE(server.Start(60));
  const int port = server.port();
  ASSERT_TRUE(
      WaitFor([&] { return HealthStatus(PlaintextChannel(port)) == "SERVING"; }, seconds(30)));

  const std::string dir = absl::StrCat(::testing::TempDir(), "dvexport-restart-", getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string target = dir + "/values.json";
  const std::string errors = dir + "/cli.err";
  const v1::ExportFileRequest request = WholeDatabaseRequest();
  const v1::ExportRequest& query = request.query();
  std::vector<std::string> args = {DVEXPORT_CLI_BINARY,
                                   "export",
                                   "--server",
                                   absl::StrCat("127.0.0.1:", port),
                                   "--children",
                                   "--start-date",
                                   query.start_date(),
                                   "--end-date",
                                   query.end_date(),
                                   "-o",
                                   target};
  for (const std::string& uid : query.data_set()) args.insert(args.end(), {"--data-set", uid});
  for (const std::string& uid : query.org_unit()) args.insert(args.end(), {"--org-unit", uid});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t cli = 0;
  ASSERT_EQ(posix_spawn(&cli, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  // Mid-export: the CLI wrote its first MiB to its temporary file. It is stopped while the
  // server dies, so that the export cannot end first.
  auto temporary_file_grew = [&] {
    bool grew = false;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        struct stat st;
        if (std::string(e->d_name).rfind(".values.json.dvexport-", 0) == 0 &&
            stat((dir + "/" + e->d_name).c_str(), &st) == 0 && st.st_size > 0) {
          grew = true;
        }
      }
      closedir(d);
    }
    return grew;
  };
  bool mid_export = false;
  for (auto give_up = Clock::now() + seconds(30); !mid_export && Clock::now() < give_up;) {
    mid_export = temporary_file_grew();
    if (!mid_export) std::this_thread::sleep_for(milliseconds(1));
  }
  kill(cli, SIGSTOP);
  ASSERT_EQ(kill(server.pid(), SIGKILL), 0);
  server.WaitExit(seconds(30));
  kill(cli, SIGCONT);
  EXPECT_TRUE(mid_export) << "the CLI wrote nothing within 30 s";
  std::this_thread::sleep_for(seconds(3));
  ASSERT_NO_FATAL_FAILURE(server.Start(60, port));

  int wstatus = -1;
  const bool exited = WaitFor([&] { return waitpid(cli, &wstatus, WNOHANG) == cli; }, seconds(60));
  if (!exited) {
    kill(cli, SIGKILL);
    waitpid(cli, &wstatus, 0);
  }
  std::ifstream err_in(errors);
  const std::string stderr_text((std::istreambuf_iterator<char>(err_in)),
                                std::istreambuf_iterator<char>());
  ASSERT_TRUE(exited) << "the CLI did not end within 60 s of the restart: " << stderr_text;
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << wstatus << ": " << stderr_text;
  EXPECT_NE(stderr_text.find("(attempt 2 of 4)"), std::string::npos) << stderr_text;
  // The CLI checked the file against the trailer (values, length, CRC-32) before renaming it;
  // the values it reports are those the database holds.
  client::ExportClient counter(PlaintextChannel(port));
  absl::StatusOr<int64_t> count = counter.CountDataValues(query);
  ASSERT_TRUE(count.ok()) << count.status();
  std::ifstream file_in(target);
  const std::string file((std::istreambuf_iterator<char>(file_in)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(stderr_text.find(absl::StrCat("dvexport: wrote ", *count, " values, ", file.size(),
                                          " bytes to ", target)),
            std::string::npos)
      << stderr_text;
  int64_t values = 0;
  for (size_t at = file.find("\"dataElement\":"); at != std::string::npos;
       at = file.find("\"dataElement\":", at + 1)) {
    ++values;
  }
  EXPECT_EQ(values, *count);
  std::remove(target.c_str());
  std::remove(errors.c_str());
  rmdir(dir.c_str());
}

INSTANTIATE_TEST_SUITE_P(Signals, ShutdownTest, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGTERM ? "SIGTERM" : "SIGINT");
                         });

}  // namespace
}  // namespace dvexport::reliability
