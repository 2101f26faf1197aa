// The command line of DHIS2 2.43's export parameters (--offset, --order, --order-by-period,
// --level, --category-option-combo, --input-use-code-fallback, --exclude-default-coc,
// --exclude-default-aoc) and --dhis2-version: their ExportRequest fields, their refusals, and
// that a command line without them leaves every one of those fields unset (a server answering
// as DHIS2 2.42 refuses any of them that is set).

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/export_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/scripted_export_server.h"
#include "tests/client/test_files.h"

#ifndef DVEXPORT_CLI_PATH
#error "DVEXPORT_CLI_PATH must name the dvexport program"
#endif

namespace dvexport::cli {
namespace {

using dvexport::v1::EXPORT_ORDER_AOC;
using dvexport::v1::EXPORT_ORDER_CREATED;
using dvexport::v1::EXPORT_ORDER_DE;
using dvexport::v1::EXPORT_ORDER_OU;
using dvexport::v1::EXPORT_ORDER_PE;
using dvexport::v1::ExportRequest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The ExportRequest fields of DHIS2 2.43's parameters and of the version pin.
constexpr int kDhis243Fields[] = {
    ExportRequest::kOffsetFieldNumber,
    ExportRequest::kOrderFieldNumber,
    ExportRequest::kOrderByPeriodFieldNumber,
    ExportRequest::kLevelFieldNumber,
    ExportRequest::kCategoryOptionComboFieldNumber,
    ExportRequest::kInputUseCodeFallbackFieldNumber,
    ExportRequest::kExcludeDefaultCocFieldNumber,
    ExportRequest::kExcludeDefaultAocFieldNumber,
    ExportRequest::kDhis2VersionFieldNumber,
};

// "command --server s:1" with what that command needs, followed by "extra".
std::vector<std::string> Command(const std::string& command, std::vector<std::string> extra) {
  std::vector<std::string> args = {command, "--server", "s:1"};
  if (command == "export") args.insert(args.end(), {"-o", "out.json"});
  if (command == "sync") args.insert(args.end(), {"--state", "s.token", "-o", "d.json"});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

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

// Every 2.43 flag with a distinct value.
std::vector<std::string> Every243Flag() {
  return {"--offset",
          "5",
          "--order",
          "OU,DE",
          "--order",
          "CREATED",
          "--order-by-period",
          "--level",
          "3",
          "--category-option-combo",
          "coc1,coc2",
          "--category-option-combo",
          "coc3",
          "--input-use-code-fallback",
          "false",
          "--exclude-default-coc",
          "--exclude-default-aoc",
          "--dhis2-version",
          "2.43"};
}

void ExpectEvery243Field(const ExportRequest& query) {
  ASSERT_TRUE(query.has_offset());
  EXPECT_EQ(query.offset(), 5);
  EXPECT_THAT(query.order(), ElementsAre(EXPORT_ORDER_OU, EXPORT_ORDER_DE, EXPORT_ORDER_CREATED));
  EXPECT_TRUE(query.order_by_period());
  ASSERT_TRUE(query.has_level());
  EXPECT_EQ(query.level(), 3);
  EXPECT_THAT(query.category_option_combo(), ElementsAre("coc1", "coc2", "coc3"));
  ASSERT_TRUE(query.has_input_use_code_fallback());
  EXPECT_FALSE(query.input_use_code_fallback());
  EXPECT_TRUE(query.exclude_default_coc());
  EXPECT_TRUE(query.exclude_default_aoc());
  EXPECT_EQ(query.dhis2_version(), "2.43");
}

TEST(Dhis243FlagsTest, ExportStreamAndCountSetEveryField) {
  for (const char* name : {"export", "stream", "count"}) {
    SCOPED_TRACE(name);
    ExpectEvery243Field(ParseOk(Command(name, Every243Flag())).request.query());
  }
}

TEST(Dhis243FlagsTest, SyncTakesThemButAnOffset) {
  std::vector<std::string> flags = Every243Flag();
  flags.erase(flags.begin(), flags.begin() + 2);  // --offset 5
  const ExportRequest query = ParseOk(Command("sync", flags)).request.query();
  EXPECT_THAT(query.order(), ElementsAre(EXPORT_ORDER_OU, EXPORT_ORDER_DE, EXPORT_ORDER_CREATED));
  EXPECT_EQ(query.dhis2_version(), "2.43");
  EXPECT_EQ(UsageError(Command("sync", {"--offset", "5"})),
            "--offset cannot be used with sync: an export from an offset is incomplete");
  // An offset of 0 leaves out nothing.
  EXPECT_EQ(ParseOk(Command("sync", {"--offset", "0"})).request.query().offset(), 0);
}

TEST(Dhis243FlagsTest, WithoutTheirFlagsNoFieldIsSet) {
  const std::vector<std::string> filters = {
      "--data-set", "ds1",     "--org-unit",  "ou1",  "--children",
      "--period",   "202401",  "--id-scheme", "CODE", "--attribute-option-combo",
      "aoc1",       "--limit", "10"};
  for (const char* name : {"export", "stream", "count", "sync"}) {
    SCOPED_TRACE(name);
    std::vector<std::string> extra = filters;
    if (std::string(name) == "sync") extra.resize(extra.size() - 2);  // no --limit
    const ExportRequest query = ParseOk(Command(name, extra)).request.query();
    std::vector<const google::protobuf::FieldDescriptor*> set;
    query.GetReflection()->ListFields(query, &set);
    for (const google::protobuf::FieldDescriptor* field : set) {
      for (int number : kDhis243Fields) EXPECT_NE(field->number(), number) << field->name();
    }
    EXPECT_FALSE(query.has_offset());
    EXPECT_FALSE(query.has_level());
    EXPECT_FALSE(query.has_input_use_code_fallback());
    EXPECT_TRUE(query.dhis2_version().empty());
  }
}

TEST(Dhis243FlagsTest, OrderKeepsTheKeysAsGivenInAnyCase) {
  EXPECT_THAT(
      ParseOk(Command("count", {"--order", "PE", "--order=aoc, Created", "--order", "ou"}))
          .request.query()
          .order(),
      ElementsAre(EXPORT_ORDER_PE, EXPORT_ORDER_AOC, EXPORT_ORDER_CREATED, EXPORT_ORDER_OU));
}

TEST(Dhis243FlagsTest, RefusesAnUnknownOrderKeyNamingTheFlagAndTheKeys) {
  EXPECT_EQ(UsageError(Command("export", {"--order", "OU,VALUE"})),
            "--order: 'VALUE' is not DE, OU, PE, CREATED or AOC");
  EXPECT_EQ(UsageError(Command("count", {"--order", "DE,,OU"})), "--order: empty item in 'DE,,OU'");
  EXPECT_EQ(UsageError(Command("stream", {"--order", "-DE"})),
            "--order: '-DE' is not DE, OU, PE, CREATED or AOC");
}

TEST(Dhis243FlagsTest, RefusesOffsetsAndLevelsOutOfRange) {
  for (const char* value : {"-1", "ten", "2.5", "3000000000"}) {
    EXPECT_EQ(UsageError(Command("export", {"--offset", value})),
              absl::StrCat("--offset: '", value, "' is not a whole number from 0 to 2147483647"));
  }
  for (const char* value : {"0", "-2", "one", "3000000000"}) {
    EXPECT_EQ(UsageError(Command("count", {"--level", value})),
              absl::StrCat("--level: '", value, "' is not a whole number from 1 to 2147483647"));
  }
  EXPECT_EQ(UsageError(Command("export", {"--offset", "1", "--offset", "2"})),
            "--offset is given more than once");
  EXPECT_EQ(UsageError(Command("export", {"--level", "1", "--level", "2"})),
            "--level is given more than once");
  EXPECT_EQ(ParseOk(Command("export", {"--offset", "2147483647"})).request.query().offset(),
            2147483647);
}

TEST(Dhis243FlagsTest, InputUseCodeFallbackIsTrueOrFalse) {
  const ExportRequest query =
      ParseOk(Command("export", {"--input-use-code-fallback", "true"})).request.query();
  ASSERT_TRUE(query.has_input_use_code_fallback());
  EXPECT_TRUE(query.input_use_code_fallback());
  for (const char* value : {"yes", "TRUE", "1"}) {
    EXPECT_EQ(UsageError(Command("export", {"--input-use-code-fallback", value})),
              absl::StrCat("--input-use-code-fallback: '", value, "' is not true or false"));
  }
  EXPECT_EQ(UsageError(Command("export", {"--input-use-code-fallback"})),
            "--input-use-code-fallback needs a value (true|false)");
}

TEST(Dhis243FlagsTest, SwitchesTakeNoValue) {
  for (const char* flag : {"--order-by-period", "--exclude-default-coc", "--exclude-default-aoc"}) {
    EXPECT_EQ(UsageError(Command("export", {absl::StrCat(flag, "=true")})),
              absl::StrCat(flag, " takes no value"));
  }
}

TEST(Dhis243FlagsTest, Dhis2VersionIsAServedVersion) {
  for (const char* version : {"2.40", "2.41", "2.42", "2.43"}) {
    EXPECT_EQ(
        ParseOk(Command("stream", {"--dhis2-version", version})).request.query().dhis2_version(),
        version);
  }
  for (const char* version : {"2.39", "2.44", "43", "2.43.1", "v2.43"}) {
    EXPECT_EQ(UsageError(Command("export", {"--dhis2-version", version})),
              absl::StrCat("--dhis2-version: '", version, "' is not 2.40, 2.41, 2.42 or 2.43"));
  }
}

TEST(Dhis243FlagsTest, HealthAndStreamsTakeNone) {
  EXPECT_EQ(UsageError({"health", "--server", "s:1", "--order", "DE"}),
            "unknown flag --order for health");
  EXPECT_EQ(UsageError({"streams", "list", "--server", "s:1", "--dhis2-version", "2.43"}),
            "unknown flag --dhis2-version for streams list");
}

TEST(Dhis243FlagsUsageTest, ListsTheFlagsOfTheQueryCommands) {
  for (const char* name : {"export", "stream", "count", "sync"}) {
    const std::string usage = CommandUsage(name);
    for (const char* flag :
         {"--offset N", "--order KEY,...", "--order-by-period", "--level N",
          "--category-option-combo UID,...", "--input-use-code-fallback true|false",
          "--exclude-default-coc", "--exclude-default-aoc", "--dhis2-version 2.4x"}) {
      EXPECT_THAT(usage, HasSubstr(flag)) << name;
    }
    size_t start = 0;
    for (size_t end; (end = usage.find('\n', start)) != std::string::npos; start = end + 1) {
      EXPECT_LE(end - start, 80u) << usage.substr(start, end - start);
    }
  }
  EXPECT_THAT(CommandUsage("health"), Not(HasSubstr("--order")));
}

// The client library sends the fields as the command line set them.
TEST(Dhis243FlagsClientTest, ExportToFileSendsThemToTheServer) {
  client::testutil::ScriptedExportServer server;
  client::testutil::TemporaryDirectory dir;
  server.SetScript(client::testutil::GoodScript("{\"dataValues\":[]}", 0, 8));
  std::vector<std::string> args = {"export", "--server", server.address(), "-o",
                                   dir.Join("out.json")};
  const std::vector<std::string> flags = Every243Flag();
  args.insert(args.end(), flags.begin(), flags.end());
  const CommandLine command = ParseOk(args);

  client::ExportClient client(client::CreateChannel(command.server));
  absl::StatusOr<client::ExportSummary> summary =
      client.ExportToFile(command.request, command.output, client::ExportOptions{});

  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(server.requests().size(), 1u);
  ExpectEvery243Field(server.requests()[0].query());
}

// Runs the dvexport program with "args" (stdout to /dev/null, stderr to "stderr_path"); its exit
// code, or -1.
int RunCli(std::vector<std::string> args, const std::string& stderr_path) {
  args.insert(args.begin(), DVEXPORT_CLI_PATH);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(::open("/dev/null", O_WRONLY), STDOUT_FILENO);
    ::dup2(::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Dhis243FlagsCliTest, ABadValueExitsWithTwoNamingTheFlag) {
  client::testutil::TemporaryDirectory dir;
  const std::string err = dir.Join("stderr");
  EXPECT_EQ(RunCli({"export", "--server", "127.0.0.1:1", "--order", "OU,XX", "-o", "-"}, err), 2);
  EXPECT_THAT(client::testutil::ReadFile(err),
              StartsWith("dvexport: --order: 'XX' is not DE, OU, PE, CREATED or AOC\n"));
  EXPECT_EQ(RunCli({"count", "--server", "127.0.0.1:1", "--level", "-1"}, err), 2);
  EXPECT_THAT(client::testutil::ReadFile(err),
              StartsWith("dvexport: --level: '-1' is not a whole number from 1 to 2147483647\n"));
  EXPECT_EQ(RunCli({"stream", "--server", "127.0.0.1:1", "--dhis2-version", "2.44"}, err), 2);
  EXPECT_THAT(client::testutil::ReadFile(err),
              StartsWith("dvexport: --dhis2-version: '2.44' is not 2.40, 2.41, 2.42 or 2.43\n"));
}

}  // namespace
}  // namespace dvexport::cli
