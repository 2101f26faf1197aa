// Slow readers are not stalled readers (issue 19): clients that keep reading, slower than the
// server sends, complete with a small --stall_timeout_s whatever their receive window, and one
// that stops reading is still ended. The clients are real processes: a grpcio client (Debian's
// python3-grpcio, slow_grpc_reader.py) and the dvexport CLI writing to a pipe that a Python
// reader drains slowly.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/server/export_server.h"
#include "tests/reliability/reliability_support.h"

extern char** environ;

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// Debian's interpreter, which python3-grpcio installs into (a python3 earlier on PATH may not
// have it).
constexpr char kPython[] = "/usr/bin/python3";
constexpr char kReader[] = DVEXPORT_SOURCE_DIR "/tests/reliability/slow_grpc_reader.py";
constexpr milliseconds kStall(2000);

// A child process with its standard input and output on pipes; killed if still running when
// destroyed.
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    stdin_ = in[1];
    stdout_ = fdopen(out[0], "r");
  }
  ~Child() {
    if (stdin_ >= 0) close(stdin_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_ != nullptr) fclose(stdout_);
  }

  bool started() const { return pid_ > 0 && stdout_ != nullptr; }
  // The next line of its output without the newline; "" at the end (its own deadlines bound it).
  std::string ReadLine() {
    char* line = nullptr;
    size_t size = 0;
    std::string result;
    if (getline(&line, &size, stdout_) > 0) result = line;
    free(line);
    if (!result.empty() && result.back() == '\n') result.pop_back();
    return result;
  }
  void WriteLine() {
    if (write(stdin_, "\n", 1) != 1) ADD_FAILURE() << "cannot write to the child";
  }
  // Its exit status once it ended (its own deadlines bound the wait).
  int Wait() {
    int wstatus = -1;
    waitpid(pid_, &wstatus, 0);
    pid_ = 0;
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  }

 private:
  pid_t pid_ = 0;
  int stdin_ = -1;
  FILE* stdout_ = nullptr;
};

std::unique_ptr<server::ExportServer> StartServer() {
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.conninfo = PrivatePostgres::reader_conninfo();
  options.pool_size = 8;
  options.service.stall_timeout = kStall;  // the default 64 KiB/s minimum rate
  auto started = server::ExportServer::Start(options);
  EXPECT_TRUE(started.ok()) << started.status();
  return started.ok() ? *std::move(started) : nullptr;
}

// The whole database, the first "limit" values (0: all) of it: ~6.3 KB each.
v1::ExportFileRequest Request(int limit) {
  v1::ExportFileRequest request = WholeDatabaseRequest();
  if (limit > 0) request.mutable_query()->set_limit(limit);
  return request;
}

struct GrpcioOutcome {
  nlohmann::json result;  // slow_grpc_reader.py's last line
  ExportOutcome export_outcome;
  double seconds = 0;
};

// The messages slow_grpc_reader.py wrote to "path", parsed as FileChunk.
ExportOutcome ParseMessages(const std::string& path) {
  ExportOutcome outcome;
  std::ifstream in(path, std::ios::binary);
  unsigned char length[4];
  while (in.read(reinterpret_cast<char*>(length), 4)) {
    std::string bytes((length[0] << 24) | (length[1] << 16) | (length[2] << 8) | length[3], '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) break;
    v1::FileChunk chunk;
    if (!chunk.ParseFromString(bytes)) {
      ADD_FAILURE() << "a message is not a FileChunk";
      break;
    }
    if (chunk.has_trailer()) {
      outcome.has_trailer = true;
      outcome.trailer = chunk.trailer();
      continue;
    }
    outcome.data_bytes += static_cast<int64_t>(chunk.data().size());
    outcome.data_crc32 = static_cast<uint32_t>(
        crc32(outcome.data_crc32, reinterpret_cast<const Bytef*>(chunk.data().data()),
              static_cast<uInt>(chunk.data().size())));
    ++outcome.chunks;
  }
  return outcome;
}

std::vector<std::string> ReaderArgs(int port, const v1::ExportFileRequest& request,
                                    const std::string& name, std::vector<std::string> extra) {
  const std::string dir = ::testing::TempDir();
  const std::string request_file = absl::StrCat(dir, "slow-reader-", name, "-", getpid(), ".req");
  std::ofstream(request_file, std::ios::binary) << request.SerializeAsString();
  std::vector<std::string> args = {kPython,
                                   kReader,
                                   absl::StrCat("--target=127.0.0.1:", port),
                                   "--request=" + request_file,
                                   absl::StrCat("--out=", dir, "slow-reader-", name, "-", getpid()),
                                   "--deadline=100"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Runs slow_grpc_reader.py to the end of its call.
GrpcioOutcome RunGrpcio(int port, const v1::ExportFileRequest& request, const std::string& name,
                        std::vector<std::string> extra) {
  std::vector<std::string> args = ReaderArgs(port, request, name, std::move(extra));
  const std::string out = args[4].substr(std::string("--out=").size());
  GrpcioOutcome outcome;
  const Clock::time_point start = Clock::now();
  Child child(args);
  EXPECT_TRUE(child.started());
  if (!child.started()) return outcome;
  std::string last;
  for (std::string line = child.ReadLine(); !line.empty(); line = child.ReadLine()) last = line;
  EXPECT_EQ(child.Wait(), 0) << "is python3-grpcio installed? " << last;
  outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  outcome.result = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  outcome.export_outcome = ParseMessages(out);
  std::remove(out.c_str());
  return outcome;
}

void ExpectComplete(const GrpcioOutcome& outcome) {
  ASSERT_TRUE(outcome.result.is_object()) << "no result from slow_grpc_reader.py";
  EXPECT_EQ(outcome.result["code"], "OK") << outcome.result.dump();
  const ExportOutcome& e = outcome.export_outcome;
  EXPECT_TRUE(e.has_trailer);
  EXPECT_EQ(e.trailer.file_bytes(), e.data_bytes);
  EXPECT_EQ(e.trailer.file_crc32(), e.data_crc32);
}

// The reported case: a grpcio client whose window grew to megabytes (BDP probing) reads one
// 256 KiB chunk every 0.25 s; its transport opens its window again only after it has read about
// half of it, so no write completed for longer than the stall timeout.
TEST(SlowReaderTest, AGrpcioClientWithALargeWindowReadingAt1MiBPerSecondCompletes) {
  std::unique_ptr<server::ExportServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  // ~8 MB: beyond the first window, the 4 queued chunks and a gap of ~2 s.
  GrpcioOutcome outcome = RunGrpcio(server->port(), Request(1300), "large", {"--rate=1048576"});
  ExpectComplete(outcome);
  std::printf("{\"event\":\"slow_grpcio_large_window\",\"bytes\":%lld,\"seconds\":%.1f}\n",
              static_cast<long long>(outcome.export_outcome.data_bytes), outcome.seconds);
}

// 100 KiB/s with gRPC's 64 KiB window: each 256 KiB chunk completes only once the client asks
// for it, 2.5 s after the one before.
TEST(SlowReaderTest, AGrpcioClientWithASmallWindowReadingAt100KiBPerSecondCompletes) {
  std::unique_ptr<server::ExportServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  GrpcioOutcome outcome =
      RunGrpcio(server->port(), Request(250), "small", {"--rate=102400", "--small-window"});
  ExpectComplete(outcome);
  std::printf("{\"event\":\"slow_grpcio_small_window\",\"bytes\":%lld,\"seconds\":%.1f}\n",
              static_cast<long long>(outcome.export_outcome.data_bytes), outcome.seconds);
}

// A grpcio client that stops reading is still ended: after the stall timeout plus the time a
// 64 KiB/s reader needs for what its transport took (here: its 64 KiB window and the chunks
// that completed before it stopped, well under 1 MiB).
TEST(SlowReaderTest, AGrpcioClientThatStopsReadingIsEndedAfterTheTimeoutAndItsCredit) {
  std::unique_ptr<server::ExportServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  std::vector<std::string> args =
      ReaderArgs(server->port(), Request(0), "stops", {"--stop-after=1", "--small-window"});
  Child child(args);
  ASSERT_TRUE(child.started());
  ASSERT_EQ(child.ReadLine(), "stopped");
  const Clock::time_point stopped = Clock::now();
  const bool released =
      WaitFor([&] { return server->service().active_exports() == 0 && ReaderTransactions() == 0; },
              seconds(60));
  const auto released_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - stopped).count();
  EXPECT_TRUE(released);
  EXPECT_GE(released_ms, kStall.count());
  // 1 MiB at 64 KiB/s is 16 s.
  EXPECT_LT(released_ms, kStall.count() + 16000 + 5000);
  child.WriteLine();  // reads on: the status comes after the messages its transport holds
  std::string last;
  for (std::string line = child.ReadLine(); !line.empty(); line = child.ReadLine()) last = line;
  EXPECT_EQ(child.Wait(), 0);
  nlohmann::json result = nlohmann::json::parse(last, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(result.is_object()) << last;
  EXPECT_EQ(result["code"], "DEADLINE_EXCEEDED") << last;
  EXPECT_NE(result["details"].get<std::string>().find("read nothing for 2 s"), std::string::npos)
      << last;
  std::printf("{\"event\":\"grpcio_stopped_released\",\"stall_ms\":%lld,\"released_ms\":%lld}\n",
              static_cast<long long>(kStall.count()), static_cast<long long>(released_ms));
}

// The CLI (gRPC C++, windows of megabytes) writing to a pipe that a reader drains at 400 KiB/s:
// the CLI stops reading while the pipe is full, as a slow disk would make it.
TEST(SlowReaderTest, TheCliWritingToASlowPipeCompletes) {
  std::unique_ptr<server::ExportServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const v1::ExportRequest query = Request(0).query();
  const std::string filters =
      absl::StrCat("--data-set ", absl::StrJoin(query.data_set(), ","), " --org-unit ",
                   absl::StrJoin(query.org_unit(), ","), " --children --start-date 1900-01-01",
                   " --end-date 2100-12-31 --limit 2000 --format json");
  // Reads 16 KiB at a time, never faster than 400 KiB/s, and prints the values it received.
  const std::string pipe_reader =
      "import json, sys, time\n"
      "start, data = time.monotonic(), bytearray()\n"
      "while True:\n"
      "    b = sys.stdin.buffer.read1(16384)\n"
      "    if not b: break\n"
      "    data += b\n"
      "    time.sleep(max(0, start + len(data) / 1048576 - time.monotonic()))\n"
      "print(len(json.loads(data)['dataValues']), len(data))\n";
  const std::string script =
      absl::StrCat("\"$0\" export --server 127.0.0.1:", server->port(), " --timeout 100 ", filters,
                   " -o - | \"$1\" -c \"$2\"; echo \"${PIPESTATUS[@]}\"");
  const Clock::time_point start = Clock::now();
  Child child({"/bin/bash", "-c", script, DVEXPORT_CLI_BINARY, kPython, pipe_reader});
  ASSERT_TRUE(child.started());
  const std::string received = child.ReadLine();
  const std::string statuses = child.ReadLine();
  EXPECT_EQ(child.Wait(), 0);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(statuses, "0 0") << "the CLI's and the reader's exit statuses";
  std::istringstream counts(received);
  int values = 0;
  long long bytes = 0;
  counts >> values >> bytes;
  EXPECT_EQ(values, 2000) << received;
  std::printf("{\"event\":\"cli_slow_pipe\",\"bytes\":%lld,\"seconds\":%.1f}\n", bytes, elapsed);
}

}  // namespace
}  // namespace dvexport::reliability
