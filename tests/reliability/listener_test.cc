// The gRPC listener under file-descriptor exhaustion, and the watchdog that notices a lost one:
// - the real dvexport-server under a real `ulimit -n 1024` takes a burst of more idle TCP
//   connections than the limit allows, and serves again as soon as they close (gRPC 1.51's
//   accept loop used to stop for good at the first EMFILE);
// - the soft descriptor limit is raised to the hard limit at startup;
// - ProbeListener tells a serving gRPC port (plaintext, TLS, mutual TLS) from a port whose
//   connections only the kernel completes, and from a closed one;
// - a listener that stops accepting turns health NOT_SERVING for good, and the real binary then
//   shuts down and exits 1 so that its supervisor starts it again.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/grpc/accept_guard.h"
#include "service/grpc/listener_probe.h"
#include "service/server/export_server.h"
#include "tests/reliability/reliability_support.h"

extern char** environ;

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The real dvexport-server under a shell's `ulimit <limit_option>` (e.g. "-n 1024": soft and
// hard), listening on a free port of 127.0.0.1 that it writes to a port file; its standard error
// in a log file.
struct LimitedServer {
  explicit LimitedServer(const std::string& name)
      : port_file(absl::StrCat(::testing::TempDir(), name, getpid(), ".port")),
        log_file(absl::StrCat(::testing::TempDir(), name, getpid(), ".log")) {
    std::remove(port_file.c_str());
  }
  ~LimitedServer() {
    if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    std::remove(port_file.c_str());
    std::remove(log_file.c_str());
  }

  // Spawns `sh -c 'ulimit <limit_option> && exec dvexport-server ...'` with "flags"; then waits
  // up to 20 s for the port file.
  bool Start(const std::string& limit_option, std::vector<std::string> flags) {
    std::vector<std::string> args = {
        "/bin/sh",
        "-c",
        absl::StrCat("ulimit ", limit_option, " && exec \"$0\" \"$@\""),
        DVEXPORT_SERVER_BINARY,
        "--listen=127.0.0.1:0",
        "--auth=none",
        "--port_file=" + port_file,
        "--pg=" + PrivatePostgres::reader_conninfo()};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return false;
    return WaitFor(
        [&] {
          std::ifstream in(port_file);
          return static_cast<bool>(in >> port);
        },
        seconds(20));
  }

  std::string Log() const { return ReadFile(log_file); }

  // Health from a new channel (no reconnect backoff left over from refused attempts).
  std::string Health() const { return HealthStatus(PlaintextChannel(port), milliseconds(500)); }

  const std::string port_file;
  const std::string log_file;
  pid_t pid = 0;
  int port = 0;
};

// Raises this process's soft descriptor limit to its hard limit; the limit.
rlim_t RaiseOwnDescriptorLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur;
}

// "count" non-blocking TCP connections to 127.0.0.1:"port" that send nothing.
std::vector<int> OpenIdleConnections(int port, int count) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<int> fds;
  for (int i = 0; i < count; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
    fds.push_back(fd);
  }
  return fds;
}

TEST(DescriptorLimitTest, ListenerServesAgainAfterABurstBeyondTheDescriptorLimit) {
  constexpr int kLimit = 1024;
  constexpr int kBurst = 1100;
  ASSERT_GE(RaiseOwnDescriptorLimit(), static_cast<rlim_t>(kBurst + 200))
      << "the test itself needs more descriptors than the burst";
  LimitedServer server("dvexport-burst-");
  ASSERT_TRUE(server.Start(absl::StrCat("-n ", kLimit), {})) << server.Log();
  ASSERT_TRUE(WaitFor([&] { return server.Health() == "SERVING"; }, seconds(20))) << server.Log();

  std::vector<int> burst = OpenIdleConnections(server.port, kBurst);
  ASSERT_EQ(burst.size(), static_cast<size_t>(kBurst));
  // The server has met the limit: it dropped connections beyond its ceiling (or, before the fix,
  // its accept loop failed with EMFILE and stopped).
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string log = server.Log();
        return Contains(log, "\"connection_dropped\"") || Contains(log, "Failed accept4");
      },
      seconds(20)))
      << server.Log();
  for (int fd : burst) close(fd);

  const Clock::time_point closed = Clock::now();
  EXPECT_TRUE(WaitFor([&] { return server.Health() == "SERVING"; }, seconds(5))) << server.Log();
  const auto serving_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - closed).count();
  EXPECT_EQ(waitpid(server.pid, nullptr, WNOHANG), 0) << "the server exited";
  const std::string log = server.Log();
  EXPECT_FALSE(Contains(log, "Failed accept4")) << log;
  EXPECT_FALSE(Contains(log, "Too many open files")) << log;
  std::printf(
      "{\"event\":\"descriptor_burst\",\"limit\":%d,\"connections\":%d,"
      "\"serving_after_close_ms\":%lld}\n",
      kLimit, kBurst, static_cast<long long>(serving_ms));
}

TEST(DescriptorLimitTest, SoftLimitIsRaisedToTheHardLimitAtStartup) {
  const rlim_t hard = RaiseOwnDescriptorLimit();
  ASSERT_GT(hard, 512u);
  LimitedServer server("dvexport-rlimit-");
  ASSERT_TRUE(server.Start("-S -n 512", {})) << server.Log();
  EXPECT_TRUE(Contains(server.Log(), absl::StrCat("{\"event\":\"descriptor_limit\",\"soft\":", hard,
                                                  ",\"hard\":", hard, ",\"was\":512}")))
      << server.Log();
  std::ifstream limits(absl::StrCat("/proc/", server.pid, "/limits"));
  std::string line;
  bool found = false;
  while (std::getline(limits, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    found = true;
    std::istringstream fields(line.substr(std::strlen("Max open files")));
    rlim_t soft_now = 0;
    rlim_t hard_now = 0;
    fields >> soft_now >> hard_now;
    EXPECT_EQ(soft_now, hard) << line;
    EXPECT_EQ(hard_now, hard) << line;
  }
  EXPECT_TRUE(found);
}

// Every descriptor taken by something else than connections (here: /dev/null, in this process,
// which also runs the server): the guard drops the waiting connection through its spare
// descriptor instead of handing EMFILE to gRPC, and the listener serves once descriptors are free.
TEST(DescriptorLimitTest, FullDescriptorTableDropsTheConnectionAndKeepsListening) {
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.conninfo = PrivatePostgres::reader_conninfo();
  auto server = server::ExportServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE(WaitFor(
      [&] { return HealthStatus(PlaintextChannel((*server)->port())) == "SERVING"; }, seconds(10)));
  const int64_t dropped_before = grpc_door::ConnectionsDroppedByGuard();
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);
  timeval wait{.tv_sec = 5, .tv_usec = 0};
  setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  std::vector<int> fillers;
  for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>((*server)->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int connected =
      connect(client, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  char byte = 0;
  const ssize_t received = connected == 0 ? recv(client, &byte, 1, 0) : -2;
  const int received_errno = errno;
  for (int fd : fillers) close(fd);
  close(client);
  ASSERT_EQ(connected, 0);
  EXPECT_TRUE(received == 0 || (received < 0 && received_errno == ECONNRESET))
      << received << " " << std::strerror(received_errno);
  EXPECT_GT(grpc_door::ConnectionsDroppedByGuard(), dropped_before);
  EXPECT_TRUE(WaitFor(
      [&] {
        return HealthStatus(PlaintextChannel((*server)->port()), milliseconds(500)) == "SERVING";
      },
      seconds(5)));
  EXPECT_FALSE((*server)->listener_lost());
}

// A connection that never sends its HTTP/2 preface is closed after the handshake timeout, not
// after gRPC's default 2 minutes: idle connections cannot hold descriptors for long.
TEST(DescriptorLimitTest, IdleConnectionIsClosedAfterTheHandshakeTimeout) {
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.conninfo = PrivatePostgres::reader_conninfo();
  options.handshake_timeout = milliseconds(500);
  auto server = server::ExportServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  std::vector<int> idle = OpenIdleConnections((*server)->port(), 1);
  ASSERT_EQ(idle.size(), 1u);
  const int fd = idle[0];
  const int blocking = fcntl(fd, F_GETFL) & ~O_NONBLOCK;
  fcntl(fd, F_SETFL, blocking);
  timeval wait{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  const Clock::time_point start = Clock::now();
  char buffer[4096];
  ssize_t n = 0;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
  }
  const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  EXPECT_TRUE(n == 0 || errno == ECONNRESET) << std::strerror(errno);
  EXPECT_GE(ms, 400);
  EXPECT_LT(ms, 3000);
  close(fd);
}

// The listening socket of this process bound to "port" (a descriptor of gRPC's), or -1.
int FindListeningSocket(int port) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(entry.path().filename().c_str());
    int listening = 0;
    socklen_t length = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || !listening) {
      continue;
    }
    sockaddr_storage address{};
    socklen_t address_length = sizeof(address);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &address_length) != 0) continue;
    if (address.ss_family != AF_INET && address.ss_family != AF_INET6) continue;
    const uint16_t bound = address.ss_family == AF_INET
                               ? reinterpret_cast<sockaddr_in*>(&address)->sin_port
                               : reinterpret_cast<sockaddr_in6*>(&address)->sin6_port;
    if (ntohs(bound) == port) return fd;
  }
  return -1;
}

// Certificates openssl makes at test time (MakeTestCertificates): a CA, a server certificate for
// 127.0.0.1 and a client certificate.
class ListenerProbeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "dvexport-probe-", getpid()));
    MakeTestCertificates(*dir_);
  }

  static void TearDownTestSuite() {
    std::system(("rm -rf " + *dir_).c_str());
    delete dir_;
  }

  static std::string File(const std::string& name) { return *dir_ + "/" + name; }

  static server::ServerOptions Options(bool tls, bool mutual) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = PrivatePostgres::reader_conninfo();
    if (tls) {
      options.tls_cert_file = File("server.pem");
      options.tls_key_file = File("server.key");
    }
    if (mutual) options.tls_client_ca_file = File("ca.pem");
    return options;
  }

  static absl::Status Probe(int port, bool tls) {
    absl::StatusOr<grpc_door::ListenerAddress> address =
        grpc_door::ResolveListenerAddress("127.0.0.1:0", port, tls);
    if (!address.ok()) return address.status();
    return grpc_door::ProbeListener(*address, milliseconds(1000));
  }

  static std::string* dir_;
};

std::string* ListenerProbeTest::dir_ = nullptr;

TEST_F(ListenerProbeTest, ServingPortsAnswerInPlaintextTlsAndMutualTls) {
  for (const auto& [tls, mutual] : {std::pair{false, false}, {true, false}, {true, true}}) {
    auto server = server::ExportServer::Start(Options(tls, mutual));
    ASSERT_TRUE(server.ok()) << server.status();
    EXPECT_TRUE(Probe((*server)->port(), tls).ok())
        << "tls " << tls << " mutual " << mutual << ": " << Probe((*server)->port(), tls);
  }
}

TEST_F(ListenerProbeTest, PortThatOnlyTheKernelAnswersOrNobodyFails) {
  // Listening, never accepting: connects succeed into the backlog, nothing is ever sent.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  for (bool tls : {false, true}) {
    const Clock::time_point start = Clock::now();
    const absl::Status probe = Probe(port, tls);
    const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
    EXPECT_EQ(probe.code(), absl::StatusCode::kUnavailable) << probe;
    EXPECT_TRUE(Contains(std::string(probe.message()), "nothing accepted it")) << probe;
    EXPECT_GE(ms, 900);
    EXPECT_LT(ms, 3000);
  }
  close(fd);
  // Closed: refused at once.
  const absl::Status refused = Probe(port, false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(std::string(refused.message()), "Connection refused")) << refused;
}

TEST(ListenerWatchdogTest, LostListenerTurnsHealthNotServingForGood) {
  std::atomic<int> lost_calls{0};
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.conninfo = PrivatePostgres::reader_conninfo();
  options.health_probe_interval = milliseconds(100);
  options.listener_probe_interval = milliseconds(100);
  options.on_listener_lost = [&] { ++lost_calls; };
  auto server = server::ExportServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  // A connection made before the listener goes: it goes on serving (health included).
  auto channel = PlaintextChannel((*server)->port());
  ASSERT_TRUE(WaitFor([&] { return HealthStatus(channel) == "SERVING"; }, seconds(10)));
  // Several probe intervals with a live listener: no loss.
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE((*server)->listener_lost());

  // The listener stops listening (shutdown(2) of gRPC's listening socket): gRPC's accept loop
  // fails (EINVAL) and ends, and new connections are refused.
  const int listener = FindListeningSocket((*server)->port());
  ASSERT_GE(listener, 0);
  ASSERT_EQ(shutdown(listener, SHUT_RD), 0);
  const Clock::time_point cut = Clock::now();
  EXPECT_TRUE(WaitFor([&] { return lost_calls.load() == 1; }, seconds(5)));
  const auto lost_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - cut).count();
  EXPECT_TRUE((*server)->listener_lost());
  EXPECT_EQ(HealthStatus(channel), "NOT_SERVING");
  // The database prober, which still succeeds, does not turn it back.
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(HealthStatus(channel), "NOT_SERVING");
  EXPECT_EQ(lost_calls.load(), 1);
  std::printf("{\"event\":\"listener_lost\",\"probe_interval_ms\":100,\"noticed_after_ms\":%lld}\n",
              static_cast<long long>(lost_ms));
}

// pidfd_getfd(2): a duplicate of descriptor "fd" of process "pid" (a child of this one).
int DuplicateDescriptorOf(pid_t pid, int fd) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return -1;
  const int copy = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  close(pidfd);
  return copy;
}

// The listening socket of process "pid" bound to "port", duplicated into this process; or -1.
int FindListeningSocketOf(pid_t pid, int port) {
  for (const auto& entry :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"))) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    if (error || target.rfind("socket:", 0) != 0) continue;
    const int copy = DuplicateDescriptorOf(pid, std::atoi(entry.path().filename().c_str()));
    if (copy < 0) continue;
    int listening = 0;
    socklen_t length = sizeof(listening);
    // gRPC binds 127.0.0.1 as ::ffff:127.0.0.1 on a dual-stack socket; the port is at the same
    // place in both.
    sockaddr_in6 address{};
    socklen_t address_length = sizeof(address);
    if (getsockopt(copy, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0 && listening &&
        getsockname(copy, reinterpret_cast<sockaddr*>(&address), &address_length) == 0 &&
        (address.sin6_family == AF_INET || address.sin6_family == AF_INET6) &&
        ntohs(address.sin6_port) == port) {
      return copy;
    }
    close(copy);
  }
  return -1;
}

TEST(ListenerWatchdogTest, ServerBinaryExitsOneWhenItsListenerIsLost) {
  LimitedServer server("dvexport-lost-");
  ASSERT_TRUE(server.Start("-n 1024", {"--listener_probe_interval_ms=200", "--shutdown_grace_s=2"}))
      << server.Log();
  ASSERT_TRUE(WaitFor([&] { return server.Health() == "SERVING"; }, seconds(20))) << server.Log();
  const int listener = FindListeningSocketOf(server.pid, server.port);
  ASSERT_GE(listener, 0) << "pidfd_getfd of the server's listening socket";
  ASSERT_EQ(shutdown(listener, SHUT_RD), 0);
  close(listener);

  const Clock::time_point cut = Clock::now();
  int wstatus = 0;
  EXPECT_TRUE(
      WaitFor([&] { return waitpid(server.pid, &wstatus, WNOHANG) == server.pid; }, seconds(10)))
      << server.Log();
  const auto exit_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - cut).count();
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 1) << wstatus << server.Log();
  const std::string log = server.Log();
  EXPECT_TRUE(Contains(log, "\"event\":\"listener_lost\"")) << log;
  EXPECT_TRUE(Contains(log, "\"reason\":\"listener_lost\"")) << log;
  EXPECT_TRUE(Contains(log, "{\"event\":\"stopped\",\"exit_code\":1}")) << log;
  server.pid = 0;
  std::printf("{\"event\":\"listener_lost_exit\",\"probe_interval_ms\":200,\"exit_ms\":%lld}\n",
              static_cast<long long>(exit_ms));
}

// Probes every 100 ms of a server that requires client certificates leave no error in its log:
// the probe never reaches the point where the server would refuse it.
TEST_F(ListenerProbeTest, MutualTlsProbesLeaveNoErrorInTheLog) {
  LimitedServer server("dvexport-probe-mtls-");
  ASSERT_TRUE(server.Start(
      "-n 1024", {"--listener_probe_interval_ms=100", "--tls_cert=" + File("server.pem"),
                  "--tls_key=" + File("server.key"), "--tls_client_ca=" + File("ca.pem")}))
      << server.Log();
  std::this_thread::sleep_for(milliseconds(1500));  // about 15 probes
  EXPECT_EQ(waitpid(server.pid, nullptr, WNOHANG), 0) << server.Log();
  const std::string log = server.Log();
  EXPECT_FALSE(Contains(log, "library_log")) << log;
  // A probe may time out on a loaded machine (under ThreadSanitizer, say); three in a row would
  // stop the server.
  EXPECT_FALSE(Contains(log, "listener_lost")) << log;
}

}  // namespace
}  // namespace dvexport::reliability
