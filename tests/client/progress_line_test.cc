#include "client/cli/progress_line.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
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

TEST(FormatProgressBarTest, PrintsBarPercentageRatesAndEta) {
  EXPECT_EQ(FormatProgressBar({500, 10'000'000}, 1000, 2.0),
            "[##########----------]  50% 500/1000 values, 250 values/s, 10.0 MB, 5.0 MB/s, "
            "ETA 2 s");
  EXPECT_EQ(FormatProgressBar({0, 0}, 1000, 0),
            "[--------------------]   0% 0/1000 values, 0 values/s, 0.0 MB, 0.0 MB/s, ETA ?");
  // More values than counted (rows added since the count): full, no negative ETA.
  EXPECT_EQ(FormatProgressBar({1200, 0}, 1000, 1.0).substr(0, 28), "[####################] 100% ");
  EXPECT_THAT(FormatProgressBar({1200, 0}, 1000, 1.0), ::testing::EndsWith("ETA 0 s"));
  // Nothing to export.
  EXPECT_EQ(FormatProgressBar({0, 0}, 0, 1.0).substr(0, 27), "[####################] 100%");
}

TEST(ProgressLineTest, ShowsTheBarOnceTheTotalIsKnown) {
  std::FILE* terminal = std::tmpfile();
  ASSERT_NE(terminal, nullptr);
  ProgressLine line(terminal);
  line.SetTotal(10);
  line.Update({5, 10});
  line.Clear();
  std::fflush(terminal);
  std::rewind(terminal);
  std::string shown;
  for (int c; (c = std::fgetc(terminal)) != EOF;) shown += static_cast<char>(c);
  std::fclose(terminal);
  EXPECT_EQ(shown.rfind("\r[##########----------]  50% 5/10 values", 0), 0u) << shown;
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
