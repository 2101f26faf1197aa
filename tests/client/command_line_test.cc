#include "client/cli/command_line.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dvexport::cli {
namespace {

using dvexport::v1::COMPRESSION_GZIP;
using dvexport::v1::COMPRESSION_NONE;
using dvexport::v1::COMPRESSION_ZIP;
using dvexport::v1::COMPRESSION_ZSTD;
using dvexport::v1::FORMAT_ADX;
using dvexport::v1::FORMAT_CSV;
using dvexport::v1::FORMAT_JSON;
using dvexport::v1::FORMAT_XML;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// "export --server s:1 -o out.json" followed by "extra".
std::vector<std::string> Export(std::vector<std::string> extra) {
  std::vector<std::string> args = {"export", "--server", "s:1", "-o", "out.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

CommandLine ParseOk(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> command = ParseCommandLine(args);
  EXPECT_TRUE(command.ok()) << command.status();
  return command.ok() ? *command : CommandLine{};
}

// The message of the usage error that "args" make.
std::string UsageError(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> command = ParseCommandLine(args);
  EXPECT_EQ(command.status().code(), absl::StatusCode::kInvalidArgument) << command.status();
  return std::string(command.status().message());
}

TEST(ParseCommandLineTest, ParsesEveryExportFlag) {
  const CommandLine command = ParseOk({"export",
                                       "--server",
                                       "localhost:50051",
                                       "--data-set",
                                       "pBOMPrpg1QX",
                                       "--data-element",
                                       "fbfJHSPpUQD",
                                       "--period",
                                       "202401",
                                       "--start-date",
                                       "2024-01-01",
                                       "--end-date",
                                       "2024-12-31",
                                       "--org-unit",
                                       "ImspTQPwCqd",
                                       "--children",
                                       "--include-deleted",
                                       "--limit",
                                       "1000",
                                       "--format",
                                       "csv",
                                       "--compression",
                                       "gzip",
                                       "--compression-level",
                                       "6",
                                       "--timeout",
                                       "2.5",
                                       "-o",
                                       "out.csv.gz"});

  EXPECT_EQ(command.action, CommandLine::Action::kExport);
  EXPECT_EQ(command.server, "localhost:50051");
  EXPECT_EQ(command.output, "out.csv.gz");
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(2500));
  const dvexport::v1::ExportRequest& query = command.request.query();
  EXPECT_THAT(query.data_set(), ElementsAre("pBOMPrpg1QX"));
  EXPECT_THAT(query.data_element(), ElementsAre("fbfJHSPpUQD"));
  EXPECT_THAT(query.period(), ElementsAre("202401"));
  EXPECT_EQ(query.start_date(), "2024-01-01");
  EXPECT_EQ(query.end_date(), "2024-12-31");
  EXPECT_THAT(query.org_unit(), ElementsAre("ImspTQPwCqd"));
  EXPECT_TRUE(query.children());
  EXPECT_TRUE(query.include_deleted());
  ASSERT_TRUE(query.has_limit());
  EXPECT_EQ(query.limit(), 1000);
  EXPECT_EQ(command.request.format(), FORMAT_CSV);
  EXPECT_EQ(command.request.compression(), COMPRESSION_GZIP);
  EXPECT_EQ(command.request.compression_level(), 6);
}

TEST(ParseCommandLineTest, LeavesUnsetWhatIsNotGiven) {
  const CommandLine command = ParseOk(Export({}));

  const dvexport::v1::ExportRequest& query = command.request.query();
  EXPECT_THAT(query.data_set(), IsEmpty());
  EXPECT_THAT(query.period(), IsEmpty());
  EXPECT_FALSE(query.children());
  EXPECT_FALSE(query.include_deleted());
  EXPECT_FALSE(query.has_limit());
  EXPECT_EQ(command.request.compression_level(), 0);
  EXPECT_EQ(command.timeout, std::chrono::milliseconds(0));
}

TEST(ParseCommandLineTest, RepeatableFlagsTakeCommaSeparatedLists) {
  const CommandLine command =
      ParseOk(Export({"--period", "202401,202402", "--period", "202403", "--org-unit=a, b",
                      "--data-set", "x", "--data-element", "y,z", "--data-set=w"}));

  const dvexport::v1::ExportRequest& query = command.request.query();
  EXPECT_THAT(query.period(), ElementsAre("202401", "202402", "202403"));
  EXPECT_THAT(query.org_unit(), ElementsAre("a", "b"));
  EXPECT_THAT(query.data_set(), ElementsAre("x", "w"));
  EXPECT_THAT(query.data_element(), ElementsAre("y", "z"));
}

TEST(ParseCommandLineTest, SwitchesTakeNoValue) {
  const CommandLine command = ParseOk(Export({"--children", "--period", "2024"}));
  EXPECT_TRUE(command.request.query().children());
  EXPECT_THAT(command.request.query().period(), ElementsAre("2024"));

  EXPECT_THAT(UsageError(Export({"--children=true"})), HasSubstr("--children takes no value"));
  EXPECT_THAT(UsageError(Export({"--include-deleted", "yes"})),
              HasSubstr("unexpected argument 'yes'"));
}

TEST(ParseCommandLineTest, TellsFormatAndCompressionFromTheOutputName) {
  struct Case {
    const char* output;
    dvexport::v1::Format format;
    dvexport::v1::Compression compression;
  };
  for (const Case& c :
       {Case{"a.json", FORMAT_JSON, COMPRESSION_NONE},
        Case{"a.json.gz", FORMAT_JSON, COMPRESSION_GZIP},
        Case{"a.csv", FORMAT_CSV, COMPRESSION_NONE}, Case{"a.csv.gz", FORMAT_CSV, COMPRESSION_GZIP},
        Case{"a.xml", FORMAT_XML, COMPRESSION_NONE}, Case{"a.XML.gz", FORMAT_XML, COMPRESSION_GZIP},
        Case{"a.json.zip", FORMAT_JSON, COMPRESSION_ZIP},
        Case{"a.csv.zip", FORMAT_CSV, COMPRESSION_ZIP},
        Case{"a.json.zst", FORMAT_JSON, COMPRESSION_ZSTD},
        Case{"a.csv.zst", FORMAT_CSV, COMPRESSION_ZSTD},
        Case{"a.adx", FORMAT_ADX, COMPRESSION_NONE}, Case{"a.adx.gz", FORMAT_ADX, COMPRESSION_GZIP},
        Case{"a.adx.zip", FORMAT_ADX, COMPRESSION_ZIP},
        Case{"a.adx.zst", FORMAT_ADX, COMPRESSION_ZSTD},
        Case{"-", FORMAT_JSON, COMPRESSION_NONE}}) {
    const CommandLine command = ParseOk({"export", "--server", "s:1", "-o", c.output});
    EXPECT_EQ(command.request.format(), c.format) << c.output;
    EXPECT_EQ(command.request.compression(), c.compression) << c.output;
  }
}

TEST(ParseCommandLineTest, FlagsChooseWhatTheOutputNameDoesNotTell) {
  CommandLine command =
      ParseOk({"export", "--server", "s:1", "-o", "-", "--format", "csv", "--compression", "gzip"});
  EXPECT_EQ(command.output, "-");
  EXPECT_EQ(command.request.format(), FORMAT_CSV);
  EXPECT_EQ(command.request.compression(), COMPRESSION_GZIP);

  command = ParseOk({"export", "--server", "s:1", "--output=data.txt", "--format=csv"});
  EXPECT_EQ(command.output, "data.txt");
  EXPECT_EQ(command.request.format(), FORMAT_CSV);
  EXPECT_EQ(command.request.compression(), COMPRESSION_NONE);

  command = ParseOk(Export({"--format", "json", "--compression", "none"}));
  EXPECT_EQ(command.request.format(), FORMAT_JSON);

  command = ParseOk({"export", "--server", "s:1", "-o", "-", "--format", "xml"});
  EXPECT_EQ(command.request.format(), FORMAT_XML);

  command = ParseOk({"export", "--server", "s:1", "-o", "-", "--format", "adx"});
  EXPECT_EQ(command.request.format(), FORMAT_ADX);
}

TEST(ParseCommandLineTest, RejectsFlagsThatContradictTheOutputName) {
  EXPECT_THAT(UsageError(Export({"--format", "csv"})),
              HasSubstr("--format csv contradicts the file name 'out.json'"));
  EXPECT_THAT(UsageError(Export({"--format", "xml"})),
              HasSubstr("--format xml contradicts the file name 'out.json'"));
  EXPECT_THAT(UsageError({"export", "--server", "s:1", "-o", "a.adx", "--format", "xml"}),
              HasSubstr("--format xml contradicts the file name 'a.adx'"));
  EXPECT_THAT(UsageError({"export", "--server", "s:1", "-o", "a.xml", "--format", "json-pretty"}),
              HasSubstr("--format json-pretty contradicts the file name 'a.xml'"));
  EXPECT_THAT(UsageError(Export({"--compression", "gzip"})),
              HasSubstr("--compression gzip contradicts the file name 'out.json'"));
  EXPECT_THAT(UsageError({"export", "--server", "s:1", "-o", "data.txt"}),
              HasSubstr("cannot tell the format from the name 'data.txt'"));
  EXPECT_THAT(UsageError(Export({"--compression-level", "9"})),
              HasSubstr("--compression-level needs gzip, zip or zstd compression"));
  EXPECT_THAT(
      UsageError({"export", "--server", "s:1", "-o", "a.json.zip", "--compression", "zstd"}),
      HasSubstr("--compression zstd contradicts the file name 'a.json.zip'"));
}

TEST(ParseCommandLineTest, CompressionLevelsPerCompression) {
  CommandLine command =
      ParseOk({"export", "--server", "s:1", "-o", "a.json.zst", "--compression-level", "19"});
  EXPECT_EQ(command.request.compression(), COMPRESSION_ZSTD);
  EXPECT_EQ(command.request.compression_level(), 19);
  command = ParseOk({"export", "--server", "s:1", "-o", "a.csv.zip", "--compression-level", "9"});
  EXPECT_EQ(command.request.compression(), COMPRESSION_ZIP);
  EXPECT_EQ(command.request.compression_level(), 9);
  command = ParseOk({"export", "--server", "s:1", "-o", "-", "--compression", "zstd"});
  EXPECT_EQ(command.request.compression(), COMPRESSION_ZSTD);
  EXPECT_EQ(command.request.compression_level(), 0);
  EXPECT_THAT(
      UsageError({"export", "--server", "s:1", "-o", "a.json.zip", "--compression-level", "10"}),
      HasSubstr("--compression-level: 10 is not 1 to 9 for zip"));
  EXPECT_THAT(
      UsageError({"export", "--server", "s:1", "-o", "a.json.gz", "--compression-level", "12"}),
      HasSubstr("--compression-level: 12 is not 1 to 9 for gzip"));
}

TEST(ParseCommandLineTest, RejectsBadFlagsAndValues) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {Export({"--bogus"}), "unknown flag --bogus"},
      {Export({"--data_set", "x"}), "unknown flag --data_set"},
      {Export({"--period"}), "--period needs a value (ISO)"},
      {Export({"--period", "--children"}), "--period needs a value (ISO)"},
      {Export({"--period="}), "--period: empty item in ''"},
      {Export({"--period", "202401,,202402"}), "--period: empty item in '202401,,202402'"},
      {Export({"--start-date="}), "--start-date needs a value (DATE)"},
      {Export({"--server", "t:2"}), "--server is given more than once"},
      {Export({"--limit", "-1"}), "--limit: '-1' is not a whole number"},
      {Export({"--limit", "ten"}), "--limit: 'ten' is not a whole number"},
      {Export({"--limit", "3000000000"}), "--limit: '3000000000' is not a whole number"},
      {Export({"--timeout", "0"}), "--timeout: '0' is not a number of seconds > 0"},
      {Export({"--timeout", "soon"}), "--timeout: 'soon' is not a number of seconds > 0"},
      {Export({"--format", "yaml"}), "--format: 'yaml' is not json, csv, json-pretty, xml or adx"},
      {Export({"--compression", "bzip2"}), "--compression: 'bzip2' is not gzip, zip, zstd or none"},
      {Export({"--compression-level", "20"}), "--compression-level: '20' is not 1 to 19"},
      {Export({"--compression-level", "0"}), "--compression-level: '0' is not 1 to 19"},
      {Export({"stray"}), "unexpected argument 'stray'"},
      {{"export", "-o", "out.json"}, "--server HOST:PORT is required"},
      {{"export", "--server", "s:1"}, "-o FILE is required"},
      {{}, "no command given"},
      {{"import"}, "unknown command 'import'"},
      {{"--server", "s:1", "export"}, "unknown flag --server"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(UsageError(c.args), HasSubstr(c.message));
  }
}

TEST(ParseCommandLineTest, AsksForHelp) {
  EXPECT_EQ(ParseOk({"--help"}).action, CommandLine::Action::kShowHelp);
  EXPECT_EQ(ParseOk({"-h"}).action, CommandLine::Action::kShowHelp);
  EXPECT_EQ(ParseOk({"export", "--help"}).action, CommandLine::Action::kShowExportHelp);
  EXPECT_EQ(ParseOk({"export", "--server", "s:1", "--bogus", "-h"}).action,
            CommandLine::Action::kShowExportHelp);
}

TEST(UsageTest, ListsEveryFlag) {
  for (const char* flag :
       {"--server HOST:PORT", "--timeout SECONDS", "--data-set UID,...", "--data-element UID,...",
        "--period ISO,...", "--start-date DATE", "--end-date DATE", "--org-unit UID,...",
        "--children", "--include-deleted", "--limit N", "-o, --output FILE", "--format json|csv",
        "--compression gzip|zip|zstd|none", "--compression-level N", "--writeback-mib N",
        "-h, --help"}) {
    EXPECT_THAT(ExportUsage(), HasSubstr(flag));
    EXPECT_THAT(Usage(), HasSubstr(flag));
  }
  EXPECT_THAT(Usage(), HasSubstr("Commands:\n  export"));
}

TEST(UsageTest, FitsInEightyColumns) {
  for (const std::string& text : {Usage(), ExportUsage()}) {
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      EXPECT_LE(end - start, 80u) << text.substr(start, end - start);
    }
  }
}

}  // namespace
}  // namespace dvexport::cli

namespace dvexport::cli {
namespace {

TEST(ParseCommandLineTest, TlsFlagsFillTheChannelOptionsOfEveryCommand) {
  for (const char* command_name : {"export", "stream", "count", "health"}) {
    std::vector<std::string> args = {command_name, "--server", "h:1",       "--tls-ca", "ca.pem",
                                     "--tls-cert", "c.pem",    "--tls-key", "k.pem"};
    if (std::string(command_name) == "export") {
      args.insert(args.end(), {"-o", "-", "--format", "json"});
    } else if (std::string(command_name) == "stream") {
      args.insert(args.end(), {"-o", "-"});
    }
    absl::StatusOr<CommandLine> command = ParseCommandLine(args);
    ASSERT_TRUE(command.ok()) << command_name << ": " << command.status();
    EXPECT_EQ(command->channel.tls_ca_file, "ca.pem") << command_name;
    EXPECT_EQ(command->channel.tls_cert_file, "c.pem") << command_name;
    EXPECT_EQ(command->channel.tls_key_file, "k.pem") << command_name;
  }
}

TEST(ParseCommandLineTest, WithoutTlsFlagsTheChannelIsPlaintext) {
  absl::StatusOr<CommandLine> command = ParseCommandLine({"health", "--server", "h:1"});
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_TRUE(command->channel.tls_ca_file.empty());
  EXPECT_TRUE(command->channel.tls_cert_file.empty());
  EXPECT_TRUE(command->channel.tls_key_file.empty());
}

TEST(ParseCommandLineTest, AttemptsAndNoRetrySetTheAttemptsOfEveryCommand) {
  EXPECT_EQ(ParseOk(Export({})).channel.max_attempts, 4);
  EXPECT_EQ(ParseOk(Export({"--attempts", "2"})).channel.max_attempts, 2);
  EXPECT_EQ(ParseOk(Export({"--attempts=5"})).channel.max_attempts, 5);
  EXPECT_EQ(ParseOk(Export({"--no-retry"})).channel.max_attempts, 1);
  EXPECT_EQ(ParseOk(Export({"--no-retry", "--attempts", "1"})).channel.max_attempts, 1);
  EXPECT_EQ(ParseOk({"count", "--server", "h:1", "--no-retry"}).channel.max_attempts, 1);
  EXPECT_EQ(ParseOk({"health", "--server", "h:1", "--attempts", "3"}).channel.max_attempts, 3);
  EXPECT_EQ(ParseOk({"stream", "--server", "h:1", "--attempts", "3"}).channel.max_attempts, 3);
}

TEST(ParseCommandLineTest, WritebackMibSetsTheWriteBackRangeOfTheCommandsThatWrite) {
  EXPECT_EQ(ParseOk(Export({})).write_back_bytes, int64_t{8} << 20);
  EXPECT_EQ(ParseOk(Export({"--writeback-mib", "0"})).write_back_bytes, 0);
  EXPECT_EQ(ParseOk(Export({"--writeback-mib=64"})).write_back_bytes, int64_t{64} << 20);
  EXPECT_EQ(ParseOk(Export({"--writeback-mib", "1024"})).write_back_bytes, int64_t{1} << 30);
  EXPECT_EQ(ParseOk({"stream", "--server", "h:1", "--writeback-mib", "2"}).write_back_bytes,
            int64_t{2} << 20);
  EXPECT_EQ(ParseOk({"sync", "--server", "h:1", "--state", "s.token", "-o", "d.json",
                     "--writeback-mib", "16"})
                .write_back_bytes,
            int64_t{16} << 20);
  EXPECT_EQ(UsageError({"count", "--server", "h:1", "--writeback-mib", "2"}),
            "unknown flag --writeback-mib for count");
}

TEST(ParseCommandLineTest, RejectsWritebackMibOutOfRange) {
  for (const char* value : {"-1", "1025", "eight", "2.5", "99999999999"}) {
    EXPECT_EQ(UsageError(Export({"--writeback-mib", value})),
              std::string("--writeback-mib: '") + value +
                  "' is not a whole number of MiB from 0 (off) to 1024");
  }
  EXPECT_EQ(UsageError(Export({"--writeback-mib", "1", "--writeback-mib", "2"})),
            "--writeback-mib is given more than once");
}

TEST(ParseCommandLineTest, RejectsAttemptsOutOfRange) {
  for (const char* value : {"0", "6", "-1", "two", "2.5"}) {
    EXPECT_EQ(UsageError(Export({"--attempts", value})),
              std::string("--attempts: '") + value + "' is not a whole number from 1 to 5");
  }
  EXPECT_EQ(UsageError(Export({"--no-retry", "--attempts", "3"})),
            "--no-retry contradicts --attempts 3");
  EXPECT_EQ(UsageError(Export({"--no-retry=yes"})), "--no-retry takes no value");
}

TEST(ParseCommandLineTest, SyncTakesTheExportFlagsAndAStateFile) {
  absl::StatusOr<CommandLine> command = ParseCommandLine(
      {"sync", "--server", "h:1", "--state", "copy.token", "--data-set", "BfMAe6Itzgt",
       "--org-unit", "ImspTQPwCqd", "--period", "202401", "-o", "delta.csv.gz"});
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->action, CommandLine::Action::kSync);
  EXPECT_EQ(command->state_file, "copy.token");
  EXPECT_EQ(command->output, "delta.csv.gz");
  EXPECT_EQ(command->request.format(), dvexport::v1::FORMAT_CSV);
  EXPECT_EQ(command->request.compression(), dvexport::v1::COMPRESSION_GZIP);
  EXPECT_EQ(command->request.query().data_set_size(), 1);
  EXPECT_EQ(ParseCommandLine({"sync", "--help"})->action, CommandLine::Action::kShowSyncHelp);
  EXPECT_THAT(CommandUsage("sync"), HasSubstr("--state FILE"));
  EXPECT_THAT(Usage(), HasSubstr("  sync "));
}

TEST(ParseCommandLineTest, SyncRefusesNoStateStdoutAndLimit) {
  const std::vector<std::string> base = {"sync",        "--server",    "h:1",
                                         "--data-set",  "BfMAe6Itzgt", "--org-unit",
                                         "ImspTQPwCqd", "--period",    "202401"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    absl::StatusOr<CommandLine> command = ParseCommandLine(args);
    EXPECT_FALSE(command.ok());
    return std::string(command.status().message());
  };
  EXPECT_THAT(with({"-o", "d.json"}), HasSubstr("--state FILE is required"));
  EXPECT_THAT(with({"--state", "s", "-o", "-"}), HasSubstr("sync writes a file"));
  EXPECT_THAT(with({"--state", "s", "--limit", "3", "-o", "d.json"}),
              HasSubstr("--limit cannot be used with sync"));
  EXPECT_THAT(with({"--state", "s"}), HasSubstr("-o FILE is required"));
  // export does not take --state.
  absl::StatusOr<CommandLine> export_command = ParseCommandLine(
      {"export", "--server", "h:1", "--state", "s", "--data-set", "BfMAe6Itzgt", "-o", "d.json"});
  EXPECT_FALSE(export_command.ok());
}

TEST(UsageTest, SyncUsageFitsInEightyColumns) {
  const std::string text = CommandUsage("sync");
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    EXPECT_LE(end - start, 80u) << text.substr(start, end - start);
  }
}

}  // namespace
}  // namespace dvexport::cli
