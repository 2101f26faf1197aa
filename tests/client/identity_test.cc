// The CLI's DHIS2 identity: its flags, the refused secret flags, where the
// secret comes from (ResolveIdentity) and the password prompt on a
// pseudo-terminal.

#include "client/cli/identity.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/password_prompt.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/test_files.h"

namespace dvexport::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb";

CommandLine ParseOk(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> command = ParseCommandLine(args);
  EXPECT_TRUE(command.ok()) << command.status();
  return command.ok() ? *command : CommandLine{};
}

std::string UsageError(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> command = ParseCommandLine(args);
  EXPECT_EQ(command.status().code(), absl::StatusCode::kInvalidArgument) << command.status();
  return std::string(command.status().message());
}

TEST(IdentityFlagsTest, EveryDataCommandTakesTokenFileOrUser) {
  EXPECT_EQ(ParseOk({"export", "--server", "s:1", "-o", "x.json", "--token-file", "/t"}).token_file,
            "/t");
  EXPECT_EQ(
      ParseOk({"sync", "--server", "s:1", "-o", "x.json", "--state", "s", "--user=alice"}).user,
      "alice");
  EXPECT_EQ(ParseOk({"stream", "--server", "s:1", "--user", "bob"}).user, "bob");
  EXPECT_EQ(ParseOk({"count", "--server", "s:1", "--token-file", "/t"}).token_file, "/t");
  // Health needs no identity.
  EXPECT_THAT(UsageError({"health", "--server", "s:1", "--token-file", "/t"}),
              HasSubstr("unknown flag --token-file"));
}

TEST(IdentityFlagsTest, TokenFileAndUserExcludeEachOther) {
  EXPECT_THAT(UsageError({"count", "--server", "s:1", "--token-file", "/t", "--user", "a"}),
              HasSubstr("exclude each other"));
}

TEST(IdentityFlagsTest, RefusesSecretsOnTheCommandLineWithoutRepeatingThem) {
  for (const char* command : {"export", "sync", "stream", "count", "health"}) {
    for (const char* flag : {"--token", "--api-token"}) {
      for (const std::vector<std::string>& args :
           {std::vector<std::string>{command, "--server", "s:1", flag, kToken},
            std::vector<std::string>{command, "--server", "s:1",
                                     absl::StrCat(flag, "=", kToken)}}) {
        const std::string message = UsageError(args);
        EXPECT_THAT(message, HasSubstr("never given on the command line")) << command << flag;
        EXPECT_THAT(message, HasSubstr("--token-file FILE or DVEXPORT_TOKEN"));
        EXPECT_THAT(message, Not(HasSubstr("EMi4vUP6")));
      }
    }
    for (const char* flag : {"--password", "--pass"}) {
      const std::string message =
          UsageError({command, "--server", "s:1", absl::StrCat(flag, "=hunter2")});
      EXPECT_THAT(message, HasSubstr("DVEXPORT_PASSWORD")) << command << flag;
      EXPECT_THAT(message, Not(HasSubstr("hunter2")));
    }
  }
}

TEST(IdentityFlagsTest, HelpDocumentsTheIdentityAndItsExitCodes) {
  for (const char* command : {"export", "sync", "stream", "count"}) {
    const std::string help = CommandUsage(command);
    EXPECT_THAT(help, HasSubstr("--token-file FILE")) << command;
    EXPECT_THAT(help, HasSubstr("--user NAME")) << command;
    EXPECT_THAT(help, HasSubstr("DVEXPORT_TOKEN")) << command;
    EXPECT_THAT(help, HasSubstr("Exit 3: the server did not accept the identity")) << command;
    EXPECT_THAT(help, HasSubstr("Exit 4: the user may not read")) << command;
  }
}

// ResolveIdentity with an environment of "variables" and a prompt that
// answers "typed" (nullopt: fails as without a terminal), counting its calls.
struct FakeSources {
  std::map<std::string, std::string> variables;
  std::optional<std::string> typed;
  int prompts = 0;
  std::string last_prompt;

  IdentitySources sources() {
    IdentitySources sources;
    sources.getenv = [this](const char* name) -> std::optional<std::string> {
      auto it = variables.find(name);
      if (it == variables.end()) return std::nullopt;
      return it->second;
    };
    sources.prompt = [this](const std::string& prompt) -> absl::StatusOr<std::string> {
      ++prompts;
      last_prompt = prompt;
      if (!typed.has_value()) {
        return absl::FailedPreconditionError("there is no terminal to ask on");
      }
      return *typed;
    };
    return sources;
  }
};

class ResolveIdentityTest : public ::testing::Test {
 protected:
  std::string TokenFile(const std::string& token) {
    const std::string path = dir_.Join("token");
    client::testutil::WriteFile(path, token + "\n");
    ::chmod(path.c_str(), 0600);
    return path;
  }

  absl::StatusOr<client::CallCredentialsSpec> Resolve(const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"count", "--server", "s:1"};
    args.insert(args.end(), flags.begin(), flags.end());
    return ResolveIdentity(ParseOk(args), fake_.sources());
  }

  client::testutil::TemporaryDirectory dir_;
  FakeSources fake_;
};

TEST_F(ResolveIdentityTest, TokenFileComesFirstThenUserThenTheVariable) {
  fake_.variables = {{"DVEXPORT_TOKEN", "d2p_from_the_environment"},
                     {"DVEXPORT_PASSWORD", "district"}};
  absl::StatusOr<client::CallCredentialsSpec> spec = Resolve({"--token-file", TokenFile(kToken)});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->token, kToken);
  EXPECT_TRUE(spec->username.empty());

  spec = Resolve({"--user", "alice"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->token.empty());
  EXPECT_EQ(spec->username, "alice");
  EXPECT_EQ(spec->password, "district");

  spec = Resolve({});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->token, "d2p_from_the_environment");
  EXPECT_EQ(fake_.prompts, 0);

  fake_.variables.clear();
  spec = Resolve({});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->empty());
}

TEST_F(ResolveIdentityTest, PromptsOnlyWithoutThePasswordVariable) {
  fake_.typed = "typed at the terminal";
  absl::StatusOr<client::CallCredentialsSpec> spec = Resolve({"--user", "alice"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->password, "typed at the terminal");
  EXPECT_EQ(fake_.prompts, 1);
  EXPECT_EQ(fake_.last_prompt, "DHIS2 password for alice: ");
}

TEST_F(ResolveIdentityTest, WithoutTerminalOrVariableSaysWhatToSet) {
  absl::StatusOr<client::CallCredentialsSpec> spec = Resolve({"--user", "alice"});
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(spec.status().message(), HasSubstr("DVEXPORT_PASSWORD is not set"));
  EXPECT_THAT(spec.status().message(), HasSubstr("no terminal"));
}

TEST_F(ResolveIdentityTest, RefusesEmptySecrets) {
  fake_.variables = {{"DVEXPORT_PASSWORD", ""}};
  EXPECT_THAT(Resolve({"--user", "alice"}).status().message(), HasSubstr("set but empty"));
  fake_.variables.clear();
  fake_.typed = "";
  EXPECT_THAT(Resolve({"--user", "alice"}).status().message(), HasSubstr("no password was typed"));
  fake_.variables = {{"DVEXPORT_TOKEN", "  "}};
  EXPECT_THAT(Resolve({}).status().message(), HasSubstr("DVEXPORT_TOKEN"));
}

TEST_F(ResolveIdentityTest, AGroupReadableTokenFileIsRefused) {
  const std::string path = TokenFile(kToken);
  ::chmod(path.c_str(), 0640);
  absl::StatusOr<client::CallCredentialsSpec> spec = Resolve({"--token-file", path});
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(spec.status().message(), Not(HasSubstr("EMi4vUP6")));
}

// A pseudo-terminal pair, closed on destruction.
class PromptTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::openpty(&master_, &slave_, nullptr, nullptr, nullptr), 0); }
  void TearDown() override {
    if (master_ >= 0) ::close(master_);
    if (slave_ >= 0) ::close(slave_);
  }

  // Everything the terminal showed so far (what the program wrote and what
  // the line discipline echoed), waiting up to "wait" for "until" to appear.
  std::string ReadScreen(const std::string& until, std::chrono::milliseconds wait) {
    const auto give_up = std::chrono::steady_clock::now() + wait;
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

  bool Echoing() {
    struct termios t;
    EXPECT_EQ(::tcgetattr(slave_, &t), 0);
    return (t.c_lflag & ECHO) != 0;
  }

  int master_ = -1;
  int slave_ = -1;
  std::string screen_;
};

TEST_F(PromptTest, ReadsALineWithoutEchoAndTurnsEchoBackOn) {
  ASSERT_TRUE(Echoing());
  absl::StatusOr<std::string> password;
  std::thread prompt([&] { password = ReadPasswordFromTerminal(slave_, "Password: "); });
  ReadScreen("Password: ", std::chrono::seconds(10));
  // Echo is off once the prompt is shown and waits.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Echoing() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(Echoing());
  ASSERT_EQ(::write(master_, "s3cret pass\n", 12), 12);
  prompt.join();
  ASSERT_TRUE(password.ok()) << password.status();
  EXPECT_EQ(*password, "s3cret pass");
  EXPECT_TRUE(Echoing());
  const std::string screen = ReadScreen("\n", std::chrono::seconds(2));
  EXPECT_THAT(screen, HasSubstr("Password: "));
  EXPECT_THAT(screen, Not(HasSubstr("s3cret")));
}

TEST_F(PromptTest, GivesUpAtItsTimeoutWithEchoBackOn) {
  absl::StatusOr<std::string> password =
      ReadPasswordFromTerminal(slave_, "Password: ", std::chrono::milliseconds(200));
  EXPECT_EQ(password.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(Echoing());
}

TEST_F(PromptTest, EndOfInputIsNoPassword) {
  absl::StatusOr<std::string> password;
  std::thread prompt([&] { password = ReadPasswordFromTerminal(slave_, "Password: "); });
  ReadScreen("Password: ", std::chrono::seconds(10));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Echoing() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const char eof = 4;  // ^D, VEOF in canonical mode
  ASSERT_EQ(::write(master_, &eof, 1), 1);
  prompt.join();
  EXPECT_EQ(password.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(Echoing());
}

TEST(PromptNoTerminalTest, RefusesWhatIsNoTerminal) {
  const int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  absl::StatusOr<std::string> password = ReadPasswordFromTerminal(fd, "Password: ");
  ::close(fd);
  EXPECT_EQ(password.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace dvexport::cli
