// The command line of the stream, count and health commands, the DHIS2
// filters and id schemes added for issue 3, and --format json-pretty.

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dvexport::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

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

// Every DHIS2 filter and id scheme flag with a distinct value, for "command".
std::vector<std::string> EveryQueryFlag(const std::string& command) {
  return {command,
          "--server",
          "s:1",
          "--data-element-group",
          "deg1,deg2",
          "--org-unit-group",
          "oug1",
          "--attribute-option-combo",
          "aoc1",
          "--attribute-combo",
          "ac1",
          "--attribute-options",
          "ao1,ao2",
          "--last-updated",
          "2024-01-01",
          "--last-updated-duration",
          "10d",
          "--input-id-scheme",
          "CODE",
          "--input-org-unit-id-scheme",
          "NAME",
          "--input-data-element-id-scheme",
          "ATTRIBUTE:aaaaaaaaaaa",
          "--input-data-set-id-scheme",
          "UID",
          "--input-data-element-group-id-scheme",
          "CODE",
          "--id-scheme",
          "NAME",
          "--data-element-id-scheme",
          "CODE",
          "--org-unit-id-scheme",
          "UID",
          "--category-option-combo-id-scheme",
          "NAME",
          "--attribute-option-combo-id-scheme",
          "CODE",
          "--data-set-id-scheme",
          "ATTRIBUTE:bbbbbbbbbbb",
          "--data-set",
          "ds1"};
}

void ExpectEveryQueryFlag(const dvexport::v1::ExportRequest& query) {
  EXPECT_THAT(query.data_element_group(), ElementsAre("deg1", "deg2"));
  EXPECT_THAT(query.org_unit_group(), ElementsAre("oug1"));
  EXPECT_THAT(query.attribute_option_combo(), ElementsAre("aoc1"));
  EXPECT_EQ(query.attribute_combo(), "ac1");
  EXPECT_THAT(query.attribute_options(), ElementsAre("ao1", "ao2"));
  EXPECT_EQ(query.last_updated(), "2024-01-01");
  EXPECT_EQ(query.last_updated_duration(), "10d");
  EXPECT_EQ(query.input_id_scheme(), "CODE");
  EXPECT_EQ(query.input_org_unit_id_scheme(), "NAME");
  EXPECT_EQ(query.input_data_element_id_scheme(), "ATTRIBUTE:aaaaaaaaaaa");
  EXPECT_EQ(query.input_data_set_id_scheme(), "UID");
  EXPECT_EQ(query.input_data_element_group_id_scheme(), "CODE");
  EXPECT_EQ(query.id_scheme(), "NAME");
  EXPECT_EQ(query.data_element_id_scheme(), "CODE");
  EXPECT_EQ(query.org_unit_id_scheme(), "UID");
  EXPECT_EQ(query.category_option_combo_id_scheme(), "NAME");
  EXPECT_EQ(query.attribute_option_combo_id_scheme(), "CODE");
  EXPECT_EQ(query.data_set_id_scheme(), "ATTRIBUTE:bbbbbbbbbbb");
  EXPECT_THAT(query.data_set(), ElementsAre("ds1"));
}

TEST(SubcommandLineTest, ExportTakesEveryDhis2FilterAndIdScheme) {
  std::vector<std::string> args = EveryQueryFlag("export");
  args.insert(args.end(), {"-o", "out.json"});
  const CommandLine command = ParseOk(args);
  EXPECT_EQ(command.action, CommandLine::Action::kExport);
  ExpectEveryQueryFlag(command.request.query());
}

TEST(SubcommandLineTest, StreamTakesTheFiltersAndDefaultsToStandardOutput) {
  const CommandLine command = ParseOk(EveryQueryFlag("stream"));
  EXPECT_EQ(command.action, CommandLine::Action::kStream);
  EXPECT_EQ(command.server, "s:1");
  EXPECT_EQ(command.output, kStandardOutput);
  ExpectEveryQueryFlag(command.request.query());
  EXPECT_EQ(ParseOk({"stream", "--server", "s:1", "-o", "values.ndjson"}).output, "values.ndjson");
}

TEST(SubcommandLineTest, CountTakesTheFilters) {
  std::vector<std::string> args = EveryQueryFlag("count");
  args.insert(args.end(), {"--limit", "10", "--include-deleted", "--timeout", "3"});
  const CommandLine command = ParseOk(args);
  EXPECT_EQ(command.action, CommandLine::Action::kCount);
  ExpectEveryQueryFlag(command.request.query());
  EXPECT_EQ(command.request.query().limit(), 10);
  EXPECT_TRUE(command.request.query().include_deleted());
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(3000));
}

TEST(SubcommandLineTest, HealthTakesServerAndService) {
  CommandLine command = ParseOk({"health", "--server", "s:1"});
  EXPECT_EQ(command.action, CommandLine::Action::kHealth);
  EXPECT_EQ(command.server, "s:1");
  EXPECT_EQ(command.health_service, "");
  command = ParseOk({"health", "--server", "s:1", "--service", "dvexport.v1.DataValueExport"});
  EXPECT_EQ(command.health_service, "dvexport.v1.DataValueExport");
}

TEST(SubcommandLineTest, EachCommandRejectsFlagsOfOtherCommands) {
  EXPECT_THAT(UsageError({"count", "--server", "s:1", "-o", "x.json"}),
              HasSubstr("unknown flag -o for count"));
  EXPECT_THAT(UsageError({"count", "--server", "s:1", "--format", "csv"}),
              HasSubstr("unknown flag --format for count"));
  EXPECT_THAT(UsageError({"stream", "--server", "s:1", "--compression", "gzip"}),
              HasSubstr("unknown flag --compression for stream"));
  EXPECT_THAT(UsageError({"health", "--server", "s:1", "--data-set", "x"}),
              HasSubstr("unknown flag --data-set for health"));
  EXPECT_THAT(UsageError({"export", "--server", "s:1", "--service", "x", "-o", "a.json"}),
              HasSubstr("unknown flag --service for export"));
  EXPECT_THAT(UsageError({"count", "--bogus"}), HasSubstr("unknown flag --bogus"));
  EXPECT_THAT(UsageError({"count", "--bogus"}), Not(HasSubstr(" for count")));
}

TEST(SubcommandLineTest, EveryCommandNeedsTheServer) {
  for (const char* command : {"stream", "count", "health"}) {
    EXPECT_THAT(UsageError({command}), HasSubstr("--server HOST:PORT is required")) << command;
  }
}

TEST(SubcommandLineTest, ScalarFilterFlagsAreGivenOnce) {
  EXPECT_THAT(
      UsageError({"count", "--server", "s:1", "--id-scheme", "CODE", "--id-scheme", "NAME"}),
      HasSubstr("--id-scheme is given more than once"));
  // A scalar flag takes its value whole, commas included.
  EXPECT_EQ(ParseOk({"count", "--server", "s:1", "--attribute-combo", "a,b"})
                .request.query()
                .attribute_combo(),
            "a,b");
}

TEST(SubcommandLineTest, JsonPrettyIsAFormatThatAJsonNameAllows) {
  CommandLine command =
      ParseOk({"export", "--server", "s:1", "--format", "json-pretty", "-o", "out.json"});
  EXPECT_EQ(command.request.format(), dvexport::v1::FORMAT_JSON_PRETTY);
  command = ParseOk({"export", "--server", "s:1", "--format=json-pretty", "-o", "out.json.gz"});
  EXPECT_EQ(command.request.format(), dvexport::v1::FORMAT_JSON_PRETTY);
  EXPECT_EQ(command.request.compression(), dvexport::v1::COMPRESSION_GZIP);
  command = ParseOk({"export", "--server", "s:1", "--format", "json-pretty", "-o", "-"});
  EXPECT_EQ(command.request.format(), dvexport::v1::FORMAT_JSON_PRETTY);
  // The .json name alone stays compact.
  EXPECT_EQ(ParseOk({"export", "--server", "s:1", "-o", "out.json"}).request.format(),
            dvexport::v1::FORMAT_JSON);
  EXPECT_THAT(UsageError({"export", "--server", "s:1", "--format", "json-pretty", "-o", "out.csv"}),
              HasSubstr("--format json-pretty contradicts the file name 'out.csv'"));
}

TEST(SubcommandLineTest, AsksForHelpWithEachCommand) {
  EXPECT_EQ(ParseOk({"stream", "--help"}).action, CommandLine::Action::kShowStreamHelp);
  EXPECT_EQ(ParseOk({"count", "-h"}).action, CommandLine::Action::kShowCountHelp);
  EXPECT_EQ(ParseOk({"health", "--server", "s:1", "--help"}).action,
            CommandLine::Action::kShowHealthHelp);
}

TEST(SubcommandUsageTest, ListsEachCommandsFlagsOnly) {
  const std::string stream = CommandUsage("stream");
  EXPECT_THAT(stream, HasSubstr("Usage: dvexport stream"));
  EXPECT_THAT(stream, HasSubstr("--data-element-group UID,..."));
  EXPECT_THAT(stream, HasSubstr("--category-option-combo-id-scheme SCHEME"));
  EXPECT_THAT(stream, HasSubstr("-o, --output FILE"));
  EXPECT_THAT(stream, Not(HasSubstr("--compression")));
  const std::string count = CommandUsage("count");
  EXPECT_THAT(count, HasSubstr("--last-updated-duration DURATION"));
  EXPECT_THAT(count, Not(HasSubstr("--output")));
  const std::string health = CommandUsage("health");
  EXPECT_THAT(health, HasSubstr("--service NAME"));
  EXPECT_THAT(health, Not(HasSubstr("--data-set")));
  EXPECT_THAT(health, HasSubstr("Exit status: 0 SERVING"));
  EXPECT_THAT(CommandUsage("export"), HasSubstr("--format json|csv|json-pretty|xml"));
  EXPECT_EQ(CommandUsage("import"), "");
  for (const char* command : {"export", "stream", "count", "health"}) {
    EXPECT_THAT(Usage(), HasSubstr(absl::StrCat("\n  ", command, " ")));
  }
}

TEST(SubcommandLineTest, StreamsListTakesConnectionAndIdentityOnly) {
  CommandLine command =
      ParseOk({"streams", "list", "--server", "s:1", "--token-file", "t.pat", "--timeout", "2"});
  EXPECT_EQ(command.action, CommandLine::Action::kStreamsList);
  EXPECT_EQ(command.server, "s:1");
  EXPECT_EQ(command.token_file, "t.pat");
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(2000));
  EXPECT_THAT(UsageError({"streams", "list", "--server", "s:1", "--data-set", "x"}),
              HasSubstr("unknown flag --data-set for streams list"));
  EXPECT_THAT(UsageError({"streams", "list"}), HasSubstr("--server HOST:PORT is required"));
}

TEST(SubcommandLineTest, StreamsDropNamesExactlyOneStream) {
  CommandLine command = ParseOk({"streams", "drop", "--server", "s:1", "--name", "dvexport_x"});
  EXPECT_EQ(command.action, CommandLine::Action::kStreamsDrop);
  EXPECT_EQ(command.stream_name, "dvexport_x");
  command = ParseOk({"streams", "drop", "--server", "s:1", "--state", "copy.token"});
  EXPECT_EQ(command.state_file, "copy.token");
  command = ParseOk({"streams", "drop", "--server=s:1", "--change-token=abc", "--user", "u"});
  EXPECT_EQ(command.change_token, "abc");
  EXPECT_EQ(command.user, "u");
  EXPECT_THAT(UsageError({"streams", "drop", "--server", "s:1"}),
              HasSubstr("give one of --state FILE, --change-token TOKEN and --name SLOT"));
  EXPECT_THAT(
      UsageError({"streams", "drop", "--server", "s:1", "--name", "a", "--change-token", "b"}),
      HasSubstr("give only one of"));
  // --token stays a refused secret flag, here too.
  EXPECT_THAT(UsageError({"streams", "drop", "--server", "s:1", "--token", "d2p_x"}),
              HasSubstr("a secret is never given on the command line"));
}

TEST(SubcommandLineTest, StreamsNeedsAnAction) {
  EXPECT_THAT(UsageError({"streams"}), HasSubstr("streams needs an action: list or drop"));
  EXPECT_THAT(UsageError({"streams", "show"}), HasSubstr("unknown streams action 'show'"));
  EXPECT_THAT(UsageError({"streams list", "--server", "s:1"}),
              HasSubstr("unknown command 'streams list'"));
  EXPECT_EQ(ParseOk({"streams", "--help"}).action, CommandLine::Action::kShowStreamsHelp);
  EXPECT_EQ(ParseOk({"streams", "drop", "-h"}).action, CommandLine::Action::kShowStreamsHelp);
  const std::string usage = CommandUsage("streams");
  EXPECT_THAT(usage, HasSubstr("Usage: dvexport streams list"));
  EXPECT_THAT(usage, HasSubstr("Usage: dvexport streams drop"));
  EXPECT_THAT(usage, HasSubstr("--change-token TOKEN"));
  EXPECT_THAT(Usage(), HasSubstr("\n  streams list|drop "));
  EXPECT_EQ(CommandUsage("streams list"), "");
}

TEST(SubcommandUsageTest, FitsInEightyColumns) {
  for (const char* command : {"export", "stream", "count", "health", "streams"}) {
    const std::string text = CommandUsage(command);
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      EXPECT_LE(end - start, 80u) << text.substr(start, end - start);
    }
  }
}

}  // namespace
}  // namespace dvexport::cli
