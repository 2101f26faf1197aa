// Runs the built dvexport program against the in-process test server.

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/scripted_export_server.h"
#include "tests/client/test_files.h"

#ifndef DVEXPORT_CLI_PATH
#error "DVEXPORT_CLI_PATH must name the dvexport program"
#endif

extern char** environ;

namespace dvexport::cli {
namespace {

using client::testutil::DataChunk;
using client::testutil::ExportScript;
using client::testutil::GoodScript;
using client::testutil::MakeFileContent;
using client::testutil::ReadFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_FALSE(io_.path().empty());
    ASSERT_NE(server_.address(), "127.0.0.1:0") << "the test server did not start";
  }

  // Starts dvexport with "args", its stdout and stderr going to files, under
  // a file size limit of "file_size_limit" bytes. "stdout_fd", if not -1, is
  // its stdout instead; "environment" is added to its environment.
  pid_t Start(const std::vector<std::string>& args, rlim_t file_size_limit = RLIM_INFINITY,
              int stdout_fd = -1, const std::vector<std::string>& environment = {}) {
    std::vector<std::string> strings = {DVEXPORT_CLI_PATH};
    strings.insert(strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<std::string> variables = environment;
    for (char** v = environ; *v != nullptr; ++v) variables.emplace_back(*v);
    std::vector<char*> envp;
    for (std::string& v : variables) envp.push_back(v.data());
    envp.push_back(nullptr);
    const std::string out = io_.Join("stdout");
    const std::string err = io_.Join("stderr");

    const pid_t pid = ::fork();
    if (pid == 0) {
      // Only async-signal-safe calls until exec.
      ::dup2(stdout_fd >= 0 ? stdout_fd : ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644),
             STDOUT_FILENO);
      ::dup2(::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
      if (file_size_limit != RLIM_INFINITY) {
        struct rlimit limit;
        ::getrlimit(RLIMIT_FSIZE, &limit);
        limit.rlim_cur = file_size_limit;
        ::setrlimit(RLIMIT_FSIZE, &limit);
      }
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    return pid;
  }

  // Waits up to "limit" for "pid"; its wait status, or -1 after killing it
  // (SIGKILL) when it had not ended: a hang fails the test instead of holding it.
  static int WaitAtMost(pid_t pid, std::chrono::milliseconds limit) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < give_up) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    Wait(pid);
    return -1;
  }

  // Waits up to 10 s for "fd" (the read end of a pipe or FIFO) to hold
  // "bytes" unread bytes: the writer has written and now waits for room.
  static bool WaitForUnreadBytes(int fd, int bytes) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int unread = 0;
    while (std::chrono::steady_clock::now() < give_up) {
      if (::ioctl(fd, FIONREAD, &unread) == 0 && unread >= bytes) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // Waits for "pid" and returns its wait status.
  static int Wait(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  // Runs dvexport to the end and returns its exit code (-1 if killed).
  int Run(const std::vector<std::string>& args, rlim_t file_size_limit = RLIM_INFINITY) {
    const int status = Wait(Start(args, file_size_limit));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string Stdout() const { return ReadFile(io_.Join("stdout")); }
  std::string Stderr() const { return ReadFile(io_.Join("stderr")); }

  std::string target() const { return dir_.Join("out.json"); }

  client::testutil::TemporaryDirectory dir_;
  client::testutil::TemporaryDirectory io_;
  client::testutil::ScriptedExportServer server_;
};

TEST_F(CliTest, WritesTheFileAndPrintsTheSummary) {
  const std::string file = MakeFileContent(300'000);
  server_.SetScript(GoodScript(file, 4321, 65536));

  const int exit_code =
      Run({"export", "--server", server_.address(), "--period", "202401,202402", "--period",
           "202403", "--org-unit", "ImspTQPwCqd", "--children", "-o", target()});

  EXPECT_EQ(exit_code, 0) << Stderr();
  EXPECT_TRUE(ReadFile(target()) == file) << "the file differs from the bytes sent";
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
  const std::string summary = Stderr();
  EXPECT_THAT(summary,
              StartsWith("dvexport: wrote 4321 values, 300000 bytes to " + target() + " in "));
  EXPECT_TRUE(absl::EndsWith(summary, " s\n")) << summary;
  EXPECT_EQ(summary.find('\n'), summary.size() - 1) << "more than one line: " << summary;
  EXPECT_EQ(summary.find('\r'), std::string::npos) << "a progress line on a non-terminal";
  EXPECT_EQ(Stdout(), "");

  ASSERT_EQ(server_.requests().size(), 1u);
  const dvexport::v1::ExportFileRequest request = server_.requests()[0];
  EXPECT_THAT(request.query().period(), ElementsAre("202401", "202402", "202403"));
  EXPECT_THAT(request.query().org_unit(), ElementsAre("ImspTQPwCqd"));
  EXPECT_TRUE(request.query().children());
  EXPECT_EQ(request.format(), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(request.compression(), dvexport::v1::COMPRESSION_NONE);
}

TEST_F(CliTest, WritesToStandardOutput) {
  const std::string file = "orgunit,period\nImspTQPwCqd,202401\n";
  server_.SetScript(GoodScript(file, 1, 8));

  const int exit_code =
      Run({"export", "--server", server_.address(), "--format", "csv", "-o", "-"});

  EXPECT_EQ(exit_code, 0) << Stderr();
  EXPECT_EQ(Stdout(), file);
  EXPECT_THAT(Stderr(), StartsWith("dvexport: wrote 1 values, 34 bytes to stdout in "));
  ASSERT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(server_.requests()[0].format(), dvexport::v1::FORMAT_CSV);
}

TEST_F(CliTest, ExitsWithOneAndLeavesNoFileWhenTheStreamIsCorrupt) {
  ExportScript script = GoodScript(MakeFileContent(50'000), 10, 4096);
  script.messages.back().mutable_trailer()->set_file_crc32(12345);
  server_.SetScript(script);

  const int exit_code = Run({"export", "--server", server_.address(), "-o", target()});

  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(Stderr(), StartsWith("dvexport: error: DATA_LOSS: the CRC-32 of the bytes"));
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(CliTest, ReportsTheServersCodeAndMessage) {
  ExportScript script;
  script.status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                               "E2001: At least one data set must be specified");
  server_.SetScript(script);

  const int exit_code = Run({"export", "--server", server_.address(), "-o", target()});

  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(Stderr(),
            "dvexport: error: INVALID_ARGUMENT: E2001: At least one data set must be specified\n");
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(CliTest, ExitsWithOneAtTheTimeout) {
  ExportScript script;
  script.messages.push_back(DataChunk("{\"dataValues\":[", 0));
  script.wait_for_cancel = true;
  server_.SetScript(script);

  const int exit_code =
      Run({"export", "--server", server_.address(), "--timeout", "0.3", "-o", target()});

  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(Stderr(), StartsWith("dvexport: error: DEADLINE_EXCEEDED: "));
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(CliTest, ExitsWithTwoOnAUsageError) {
  const int exit_code =
      Run({"export", "--server", server_.address(), "--bogus", "1", "-o", target()});

  EXPECT_EQ(exit_code, 2);
  EXPECT_THAT(Stderr(), StartsWith("dvexport: unknown flag --bogus\n"));
  EXPECT_THAT(server_.requests(), IsEmpty());
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(CliTest, RefusesAWriteBackRangeOutOfRangeNamingTheFlag) {
  const int exit_code =
      Run({"export", "--server", server_.address(), "--writeback-mib", "2048", "-o", target()});

  EXPECT_EQ(exit_code, 2);
  EXPECT_THAT(Stderr(),
              StartsWith("dvexport: --writeback-mib: '2048' is not a whole number of MiB from 0 "
                         "(off) to 1024\n"));
  EXPECT_THAT(server_.requests(), IsEmpty());
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(CliTest, PrintsHelp) {
  EXPECT_EQ(Run({"export", "--help"}), 0);
  EXPECT_THAT(Stdout(), StartsWith("Usage: dvexport export --server HOST:PORT"));
  EXPECT_THAT(Stdout(), HasSubstr("--include-deleted"));

  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_THAT(Stdout(), StartsWith("Usage: dvexport COMMAND"));
}

TEST_F(CliTest, FailsCleanlyAtTheFileSizeLimit) {
  server_.SetScript(GoodScript(MakeFileContent(4 << 20), 1000, 256 << 10));

  const int exit_code = Run({"export", "--server", server_.address(), "-o", target()}, 1 << 20);

  EXPECT_EQ(exit_code, 1) << Stderr();
  EXPECT_THAT(Stderr(), StartsWith("dvexport: error: OUT_OF_RANGE: writing " + target() +
                                   ": File too large"));
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(CliTest, DiesOfSigintLeavingTheFileAsItWas) {
  client::testutil::WriteFile(target(), "the earlier export");
  ExportScript script;
  script.messages.push_back(DataChunk(MakeFileContent(100'000), 100));
  script.wait_for_cancel = true;
  server_.SetScript(script);

  const pid_t pid = Start({"export", "--server", server_.address(), "-o", target()});
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_.requests().empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGINT);
  const int status = Wait(pid);

  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "wait status " << status;
  EXPECT_THAT(Stderr(), HasSubstr("interrupted by SIGINT"));
  EXPECT_EQ(ReadFile(target()), "the earlier export");
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
}

// A device in /dev that dvexport must write, never replace. If a regression
// replaced it (as root), puts the device back, so that the machine is left
// as it was, and fails.
void ExpectStillTheCharacterDevice(const char* path, unsigned minor) {
  struct stat st;
  ASSERT_EQ(::lstat(path, &st), 0) << path;
  if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, minor)) return;
  ADD_FAILURE() << path << " is no longer the character device 1," << minor;
  ::unlink(path);
  ::mknod(path, S_IFCHR | 0666, makedev(1, minor));
  ::chmod(path, 0666);
}

TEST_F(CliTest, WritesDevNullInPlace) {
  server_.SetScript(GoodScript(MakeFileContent(300'000), 50, 65536));

  const int exit_code =
      Run({"export", "--server", server_.address(), "--format", "json", "-o", "/dev/null"});

  EXPECT_EQ(exit_code, 0) << Stderr();
  ExpectStillTheCharacterDevice("/dev/null", 3);
  EXPECT_THAT(Stderr(), StartsWith("dvexport: wrote 50 values, 300000 bytes to /dev/null in "));
  EXPECT_THAT(Stderr(), HasSubstr("dvexport: /dev/null is not a regular file: it was written in "
                                  "place, without a temporary file; the bytes matched the "
                                  "server's trailer"));
}

// The write-back range (--writeback-mib) on and off: a file of several ranges
// comes out intact, and a device is written without any.
TEST_F(CliTest, WritesTheFileWithAndWithoutWriteBack) {
  const std::string file = MakeFileContent((5 << 20) + 333);
  for (const char* mib : {"0", "1", "3"}) {
    SCOPED_TRACE(mib);
    server_.SetScript(GoodScript(file, 77, 65536 + 13));

    const int exit_code = Run({"export", "--server", server_.address(), "--format", "json",
                               "--writeback-mib", mib, "-o", target()});

    EXPECT_EQ(exit_code, 0) << Stderr();
    EXPECT_TRUE(ReadFile(target()) == file) << "the file differs from the bytes sent";
    EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
  }

  server_.SetScript(GoodScript(file, 77, 65536 + 13));
  const int exit_code = Run({"export", "--server", server_.address(), "--format", "json",
                             "--writeback-mib=1", "-o", "/dev/null"});
  EXPECT_EQ(exit_code, 0) << Stderr();
  ExpectStillTheCharacterDevice("/dev/null", 3);
}

TEST_F(CliTest, ReportsAFullDeviceAndLeavesIt) {
  server_.SetScript(GoodScript(MakeFileContent(3'000'000), 50, 65536));

  const int exit_code =
      Run({"export", "--server", server_.address(), "--format", "json", "-o", "/dev/full"});

  EXPECT_EQ(exit_code, 1) << Stderr();
  ExpectStillTheCharacterDevice("/dev/full", 7);
  EXPECT_THAT(Stderr(), StartsWith("dvexport: error: RESOURCE_EXHAUSTED: writing /dev/full: No "
                                   "space left on device"));
  EXPECT_EQ(server_.requests().size(), 1u) << "bytes written in place were exported again";
}

TEST_F(CliTest, WritesAFifoInPlaceForItsReader) {
  const std::string fifo = dir_.Join("values");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string file = MakeFileContent(2'000'000);
  server_.SetScript(GoodScript(file, 1000, 65536));
  std::string read;
  std::thread reader([&] { read = ReadFile(fifo); });

  const int exit_code =
      Run({"export", "--server", server_.address(), "--format", "json", "-o", fifo});
  reader.join();

  EXPECT_EQ(exit_code, 0) << Stderr();
  EXPECT_TRUE(read == file) << "the reader got " << read.size() << " bytes";
  EXPECT_THAT(Stderr(), HasSubstr(fifo + " is not a regular file: it was written in place"));
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(dir_.List(), ElementsAre("values"));
}

TEST_F(CliTest, StreamWritesAFifoInPlaceForItsReader) {
  const std::string fifo = dir_.Join("values");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  client::testutil::StreamScript script;
  script.batches = {client::testutil::ValueBatch(3, 0, false),
                    client::testutil::ValueBatch(2, 3, true)};
  server_.SetStreamScript(script);
  std::string read;
  std::thread reader([&] { read = ReadFile(fifo); });

  const int exit_code = Run({"stream", "--server", server_.address(), "-o", fifo});
  reader.join();

  EXPECT_EQ(exit_code, 0) << Stderr();
  EXPECT_EQ(std::count(read.begin(), read.end(), '\n'), 5) << read;
  EXPECT_THAT(Stderr(), StartsWith("dvexport: streamed 5 values, "));
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(dir_.List(), ElementsAre("values"));
}

TEST_F(CliTest, GivesUpOnAFifoWithoutAReaderAtTheTimeout) {
  const std::string fifo = dir_.Join("values");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  server_.SetScript(GoodScript(MakeFileContent(1000), 1, 500));

  const int exit_code = Run({"export", "--server", server_.address(), "--format", "json",
                             "--timeout", "0.5", "-o", fifo});

  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(Stderr(), "dvexport: error: DEADLINE_EXCEEDED: no process opened the FIFO " + fifo +
                          " for reading\n");
  EXPECT_THAT(server_.requests(), IsEmpty());
  EXPECT_THAT(dir_.List(), ElementsAre("values"));
}

TEST_F(CliTest, WritesATargetWithAMaximalName) {
  for (size_t length : {255u, 250u}) {
    const std::string name = std::string(length - 5, 'v') + ".json";
    const std::string file = MakeFileContent(100'000);
    server_.SetScript(GoodScript(file, 10, 30'000));

    const int exit_code = Run({"export", "--server", server_.address(), "-o", dir_.Join(name)});

    EXPECT_EQ(exit_code, 0) << length << ": " << Stderr();
    EXPECT_TRUE(ReadFile(dir_.Join(name)) == file) << length;
    EXPECT_THAT(dir_.List(), ElementsAre(name));
    ::unlink(dir_.Join(name).c_str());
  }
}

TEST_F(CliTest, StartsAFailedExportAgainAndSaysSo) {
  const std::string file = MakeFileContent(100'000);
  ExportScript broken = GoodScript(MakeFileContent(200'000), 10, 30'000);
  broken.messages.resize(2);
  broken.status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "database connection lost");
  server_.SetScripts({broken, GoodScript(file, 10, 30'000)});

  const int exit_code = Run({"export", "--server", server_.address(), "-o", target()});

  EXPECT_EQ(exit_code, 0) << Stderr();
  EXPECT_TRUE(ReadFile(target()) == file);
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
  EXPECT_THAT(Stderr(), StartsWith("dvexport: UNAVAILABLE: database connection lost; starting the "
                                   "export again in "));
  EXPECT_THAT(Stderr(), HasSubstr(" s (attempt 2 of 4)\ndvexport: wrote 10 values, 100000 bytes"));
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_F(CliTest, NoRetryMakesOneAttempt) {
  ExportScript busy;
  busy.status = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "too many exports running");
  server_.SetScripts({busy, GoodScript(MakeFileContent(1000), 1, 500)});

  const int exit_code =
      Run({"export", "--server", server_.address(), "--no-retry", "-o", target()});

  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(Stderr(), "dvexport: error: RESOURCE_EXHAUSTED: too many exports running\n");
  EXPECT_EQ(server_.requests().size(), 1u);

  // gRPC's own retry: the same refusal, then the export.
  server_.SetScripts({busy, GoodScript(MakeFileContent(1000), 1, 500)});
  EXPECT_EQ(Run({"export", "--server", server_.address(), "--attempts", "2", "-o", target()}), 0)
      << Stderr();
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_F(CliTest, NamesATlsCaFileThatIsNotPem) {
  const std::string garbage = io_.Join("garbage-ca.pem");
  client::testutil::WriteFile(garbage, "not a certificate\n");

  const int exit_code = Run({"health", "--server", server_.address(), "--tls-ca", garbage});

  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(Stderr(), "dvexport: error: INVALID_ARGUMENT: the TLS CA file " + garbage +
                          ": not PEM (no \"-----BEGIN ...-----\" line)\n");
}

// sync --state F -o F once wrote the export and then replaced it with the token, reporting
// success; every spelling of the same file is now refused before anything is read, written
// or called.
TEST_F(CliTest, SyncRefusesAStateFileThatIsAlsoItsOutput) {
  const std::string state = dir_.Join("state");
  const std::string token = "the token of the last sync\n";
  client::testutil::WriteFile(state, token);
  ASSERT_EQ(::link(state.c_str(), dir_.Join("hard").c_str()), 0);
  ASSERT_EQ(::symlink(state.c_str(), dir_.Join("soft").c_str()), 0);
  ASSERT_EQ(::symlink(dir_.path().c_str(), io_.Join("dirlink").c_str()), 0);
  ASSERT_EQ(::symlink(dir_.Join("new").c_str(), dir_.Join("dangling").c_str()), 0);
  server_.SetScript(GoodScript(MakeFileContent(1000), 1, 500));
  char cwd[PATH_MAX];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(dir_.path().c_str()), 0);
  struct Case {
    std::string state;
    std::string output;
  };
  const Case cases[] = {
      {state, state},                             // the same path
      {"./state", "state"},                       // two spellings
      {state, dir_.Join("hard")},                 // a hard link
      {dir_.Join("soft"), state},                 // a symbolic link
      {dir_.Join("new"), dir_.Join("new")},       // neither exists yet
      {dir_.Join("new"), dir_.Join("dangling")},  // a link to a file not created yet
      {io_.Join("dirlink/state"), state},         // through a linked directory
      {io_.Join("dirlink/new"), dir_.Join("new")},
  };
  for (const Case& c : cases) {
    const int exit_code = Run({"sync", "--server", server_.address(), "--format", "json", "--state",
                               c.state, "-o", c.output});

    EXPECT_EQ(exit_code, 2) << c.state << " " << c.output << ": " << Stderr();
    EXPECT_EQ(Stderr(), "dvexport: -o " + c.output + " and --state " + c.state +
                            " name the same file: the output would replace the change token (and "
                            "the token the output); give each a file of its own\n");
    EXPECT_EQ(ReadFile(state), token);
    EXPECT_FALSE(client::testutil::FileExists(dir_.Join("new")));
  }
  EXPECT_EQ(::chdir(cwd), 0);
  EXPECT_THAT(server_.requests(), IsEmpty());
  EXPECT_THAT(dir_.List(), ElementsAre("dangling", "hard", "soft", "state"));
}

TEST_F(CliTest, RefusesAnOutputThatIsOneOfItsTlsFiles) {
  const std::string ca = dir_.Join("ca.json");
  client::testutil::WriteFile(ca, "not really a CA");

  EXPECT_EQ(Run({"export", "--server", server_.address(), "--tls-ca", ca, "-o", ca}), 2);
  EXPECT_EQ(Stderr(), "dvexport: -o " + ca + " and --tls-ca " + ca +
                          " name the same file: writing -o would replace --tls-ca; give each a "
                          "file of its own\n");
  EXPECT_EQ(ReadFile(ca), "not really a CA");
  EXPECT_THAT(server_.requests(), IsEmpty());
}

// A FIFO whose reader opened it and never reads: the CLI's writes once blocked past
// --timeout and signals, until the reader left.
class CliStalledReaderTest : public CliTest {
 protected:
  // Makes a FIFO and opens it for reading, never to read.
  void SetUp() override {
    CliTest::SetUp();
    fifo_ = dir_.Join("values");
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);
    reader_ = ::open(fifo_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(reader_, 0);
    // More than the FIFO holds and the CLI's buffer.
    server_.SetScript(GoodScript(MakeFileContent(4 << 20), 1000, 65536));
  }
  void TearDown() override { ::close(reader_); }

  std::string fifo_;
  int reader_ = -1;
};

TEST_F(CliStalledReaderTest, ExportToAFifoEndsAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = Start(
      {"export", "--server", server_.address(), "--format", "json", "--timeout", "2", "-o", fifo_});
  const int status = WaitAtMost(pid, std::chrono::seconds(10));
  const auto took = std::chrono::steady_clock::now() - start;

  ASSERT_NE(status, -1) << "still writing 10 s after a --timeout of 2 s";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_LT(took, std::chrono::milliseconds(3500));
  EXPECT_THAT(Stderr(), StartsWith("dvexport: error: DEADLINE_EXCEEDED: "));
  EXPECT_THAT(Stderr(), HasSubstr(fifo_ + " is not a regular file and was written in place: "));
  EXPECT_THAT(dir_.List(), ElementsAre("values"));
}

class CliStalledReaderSignalTest : public CliStalledReaderTest,
                                   public ::testing::WithParamInterface<int> {};

TEST_P(CliStalledReaderSignalTest, ExportToAFifoEndsOnTheSignal) {
  const pid_t pid =
      Start({"export", "--server", server_.address(), "--format", "json", "-o", fifo_});
  ASSERT_TRUE(WaitForUnreadBytes(reader_, 4096)) << Stderr();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto signalled = std::chrono::steady_clock::now();
  ::kill(pid, GetParam());
  const int status = WaitAtMost(pid, std::chrono::seconds(10));
  const auto took = std::chrono::steady_clock::now() - signalled;

  ASSERT_NE(status, -1) << "still writing 10 s after the signal";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == GetParam()) << status;
  EXPECT_LT(took, std::chrono::seconds(1));
  EXPECT_THAT(Stderr(), StartsWith(absl::StrCat("dvexport: interrupted by SIG",
                                                sigabbrev_np(GetParam()), "; writing ", fifo_)));
  EXPECT_THAT(Stderr(), HasSubstr(" bytes received reached it and cannot be taken back"));
  EXPECT_THAT(dir_.List(), ElementsAre("values"));
}

INSTANTIATE_TEST_SUITE_P(Signals, CliStalledReaderSignalTest, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(sigabbrev_np(info.param));
                         });

// -o - into a pipe that nobody reads; the same for stream.
TEST_F(CliTest, StandardOutputIntoAStalledPipeEndsAtTheTimeoutOrOnSigint) {
  server_.SetScript(GoodScript(MakeFileContent(4 << 20), 1000, 65536));
  client::testutil::StreamScript stream;
  for (int i = 0; i < 40; ++i)
    stream.batches.push_back(client::testutil::ValueBatch(500, i * 500, i == 39));
  server_.SetStreamScript(stream);
  for (const std::string command : {"export", "stream"}) {
    for (const bool interrupt : {false, true}) {
      int pipe_fds[2];
      ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
      std::vector<std::string> args = {command, "--server", server_.address(), "-o", "-"};
      if (command == "export") args.insert(args.end(), {"--format", "json"});
      if (!interrupt) args.insert(args.end(), {"--timeout", "2"});
      const auto start = std::chrono::steady_clock::now();
      const pid_t pid = Start(args, RLIM_INFINITY, pipe_fds[1]);
      ::close(pipe_fds[1]);
      if (interrupt) {
        ASSERT_TRUE(WaitForUnreadBytes(pipe_fds[0], 4096)) << Stderr();
        ::kill(pid, SIGINT);
      }
      const int status = WaitAtMost(pid, std::chrono::seconds(10));
      const auto took = std::chrono::steady_clock::now() - start;
      ::close(pipe_fds[0]);

      ASSERT_NE(status, -1) << command << ": still writing after 10 s";
      if (interrupt) {
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << command << " " << status;
        EXPECT_EQ(Stderr(), "dvexport: interrupted by SIGINT; the output is incomplete\n");
      } else {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << command << " " << status;
        EXPECT_LT(took, std::chrono::milliseconds(3500)) << command;
        EXPECT_THAT(Stderr(), StartsWith("dvexport: error: DEADLINE_EXCEEDED: ")) << command;
      }
    }
  }
}

// Speaking TLS to a plaintext server made gRPC print its own "E1201 ... Handshake failed"
// line before the CLI's message; it is dropped, or with GRPC_VERBOSITY set printed as the
// CLI's own "dvexport: grpc: " line.
TEST_F(CliTest, StderrHoldsOnlyTheClisOwnLines) {
  const std::string ca = io_.Join("ca.pem");
  ASSERT_EQ(std::system(("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                         "-nodes -keyout " +
                         io_.Join("ca.key") + " -subj /CN=ca -days 2 -out " + ca + " 2>/dev/null")
                            .c_str()),
            0);
  const std::vector<std::string> args = {"health",    "--server", server_.address(), "--tls-ca", ca,
                                         "--timeout", "5"};

  EXPECT_EQ(Run(args), 1);
  const std::string plain = Stderr();
  EXPECT_THAT(plain, StartsWith("dvexport: error: UNAVAILABLE: "));
  EXPECT_EQ(std::count(plain.begin(), plain.end(), '\n'), 1) << plain;

  EXPECT_EQ(Wait(Start(args, RLIM_INFINITY, -1, {"GRPC_VERBOSITY=ERROR"})) >> 8, 1);
  const std::string verbose = Stderr();
  for (absl::string_view line : absl::StrSplit(verbose, '\n', absl::SkipEmpty())) {
    EXPECT_THAT(std::string(line), StartsWith("dvexport: ")) << verbose;
  }
  EXPECT_THAT(verbose, HasSubstr("dvexport: grpc: error: Handshake failed"));
}

}  // namespace
}  // namespace dvexport::cli
