// The dvexport program's DHIS2 identity, end to end: the built program
// against the in-process server, which records the authorization each call
// carried. Children run in a session of their own, without a controlling
// terminal, unless a test gives them a pseudo-terminal.

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

using client::testutil::GoodScript;
using client::testutil::MakeFileContent;
using client::testutil::ReadFile;
using client::testutil::ReceivedAuthorization;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kToken[] = "d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb";
constexpr char kOtherToken[] = "d2pat_Y2WMOk9ymCrZCWrmHCrMA1G9XQ8qbNuD1498176081";

class IdentityCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(server_.address(), "127.0.0.1:0") << "the test server did not start";
    server_.SetScript(GoodScript(MakeFileContent(2000), 5, 500));
    server_.SetCountResult(7);
  }

  // Starts dvexport with "args" and "environment" (the test's own DVEXPORT_*
  // variables left out), stdout and stderr to files. With "terminal" >= 0
  // (a pty's slave), the child makes it its controlling terminal; otherwise it
  // has none.
  pid_t Start(const std::vector<std::string>& args, const std::vector<std::string>& environment,
              int terminal = -1) {
    std::vector<std::string> strings = {DVEXPORT_CLI_PATH};
    strings.insert(strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::vector<std::string> variables = environment;
    for (char** v = environ; *v != nullptr; ++v) {
      if (!absl::StartsWith(*v, "DVEXPORT_")) variables.emplace_back(*v);
    }
    std::vector<char*> envp;
    for (std::string& v : variables) envp.push_back(v.data());
    envp.push_back(nullptr);
    const std::string out = io_.Join("stdout");
    const std::string err = io_.Join("stderr");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setsid();
      if (terminal >= 0) ::ioctl(terminal, TIOCSCTTY, 0);
      ::dup2(::open("/dev/null", O_RDONLY), STDIN_FILENO);
      ::dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDOUT_FILENO);
      ::dup2(::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    return pid;
  }

  // The wait status of "pid" once it ends, or -1 after killing it after 60 s.
  static int WaitAtMost(pid_t pid, std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < give_up) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }

  int Run(const std::vector<std::string>& args, const std::vector<std::string>& environment = {}) {
    const int status = WaitAtMost(Start(args, environment));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string TokenFile(const std::string& token, mode_t mode = 0600) {
    const std::string path = dir_.Join("token");
    ::unlink(path.c_str());
    client::testutil::WriteFile(path, token + "\n");
    ::chmod(path.c_str(), mode);
    return path;
  }

  std::vector<std::string> Export() {
    return {"export", "--server", server_.address(), "-o", dir_.Join("out.json")};
  }

  std::string Stderr() const { return ReadFile(io_.Join("stderr")); }
  std::string Stdout() const { return ReadFile(io_.Join("stdout")); }

  client::testutil::TemporaryDirectory dir_;
  client::testutil::TemporaryDirectory io_;
  client::testutil::ScriptedExportServer server_;
};

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_F(IdentityCliTest, EachCommandSendsTheTokenOfTheVariable) {
  const std::string variable = absl::StrCat("DVEXPORT_TOKEN=", kToken);
  EXPECT_EQ(Run(Export(), {variable}), 0) << Stderr();
  EXPECT_EQ(Run({"count", "--server", server_.address()}, {variable}), 0) << Stderr();
  EXPECT_EQ(Stdout(), "7\n");
  server_.SetStreamScript({{client::testutil::ValueBatch(2, 0, true)}, grpc::Status::OK});
  EXPECT_EQ(Run({"stream", "--server", server_.address(), "-o", dir_.Join("v.ndjson")}, {variable}),
            0)
      << Stderr();
  EXPECT_EQ(Run({"sync", "--server", server_.address(), "--state", dir_.Join("state"), "-o",
                 dir_.Join("sync.json")},
                {variable}),
            1)
      << "the scripted trailer has no change token";
  EXPECT_EQ(Run({"health", "--server", server_.address()}, {variable}), 0) << Stderr();
  const std::string sent = absl::StrCat("ApiToken ", kToken);
  EXPECT_THAT(server_.authorizations(), ElementsAre(ReceivedAuthorization{"ExportFile", sent},
                                                    ReceivedAuthorization{"CountDataValues", sent},
                                                    ReceivedAuthorization{"StreamDataValues", sent},
                                                    ReceivedAuthorization{"ExportFile", sent},
                                                    ReceivedAuthorization{"Check", std::nullopt}));
}

TEST_F(IdentityCliTest, TokenFileBeatsTheVariable) {
  EXPECT_EQ(Run(With(Export(), {"--token-file", TokenFile(kOtherToken)}),
                {absl::StrCat("DVEXPORT_TOKEN=", kToken)}),
            0)
      << Stderr();
  EXPECT_THAT(server_.authorizations(), ElementsAre(ReceivedAuthorization{
                                            "ExportFile", absl::StrCat("ApiToken ", kOtherToken)}));
}

TEST_F(IdentityCliTest, UserWithThePasswordVariableSendsBasicAndBeatsTheTokenVariable) {
  EXPECT_EQ(Run(With(Export(), {"--user", "alice"}),
                {absl::StrCat("DVEXPORT_TOKEN=", kToken), "DVEXPORT_PASSWORD=dist:rict"}),
            0)
      << Stderr();
  EXPECT_THAT(server_.authorizations(),
              ElementsAre(ReceivedAuthorization{
                  "ExportFile", absl::StrCat("Basic ", absl::Base64Escape("alice:dist:rict"))}));
}

TEST_F(IdentityCliTest, NoIdentityAtAllSendsNone) {
  EXPECT_EQ(Run(Export()), 0) << Stderr();
  EXPECT_THAT(server_.authorizations(),
              ElementsAre(ReceivedAuthorization{"ExportFile", std::nullopt}));
}

TEST_F(IdentityCliTest, UserWithoutTerminalOrVariableIsAUsageError) {
  EXPECT_EQ(Run(With(Export(), {"--user", "alice"})), 2);
  EXPECT_THAT(Stderr(), HasSubstr("DVEXPORT_PASSWORD is not set"));
  EXPECT_THAT(Stderr(), HasSubstr("no terminal"));
  EXPECT_THAT(server_.authorizations(), IsEmpty());
}

TEST_F(IdentityCliTest, SecretFlagsAreRefusedWithoutEchoingTheSecret) {
  EXPECT_EQ(Run(With(Export(), {"--token", kToken})), 2);
  EXPECT_THAT(Stderr(), HasSubstr("--token-file FILE or DVEXPORT_TOKEN"));
  EXPECT_THAT(Stderr(), Not(HasSubstr("EMi4vUP6")));
  EXPECT_EQ(Run(With(Export(), {"--password=hunter2"})), 2);
  EXPECT_THAT(Stderr(), Not(HasSubstr("hunter2")));
  EXPECT_THAT(server_.authorizations(), IsEmpty());
}

TEST_F(IdentityCliTest, AWorldReadableTokenFileIsAUsageError) {
  EXPECT_EQ(Run(With(Export(), {"--token-file", TokenFile(kToken, 0644)})), 2);
  EXPECT_THAT(Stderr(), HasSubstr("chmod 600"));
  EXPECT_THAT(Stderr(), Not(HasSubstr("EMi4vUP6")));
  EXPECT_THAT(server_.authorizations(), IsEmpty());
}

TEST_F(IdentityCliTest, UnauthenticatedExitsWithThreeAndSaysWhatToGive) {
  client::testutil::ExportScript refused;
  refused.status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "The API token does not exists");
  server_.SetScript(refused);
  server_.SetCountResult(0, refused.status);
  const std::string variable = absl::StrCat("DVEXPORT_TOKEN=", kToken);
  for (const std::vector<std::string>& args :
       {Export(), std::vector<std::string>{"count", "--server", server_.address()}}) {
    EXPECT_EQ(Run(args, {variable}), 3) << args[0];
    EXPECT_THAT(Stderr(), HasSubstr("dvexport: error: UNAUTHENTICATED: The API token does not "
                                    "exists\n"));
    EXPECT_THAT(Stderr(), HasSubstr("--token-file FILE or DVEXPORT_TOKEN"));
    EXPECT_THAT(Stderr(), Not(HasSubstr("EMi4vUP6")));
  }
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(IdentityCliTest, PermissionDeniedExitsWithFour) {
  client::testutil::ExportScript refused;
  refused.status = grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                                "E2010: User is not allowed to read data for data set: "
                                "`pBOMPrpg1QX`");
  server_.SetScript(refused);
  EXPECT_EQ(Run(Export(), {absl::StrCat("DVEXPORT_TOKEN=", kToken)}), 4);
  EXPECT_THAT(Stderr(), HasSubstr("PERMISSION_DENIED: E2010: User is not allowed"));
  EXPECT_THAT(dir_.List(), IsEmpty());
}

// The password prompt on a pseudo-terminal as the child's controlling terminal.
class PromptCliTest : public IdentityCliTest {
 protected:
  void SetUp() override {
    IdentityCliTest::SetUp();
    ASSERT_EQ(::openpty(&master_, &slave_, nullptr, nullptr, nullptr), 0);
  }
  void TearDown() override {
    ::close(master_);
    ::close(slave_);
  }

  // What the terminal showed, waiting up to 20 s for "until".
  std::string Screen(const std::string& until) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (screen_.find(until) == std::string::npos && std::chrono::steady_clock::now() < give_up) {
      struct pollfd p = {master_, POLLIN, 0};
      if (::poll(&p, 1, 20) == 1) {
        char buffer[256];
        const ssize_t got = ::read(master_, buffer, sizeof buffer);
        if (got > 0) screen_.append(buffer, static_cast<size_t>(got));
      }
    }
    return screen_;
  }

  // Waits up to 20 s for the terminal's echo to be "on".
  bool WaitForEcho(bool on) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < give_up) {
      struct termios t;
      if (::tcgetattr(slave_, &t) == 0 && ((t.c_lflag & ECHO) != 0) == on) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  int master_ = -1;
  int slave_ = -1;
  std::string screen_;
};

TEST_F(PromptCliTest, AsksOnTheTerminalWithoutEcho) {
  const pid_t pid = Start(With(Export(), {"--user", "alice"}), {}, slave_);
  EXPECT_THAT(Screen("DHIS2 password for alice: "), HasSubstr("DHIS2 password for alice: "));
  ASSERT_TRUE(WaitForEcho(false));
  ASSERT_EQ(::write(master_, "pass word\n", 10), 10);
  const int status = WaitAtMost(pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << Stderr();
  EXPECT_TRUE(WaitForEcho(true));
  EXPECT_THAT(Screen("\n"), Not(HasSubstr("pass word")));
  EXPECT_THAT(server_.authorizations(),
              ElementsAre(ReceivedAuthorization{
                  "ExportFile", absl::StrCat("Basic ", absl::Base64Escape("alice:pass word"))}));
}

TEST_F(PromptCliTest, SigintAtThePromptRestoresEchoAndKillsTheProgram) {
  const pid_t pid = Start(With(Export(), {"--user", "alice"}), {}, slave_);
  Screen("DHIS2 password for alice: ");
  ASSERT_TRUE(WaitForEcho(false));
  const char interrupt = 3;  // ^C: the terminal sends SIGINT to its foreground group
  ASSERT_EQ(::write(master_, &interrupt, 1), 1);
  const int status = WaitAtMost(pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_TRUE(WaitForEcho(true));
  EXPECT_THAT(server_.authorizations(), IsEmpty());
  EXPECT_THAT(dir_.List(), IsEmpty());
}

}  // namespace
}  // namespace dvexport::cli
