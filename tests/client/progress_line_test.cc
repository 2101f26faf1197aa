#include "client/cli/progress_line.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace dvexport::cli {
namespace {

TEST(FormatSummaryTest, PrintsTheLineScriptsParse) {
  client::ExportSummary summary;
  summary.values = 123456;
  summary.file_bytes = 37012345;
  summary.uncompressed_bytes = 99999999;
  summary.seconds = 1.2345;

  EXPECT_EQ(FormatSummary(summary, "out.json"),
            "dvexport: wrote 123456 values, 37012345 bytes to out.json in 1.23 s");
}

TEST(FormatProgressTest, PrintsValuesMegabytesRateAndTime) {
  EXPECT_EQ(FormatProgress({1500, 25'000'000}, 2.0), "1500 values, 25.0 MB, 12.5 MB/s, 2.00 s");
  EXPECT_EQ(FormatProgress({0, 0}, 0), "0 values, 0.0 MB, 0.0 MB/s, 0.00 s");
}

std::string Contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string contents;
  for (int c; (c = std::fgetc(file)) != EOF;) contents += static_cast<char>(c);
  return contents;
}

TEST(ProgressLineTest, RewritesOneLineAtMostFiveTimesASecond) {
  std::FILE* terminal = std::tmpfile();
  ASSERT_NE(terminal, nullptr);
  ProgressLine line(terminal);

  line.Update({1, 10});
  line.Update({2, 20});  // Too soon: not shown.
  line.Clear();
  const std::string shown = Contents(terminal);
  std::fclose(terminal);

  ASSERT_EQ(shown.rfind("\r1 values, 0.0 MB, ", 0), 0u) << shown;
  EXPECT_EQ(shown.find("2 values"), std::string::npos) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 7), "\033[K\r\033[K") << shown;
}

TEST(ProgressLineTest, ClearsNothingWhenNothingWasShown) {
  std::FILE* terminal = std::tmpfile();
  ASSERT_NE(terminal, nullptr);
  ProgressLine line(terminal);

  line.Clear();

  EXPECT_EQ(Contents(terminal), "");
  std::fclose(terminal);
}

}  // namespace
}  // namespace dvexport::cli
