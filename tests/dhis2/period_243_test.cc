// DHIS2 2.43's period parser (Period.of) and its three new period types.

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "gtest/gtest.h"
#include "service/dhis2/period.h"

namespace dvexport::dhis2 {
namespace {

using std::chrono::sys_days;

sys_days Date(int y, unsigned m, unsigned d) {
  return sys_days{std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d}};
}

std::string Error(std::string_view iso) {
  absl::StatusOr<Period> period = ParseIsoPeriod243(iso);
  EXPECT_FALSE(period.ok()) << iso;
  if (period.ok()) return "";
  EXPECT_EQ(period.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(period.status().message());
}

std::string Canonical(std::string_view iso) {
  absl::StatusOr<Period> period = ParseIsoPeriod243(iso);
  EXPECT_TRUE(period.ok()) << iso << ": " << period.status();
  if (!period.ok()) return "";
  return FormatIsoPeriod(period->type, period->start);
}

TEST(PeriodType243Test, NamesTheTwentyThreeTypesInDhis2Order) {
  const std::string_view expected[] = {
      "Daily",          "Weekly",       "WeeklyWednesday", "WeeklyThursday",  "WeeklyFriday",
      "WeeklySaturday", "WeeklySunday", "BiWeekly",        "Monthly",         "BiMonthly",
      "Quarterly",      "QuarterlyNov", "SixMonthly",      "SixMonthlyApril", "SixMonthlyNov",
      "Yearly",         "FinancialFeb", "FinancialApril",  "FinancialJuly",   "FinancialAug",
      "FinancialSep",   "FinancialOct", "FinancialNov"};
  ASSERT_EQ(std::size(expected), kAllPeriodTypes243.size());
  for (std::size_t i = 0; i < kAllPeriodTypes243.size(); ++i) {
    EXPECT_EQ(PeriodTypeName(kAllPeriodTypes243[i]), expected[i]);
    EXPECT_EQ(PeriodTypeFromName(expected[i], 43), kAllPeriodTypes243[i]);
  }
}

TEST(PeriodType243Test, NewTypesAreUnknownBefore243) {
  for (std::string_view name : {"WeeklyFriday", "FinancialFeb", "FinancialAug"}) {
    EXPECT_EQ(PeriodTypeFromName(name, 42), std::nullopt) << name;
    EXPECT_EQ(PeriodTypeFromName(name), std::nullopt) << name;
    EXPECT_FALSE(ParseIsoPeriod(name == "WeeklyFriday" ? "2024FriW6" : "2024Feb").ok());
  }
  EXPECT_EQ(PeriodTypeFromName("TwoYearly", 43), std::nullopt);
}

TEST(PeriodType243Test, FormatsIdsOfTheNewTypes) {
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kWeeklyFriday, Date(2024, 2, 2)), "2024FriW6");
  // Week 1 of WeekFields(FRIDAY, 4) holds January 4: 2023-12-29 starts 2024FriW1.
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kWeeklyFriday, Date(2023, 12, 29)), "2024FriW1");
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kWeeklyFriday, Date(2023, 12, 28)), "2023FriW52");
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kFinancialFeb, Date(2024, 2, 1)), "2024Feb");
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kFinancialFeb, Date(2024, 1, 31)), "2023Feb");
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kFinancialAug, Date(2024, 8, 1)), "2024Aug");
  const Period week = CreatePeriod(PeriodType::kWeeklyFriday, Date(2024, 2, 7));
  EXPECT_EQ(week.start, Date(2024, 2, 2));
  EXPECT_EQ(week.end, Date(2024, 2, 8));
  const Period feb = CreatePeriod(PeriodType::kFinancialFeb, Date(2024, 3, 1));
  EXPECT_EQ(feb.start, Date(2024, 2, 1));
  EXPECT_EQ(feb.end, Date(2025, 1, 31));
}

// PeriodTypeEnumTest.testOfIsoPeriod at 2.43.1: the type of each form.
TEST(ParseIsoPeriod243Test, ReadsEachFormAsDhis2) {
  const std::pair<std::string_view, PeriodType> cases[] = {
      {"2011", PeriodType::kYearly},
      {"201101", PeriodType::kMonthly},
      {"2011-01", PeriodType::kMonthly},
      {"2011W1", PeriodType::kWeekly},
      {"2011W32", PeriodType::kWeekly},
      {"2011BiW2", PeriodType::kBiWeekly},
      {"2011BiW12", PeriodType::kBiWeekly},
      {"20110101", PeriodType::kDaily},
      {"2011-01-01", PeriodType::kDaily},
      {"2011Q3", PeriodType::kQuarterly},
      {"2011NovQ3", PeriodType::kQuarterlyNov},
      {"201101B", PeriodType::kBiMonthly},
      {"2011S1", PeriodType::kSixMonthly},
      {"2011AprilS1", PeriodType::kSixMonthlyApril},
      {"2011NovS1", PeriodType::kSixMonthlyNov},
      {"2011April", PeriodType::kFinancialApril},
      {"2011July", PeriodType::kFinancialJuly},
      {"2011Sep", PeriodType::kFinancialSep},
      {"2011Oct", PeriodType::kFinancialOct},
      {"2011Nov", PeriodType::kFinancialNov},
      {"2011Feb", PeriodType::kFinancialFeb},
      {"2011Aug", PeriodType::kFinancialAug},
      {"2011WedW5", PeriodType::kWeeklyWednesday},
      {"2011ThuW05", PeriodType::kWeeklyThursday},
      {"2024FriW6", PeriodType::kWeeklyFriday},
      {"2011SatW5", PeriodType::kWeeklySaturday},
      {"2011SunW52", PeriodType::kWeeklySunday},
  };
  for (const auto& [iso, type] : cases) {
    absl::StatusOr<Period> period = ParseIsoPeriod243(iso);
    ASSERT_TRUE(period.ok()) << iso << ": " << period.status();
    EXPECT_EQ(period->type, type) << iso;
  }
}

// PeriodTypeEnumTest.testOfIsoPeriod at 2.43.1: its messages, verbatim.
TEST(ParseIsoPeriod243Test, RefusesMalformedIdsWithDhis2Messages) {
  EXPECT_EQ(Error("201"), "Period must be have between 4 and 11 characters but got: `201`");
  EXPECT_EQ(Error("20111"),
            "Invalid Period `20111`, expected one of [AprilS] at index 4 for a ISO period of "
            "length 5 but found: `1`");
  EXPECT_EQ(Error("201W2"),
            "Invalid Period `201W2`, expected a digit at position 3 but found: `W`");
  EXPECT_EQ(Error("2011Q12"),
            "Invalid Period `2011Q12`, expected one of [W, -] at index 4 for a ISO period of "
            "length 7 but found: `Q12`");
  EXPECT_EQ(Error("2011W234"),
            "Invalid Period `2011W234`, expected a digit at position 4 but found: `W`");
  EXPECT_EQ(Error("201er2345566"),
            "Period must be have between 4 and 11 characters but got: `201er2345566`");
  EXPECT_EQ(Error("2011Q10"),
            "Invalid Period `2011Q10`, expected one of [W, -] at index 4 for a ISO period of "
            "length 7 but found: `Q10`");
}

TEST(ParseIsoPeriod243Test, RefusesOtherMalformedIdsAsPeriodInputDoes) {
  EXPECT_EQ(Error("2024X1"),
            "Invalid Period `2024X1`, expected one of [W, Q, S] at index 4 for a ISO period of "
            "length 6 but found: `X1`");
  // The digit after the infix is read before the infix.
  EXPECT_EQ(Error("2024WX"),
            "Invalid Period `2024WX`, expected a digit at position 5 but found: `X`");
  // DHIS2's list for length 9 leaves FriW out.
  EXPECT_EQ(Error("2024MonW1"),
            "Invalid Period `2024MonW1`, expected one of [WedW, ThuW, SatW, SunW, NovS] at index 4 "
            "for a ISO period of length 9 but found: `MonW1`");
  EXPECT_EQ(
      Error("2024MonW10"),
      "Invalid Period `2024MonW10`, expected one of [WedW, ThuW, SatW, SunW] at index 4 for a "
      "ISO period of length 10 but found: `MonW10`");
  EXPECT_EQ(Error("2024-01x01"),
            "Invalid Period `2024-01x01`, expected a dash at position 7 but found: `x`");
  EXPECT_EQ(Error("2024-1B"),
            "Invalid Period `2024-1B`, expected a digit at position 4 but found: `-`");
  EXPECT_EQ(
      Error("2024Mars01"),
      "Invalid Period `2024Mars01`, expected one of [WedW, ThuW, SatW, SunW] at index 4 for a "
      "ISO period of length 10 but found: `Mars01`");
  // Java counts UTF-16 units: "2024é1" has 6.
  EXPECT_EQ(Error("2024\xC3\xA9"
                  "1"),
            "Invalid Period `2024\xC3\xA9"
            "1`, expected one of [W, Q, S] at index 4 for a ISO "
            "period of length 6 but found: `\xC3\xA9"
            "1`");
}

TEST(ParseIsoPeriod243Test, RefusesPeriodsThatDoNotExist) {
  for (std::string_view iso :
       {"2024FriW54", "2024W53", "2024W0", "2024W54", "202413", "202400", "20240230", "2024-02-30",
        "2024Q5", "2024Q0", "2024S3", "2024NovQ5", "2024AprilS3", "202407B", "2024BiW0",
        "2024BiW27", "0999W1", "0999SunW1", "2024SunW53"}) {
    EXPECT_EQ(Error(iso),
              "Invalid Period `" + std::string(iso) + "`, failed to create date interval");
  }
}

TEST(ParseIsoPeriod243Test, CountsWeeksInTheTypesOwnWeekBasedYear) {
  absl::StatusOr<Period> friday = ParseIsoPeriod243("2024FriW6");
  ASSERT_TRUE(friday.ok()) << friday.status();
  EXPECT_EQ(friday->start, Date(2024, 2, 2));
  EXPECT_EQ(friday->end, Date(2024, 2, 8));
  EXPECT_EQ(Canonical("2026W53"), "2026W53");
  EXPECT_EQ(Canonical("2025SunW53"), "2025SunW53");
  // 2.42's ParseIsoPeriod checks weeks the same way; BiWeekly differs (below).
  EXPECT_EQ(Canonical("2020W53"), "2020W53");
}

TEST(ParseIsoPeriod243Test, BiWeeksCountInTheWeekYearOfJanuaryFirst) {
  // January 1, 2021 lies in 2020's week 53: Joda counts 53 weeks for 2021, which has 52, and
  // bi-week 27 overflows into 2022.
  absl::StatusOr<Period> overflow = ParseIsoPeriod243("2021BiW27");
  ASSERT_TRUE(overflow.ok()) << overflow.status();
  EXPECT_EQ(overflow->start, Date(2022, 1, 3));
  EXPECT_EQ(FormatIsoPeriod(overflow->type, overflow->start), "2022BiW1");
  EXPECT_EQ(Canonical("2026BiW27"), "2026BiW27");
  EXPECT_FALSE(ParseIsoPeriod("2021BiW27").ok());
  // Years below 1000 fail only for the weekly types.
  EXPECT_EQ(Canonical("0999BiW1"), "999BiW1");
}

TEST(ParseIsoPeriod243Test, CanonicalIdsMakeAlternativeFormsOnePeriod) {
  EXPECT_EQ(Canonical("2024-01"), "202401");
  EXPECT_EQ(Canonical("2024W01"), "2024W1");
  EXPECT_EQ(Canonical("2024-01-05"), "20240105");
  EXPECT_EQ(Canonical("2024NovQ1"), "2024NovQ1");
  EXPECT_EQ(Canonical("2024Nov"), "2024Nov");
  EXPECT_EQ(ParseIsoPeriod243("2024-01").value(), ParseIsoPeriod243("202401").value());
  absl::StatusOr<Period> nov = ParseIsoPeriod243("2024NovQ1");
  ASSERT_TRUE(nov.ok());
  EXPECT_EQ(nov->start, Date(2023, 11, 1));
  EXPECT_EQ(nov->end, Date(2024, 1, 31));
  absl::StatusOr<Period> aug = ParseIsoPeriod243("2024Aug");
  ASSERT_TRUE(aug.ok());
  EXPECT_EQ(aug->start, Date(2024, 8, 1));
  EXPECT_EQ(aug->end, Date(2025, 7, 31));
}

TEST(ParseIsoPeriod243Test, ReturnsYearZeroAsDhis2AcceptsIt) {
  absl::StatusOr<Period> zero = ParseIsoPeriod243("0000");
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->start, Date(0, 1, 1));
}

}  // namespace
}  // namespace dvexport::dhis2
