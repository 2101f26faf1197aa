// A database that accepts TCP connections and never answers (a hung host, a
// silent network), played by a proxy in front of the private PostgreSQL: the
// real dvexport-server still starts (port file, "started"), says NOT_SERVING,
// turns SERVING when the database answers and NOT_SERVING again when it goes
// silent, and honours SIGTERM within --shutdown_grace_s meanwhile.

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/reliability/reliability_support.h"

extern char** environ;

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// Listens on 127.0.0.1 and connects each client to "target_port". While silent, it accepts
// connections but passes nothing either way, on new and existing connections alike.
class SilenceableProxy {
 public:
  explicit SilenceableProxy(int target_port) : target_port_(target_port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(listen(listen_fd_, 64), 0);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~SilenceableProxy() {
    stop_ = true;
    acceptor_.join();
    std::lock_guard<std::mutex> lock(mu_);
    for (std::thread& relay : relays_) relay.join();
    close(listen_fd_);
  }

  int port() const { return port_; }
  void SetSilent(bool silent) { silent_ = silent; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      pollfd fd = {listen_fd_, POLLIN, 0};
      if (poll(&fd, 1, 50) <= 0) continue;
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      relays_.emplace_back([this, client] { Relay(client); });
    }
  }

  void Relay(int client) {
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(target_port_));
    bool open = connect(server, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    char buffer[16384];
    while (open && !stop_) {
      if (silent_) {
        std::this_thread::sleep_for(milliseconds(20));
        continue;
      }
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (poll(fds, 2, 20) <= 0) continue;
      for (int i = 0; i < 2 && open; ++i) {
        if (fds[i].revents == 0) continue;
        const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
        open = n > 0 && write(fds[1 - i].fd, buffer, static_cast<size_t>(n)) == n;
      }
    }
    close(server);
    close(client);
  }

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> silent_{true};
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> relays_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(SilentDatabaseTest, ServerStartsServesWhenTheDatabaseAnswersAndStopsOnSigterm) {
  SilenceableProxy proxy(PrivatePostgres::port());
  const std::string base = absl::StrCat(::testing::TempDir(), "dvexport-silent-", getpid());
  const std::string port_file = base + ".port";
  const std::string log_file = base + ".log";
  std::remove(port_file.c_str());
  std::vector<std::string> args = {
      DVEXPORT_SERVER_BINARY,
      "--listen=127.0.0.1:0",
      "--port_file=" + port_file,
      absl::StrCat("--pg=host=127.0.0.1 port=", proxy.port(), " dbname=dhis2 user=dvexport_reader"),
      "--health_probe_interval_ms=500",
      "--shutdown_grace_s=2"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const Clock::time_point spawned = Clock::now();
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  // Listening, logged and port file written although the database never answers.
  int port = 0;
  const bool started = WaitFor(
      [&] {
        std::ifstream in(port_file);
        return static_cast<bool>(in >> port);
      },
      seconds(20));
  const auto startup_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - spawned).count();
  if (!started) kill(pid, SIGKILL);
  ASSERT_TRUE(started) << ReadFile(log_file);
  EXPECT_LT(startup_ms, 5000);
  EXPECT_NE(ReadFile(log_file).find("\"event\":\"started\""), std::string::npos);
  auto channel = PlaintextChannel(port);
  EXPECT_EQ(HealthStatus(channel), "NOT_SERVING");

  proxy.SetSilent(false);
  EXPECT_TRUE(WaitFor([&] { return HealthStatus(channel) == "SERVING"; }, seconds(20)));

  // The database goes silent while the server runs: the probe's own timeout says so.
  proxy.SetSilent(true);
  EXPECT_TRUE(WaitFor([&] { return HealthStatus(channel) == "NOT_SERVING"; }, seconds(20)));

  // SIGTERM while probes hang on the silent database: out within the grace period.
  const Clock::time_point signalled = Clock::now();
  kill(pid, SIGTERM);
  int wstatus = -1;
  const bool exited = WaitFor([&] { return waitpid(pid, &wstatus, WNOHANG) == pid; }, seconds(30));
  const auto exit_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - signalled).count();
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &wstatus, 0);
  }
  EXPECT_TRUE(exited);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << wstatus;
  EXPECT_LT(exit_ms, 2000 + 1000);
  std::printf("{\"event\":\"silent_database\",\"startup_ms\":%lld,\"sigterm_exit_ms\":%lld}\n",
              static_cast<long long>(startup_ms), static_cast<long long>(exit_ms));
  std::remove(port_file.c_str());
  std::remove(log_file.c_str());
}

}  // namespace
}  // namespace dvexport::reliability
