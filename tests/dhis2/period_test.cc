#include "service/dhis2/period.h"

#include <chrono>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "service/dhis2/dates.h"

namespace dvexport::dhis2 {

// Names the type in the output of failing parameterized tests.
void PrintTo(PeriodType type, std::ostream* os) { *os << PeriodTypeName(type); }

namespace {

using std::chrono::days;
using std::chrono::sys_days;
using std::chrono::weekday;

sys_days Date(int y, unsigned m, unsigned d) {
  return sys_days{std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d}};
}

TEST(PeriodTypeTest, NamesAreDhis2PeriodTypeNames) {
  const std::vector<std::string_view> expected = {
      "Daily",          "Weekly",        "WeeklyWednesday", "WeeklyThursday", "WeeklySaturday",
      "WeeklySunday",   "BiWeekly",      "Monthly",         "BiMonthly",      "Quarterly",
      "QuarterlyNov",   "SixMonthly",    "SixMonthlyApril", "SixMonthlyNov",  "Yearly",
      "FinancialApril", "FinancialJuly", "FinancialSep",    "FinancialOct",   "FinancialNov"};
  ASSERT_EQ(kAllPeriodTypes.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(PeriodTypeName(kAllPeriodTypes[i]), expected[i]);
    EXPECT_EQ(PeriodTypeFromName(expected[i]), kAllPeriodTypes[i]);
  }
}

TEST(PeriodTypeTest, UnknownNamesAreRejected) {
  for (std::string_view name : {"TwoYearly", "weekly", "WEEKLY", "Weekly ", "", "FinancialFeb",
                                "WeeklyFriday", "FinancialNovember"}) {
    EXPECT_EQ(PeriodTypeFromName(name), std::nullopt) << name;
  }
}

struct GoldenId {
  PeriodType type;
  sys_days start;
  std::string_view id;
};

// Checked against DHIS2's getIsoDate code run on java.time (OpenJDK 17).
const GoldenId kGoldenIds[] = {
    {PeriodType::kDaily, Date(2024, 1, 5), "20240105"},
    {PeriodType::kDaily, Date(2024, 2, 29), "20240229"},
    {PeriodType::kDaily, Date(2024, 12, 31), "20241231"},
    // ISO weeks: week 1 holds January 4.
    {PeriodType::kWeekly, Date(2024, 1, 1), "2024W1"},
    {PeriodType::kWeekly, Date(2024, 1, 29), "2024W5"},
    {PeriodType::kWeekly, Date(2024, 12, 23), "2024W52"},
    {PeriodType::kWeekly, Date(2024, 12, 30), "2025W1"},
    {PeriodType::kWeekly, Date(2019, 12, 30), "2020W1"},
    {PeriodType::kWeekly, Date(2020, 12, 28), "2020W53"},
    {PeriodType::kWeekly, Date(2021, 1, 4), "2021W1"},
    {PeriodType::kWeekly, Date(2026, 12, 28), "2026W53"},
    {PeriodType::kWeekly, Date(2027, 1, 4), "2027W1"},
    {PeriodType::kWeekly, Date(2015, 12, 28), "2015W53"},
    {PeriodType::kWeeklyWednesday, Date(2024, 1, 3), "2024WedW1"},
    {PeriodType::kWeeklyWednesday, Date(2020, 12, 30), "2021WedW1"},
    {PeriodType::kWeeklyWednesday, Date(2021, 12, 29), "2022WedW1"},
    {PeriodType::kWeeklyWednesday, Date(2022, 12, 28), "2022WedW53"},
    {PeriodType::kWeeklyWednesday, Date(2023, 1, 4), "2023WedW1"},
    {PeriodType::kWeeklyWednesday, Date(2025, 12, 31), "2026WedW1"},
    {PeriodType::kWeeklyThursday, Date(2020, 12, 24), "2020ThuW52"},
    {PeriodType::kWeeklyThursday, Date(2020, 12, 31), "2021ThuW1"},
    {PeriodType::kWeeklyThursday, Date(2023, 12, 28), "2023ThuW53"},
    {PeriodType::kWeeklyThursday, Date(2026, 1, 1), "2026ThuW1"},
    {PeriodType::kWeeklySaturday, Date(2019, 1, 5), "2019SatW2"},
    {PeriodType::kWeeklySaturday, Date(2019, 12, 28), "2019SatW53"},
    {PeriodType::kWeeklySaturday, Date(2022, 1, 1), "2022SatW1"},
    {PeriodType::kWeeklySaturday, Date(2023, 12, 30), "2024SatW1"},
    {PeriodType::kWeeklySaturday, Date(2024, 12, 28), "2024SatW53"},
    {PeriodType::kWeeklySunday, Date(2019, 12, 29), "2020SunW1"},
    {PeriodType::kWeeklySunday, Date(2020, 12, 27), "2020SunW53"},
    {PeriodType::kWeeklySunday, Date(2023, 1, 1), "2023SunW1"},
    {PeriodType::kWeeklySunday, Date(2024, 12, 29), "2025SunW1"},
    {PeriodType::kWeeklySunday, Date(2025, 12, 28), "2025SunW53"},
    // Bi-weeks start on the Monday of an odd ISO week; number = week / 2 + 1.
    {PeriodType::kBiWeekly, Date(2024, 1, 1), "2024BiW1"},
    {PeriodType::kBiWeekly, Date(2024, 1, 15), "2024BiW2"},
    {PeriodType::kBiWeekly, Date(2024, 12, 16), "2024BiW26"},
    {PeriodType::kBiWeekly, Date(2024, 12, 30), "2025BiW1"},
    {PeriodType::kBiWeekly, Date(2020, 12, 14), "2020BiW26"},
    {PeriodType::kBiWeekly, Date(2020, 12, 28), "2020BiW27"},
    {PeriodType::kBiWeekly, Date(2021, 1, 4), "2021BiW1"},
    {PeriodType::kMonthly, Date(2024, 1, 1), "202401"},
    {PeriodType::kMonthly, Date(2024, 12, 1), "202412"},
    {PeriodType::kBiMonthly, Date(2024, 1, 1), "202401B"},
    {PeriodType::kBiMonthly, Date(2024, 3, 1), "202402B"},
    {PeriodType::kBiMonthly, Date(2024, 11, 1), "202406B"},
    {PeriodType::kQuarterly, Date(2024, 1, 1), "2024Q1"},
    {PeriodType::kQuarterly, Date(2024, 10, 1), "2024Q4"},
    {PeriodType::kQuarterlyNov, Date(2023, 11, 1), "2024NovQ1"},
    {PeriodType::kQuarterlyNov, Date(2024, 2, 1), "2024NovQ2"},
    {PeriodType::kQuarterlyNov, Date(2024, 5, 1), "2024NovQ3"},
    {PeriodType::kQuarterlyNov, Date(2024, 8, 1), "2024NovQ4"},
    {PeriodType::kQuarterlyNov, Date(2024, 11, 1), "2025NovQ1"},
    {PeriodType::kSixMonthly, Date(2024, 1, 1), "2024S1"},
    {PeriodType::kSixMonthly, Date(2024, 7, 1), "2024S2"},
    {PeriodType::kSixMonthlyApril, Date(2024, 4, 1), "2024AprilS1"},
    {PeriodType::kSixMonthlyApril, Date(2024, 10, 1), "2024AprilS2"},
    {PeriodType::kSixMonthlyNov, Date(2023, 11, 1), "2024NovS1"},
    {PeriodType::kSixMonthlyNov, Date(2024, 5, 1), "2024NovS2"},
    {PeriodType::kYearly, Date(2024, 1, 1), "2024"},
    {PeriodType::kFinancialApril, Date(2024, 4, 1), "2024April"},
    {PeriodType::kFinancialJuly, Date(2024, 7, 1), "2024July"},
    {PeriodType::kFinancialSep, Date(2024, 9, 1), "2024Sep"},
    {PeriodType::kFinancialOct, Date(2024, 10, 1), "2024Oct"},
    {PeriodType::kFinancialNov, Date(2023, 11, 1), "2024Nov"},
};

TEST(FormatIsoPeriodTest, MatchesDhis2GoldenIds) {
  for (const GoldenId& golden : kGoldenIds) {
    EXPECT_EQ(FormatIsoPeriod(golden.type, golden.start), golden.id)
        << PeriodTypeName(golden.type) << " " << FormatDate(golden.start);
  }
}

TEST(ParseIsoPeriodTest, ParsesGoldenIdsToTheirStartDates) {
  for (const GoldenId& golden : kGoldenIds) {
    absl::StatusOr<Period> period = ParseIsoPeriod(golden.id);
    ASSERT_TRUE(period.ok()) << golden.id << ": " << period.status();
    EXPECT_EQ(period->type, golden.type) << golden.id;
    EXPECT_EQ(FormatDate(period->start), FormatDate(golden.start)) << golden.id;
  }
}

// DHIS2 computes the id of createPeriod(startdate), which first moves the date
// to the start of its period.
TEST(FormatIsoPeriodTest, UsesThePeriodContainingAnUnalignedStart) {
  const GoldenId cases[] = {
      {PeriodType::kWeekly, Date(2024, 1, 3), "2024W1"},
      {PeriodType::kWeekly, Date(2021, 1, 3), "2020W53"},
      {PeriodType::kWeeklySunday, Date(2024, 1, 6), "2024SunW1"},
      {PeriodType::kBiWeekly, Date(2024, 1, 8), "2024BiW1"},
      {PeriodType::kBiWeekly, Date(2021, 1, 10), "2021BiW1"},
      {PeriodType::kMonthly, Date(2024, 1, 31), "202401"},
      {PeriodType::kBiMonthly, Date(2024, 12, 31), "202406B"},
      {PeriodType::kQuarterly, Date(2024, 6, 30), "2024Q2"},
      {PeriodType::kQuarterlyNov, Date(2024, 1, 15), "2024NovQ1"},
      {PeriodType::kQuarterlyNov, Date(2024, 12, 15), "2025NovQ1"},
      {PeriodType::kSixMonthlyApril, Date(2024, 3, 31), "2023AprilS2"},
      {PeriodType::kSixMonthlyNov, Date(2024, 4, 30), "2024NovS1"},
      {PeriodType::kYearly, Date(2024, 12, 31), "2024"},
      {PeriodType::kFinancialApril, Date(2024, 2, 15), "2023April"},
      {PeriodType::kFinancialApril, Date(2024, 4, 2), "2024April"},
      {PeriodType::kFinancialJuly, Date(2024, 6, 30), "2023July"},
      {PeriodType::kFinancialSep, Date(2024, 8, 31), "2023Sep"},
      {PeriodType::kFinancialOct, Date(2024, 12, 1), "2024Oct"},
      {PeriodType::kFinancialNov, Date(2024, 3, 1), "2024Nov"},
      {PeriodType::kFinancialNov, Date(2024, 11, 30), "2025Nov"},
  };
  for (const GoldenId& c : cases) {
    EXPECT_EQ(FormatIsoPeriod(c.type, c.start), c.id)
        << PeriodTypeName(c.type) << " " << FormatDate(c.start);
  }
}

TEST(FormatIsoPeriodTest, PrintsYearsLikeJavaPercentD) {
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kDaily, Date(999, 1, 2)), "9990102");
  EXPECT_EQ(FormatIsoPeriod(PeriodType::kYearly, Date(12345, 6, 7)), "12345");
}

TEST(CreatePeriodTest, ComputesStartAndInclusiveEnd) {
  struct Case {
    PeriodType type;
    sys_days date;
    sys_days start;
    sys_days end;
  };
  const Case cases[] = {
      {PeriodType::kDaily, Date(2024, 2, 29), Date(2024, 2, 29), Date(2024, 2, 29)},
      {PeriodType::kWeekly, Date(2024, 12, 31), Date(2024, 12, 30), Date(2025, 1, 5)},
      {PeriodType::kWeeklyWednesday, Date(2024, 1, 2), Date(2023, 12, 27), Date(2024, 1, 2)},
      {PeriodType::kWeeklySunday, Date(2024, 1, 6), Date(2023, 12, 31), Date(2024, 1, 6)},
      {PeriodType::kBiWeekly, Date(2024, 1, 14), Date(2024, 1, 1), Date(2024, 1, 14)},
      {PeriodType::kBiWeekly, Date(2020, 12, 31), Date(2020, 12, 28), Date(2021, 1, 10)},
      {PeriodType::kBiWeekly, Date(2021, 1, 6), Date(2021, 1, 4), Date(2021, 1, 17)},
      {PeriodType::kMonthly, Date(2024, 2, 10), Date(2024, 2, 1), Date(2024, 2, 29)},
      {PeriodType::kMonthly, Date(2023, 2, 10), Date(2023, 2, 1), Date(2023, 2, 28)},
      {PeriodType::kBiMonthly, Date(2024, 12, 1), Date(2024, 11, 1), Date(2024, 12, 31)},
      {PeriodType::kQuarterly, Date(2024, 5, 5), Date(2024, 4, 1), Date(2024, 6, 30)},
      {PeriodType::kQuarterlyNov, Date(2024, 1, 31), Date(2023, 11, 1), Date(2024, 1, 31)},
      {PeriodType::kQuarterlyNov, Date(2024, 4, 30), Date(2024, 2, 1), Date(2024, 4, 30)},
      {PeriodType::kSixMonthly, Date(2024, 7, 1), Date(2024, 7, 1), Date(2024, 12, 31)},
      {PeriodType::kSixMonthlyApril, Date(2025, 1, 1), Date(2024, 10, 1), Date(2025, 3, 31)},
      {PeriodType::kSixMonthlyNov, Date(2024, 2, 29), Date(2023, 11, 1), Date(2024, 4, 30)},
      {PeriodType::kSixMonthlyNov, Date(2024, 10, 31), Date(2024, 5, 1), Date(2024, 10, 31)},
      {PeriodType::kYearly, Date(2024, 6, 1), Date(2024, 1, 1), Date(2024, 12, 31)},
      {PeriodType::kFinancialApril, Date(2024, 3, 31), Date(2023, 4, 1), Date(2024, 3, 31)},
      {PeriodType::kFinancialJuly, Date(2024, 7, 1), Date(2024, 7, 1), Date(2025, 6, 30)},
      {PeriodType::kFinancialSep, Date(2024, 1, 1), Date(2023, 9, 1), Date(2024, 8, 31)},
      {PeriodType::kFinancialOct, Date(2024, 10, 1), Date(2024, 10, 1), Date(2025, 9, 30)},
      {PeriodType::kFinancialNov, Date(2024, 10, 31), Date(2023, 11, 1), Date(2024, 10, 31)},
  };
  for (const Case& c : cases) {
    const Period period = CreatePeriod(c.type, c.date);
    EXPECT_EQ(period.type, c.type);
    EXPECT_EQ(FormatDate(period.start), FormatDate(c.start))
        << PeriodTypeName(c.type) << " " << FormatDate(c.date);
    EXPECT_EQ(FormatDate(period.end), FormatDate(c.end))
        << PeriodTypeName(c.type) << " " << FormatDate(c.date);
  }
}

TEST(ParseIsoPeriodTest, ParsesEveryFormWithDates) {
  struct Case {
    std::string_view iso;
    PeriodType type;
    sys_days start;
    sys_days end;
  };
  const Case cases[] = {
      {"20240229", PeriodType::kDaily, Date(2024, 2, 29), Date(2024, 2, 29)},
      {"2024-02-29", PeriodType::kDaily, Date(2024, 2, 29), Date(2024, 2, 29)},
      {"2024W1", PeriodType::kWeekly, Date(2024, 1, 1), Date(2024, 1, 7)},
      {"2024W05", PeriodType::kWeekly, Date(2024, 1, 29), Date(2024, 2, 4)},
      {"2020W53", PeriodType::kWeekly, Date(2020, 12, 28), Date(2021, 1, 3)},
      {"2026W53", PeriodType::kWeekly, Date(2026, 12, 28), Date(2027, 1, 3)},
      {"2022WedW53", PeriodType::kWeeklyWednesday, Date(2022, 12, 28), Date(2023, 1, 3)},
      {"2021ThuW1", PeriodType::kWeeklyThursday, Date(2020, 12, 31), Date(2021, 1, 6)},
      {"2024SatW53", PeriodType::kWeeklySaturday, Date(2024, 12, 28), Date(2025, 1, 3)},
      {"2025SunW53", PeriodType::kWeeklySunday, Date(2025, 12, 28), Date(2026, 1, 3)},
      {"2024BiW1", PeriodType::kBiWeekly, Date(2024, 1, 1), Date(2024, 1, 14)},
      {"2024BiW01", PeriodType::kBiWeekly, Date(2024, 1, 1), Date(2024, 1, 14)},
      {"2024BiW26", PeriodType::kBiWeekly, Date(2024, 12, 16), Date(2024, 12, 29)},
      {"2020BiW27", PeriodType::kBiWeekly, Date(2020, 12, 28), Date(2021, 1, 10)},
      {"202402", PeriodType::kMonthly, Date(2024, 2, 1), Date(2024, 2, 29)},
      {"2024-02", PeriodType::kMonthly, Date(2024, 2, 1), Date(2024, 2, 29)},
      {"202406B", PeriodType::kBiMonthly, Date(2024, 11, 1), Date(2024, 12, 31)},
      {"2024Q3", PeriodType::kQuarterly, Date(2024, 7, 1), Date(2024, 9, 30)},
      {"2024NovQ1", PeriodType::kQuarterlyNov, Date(2023, 11, 1), Date(2024, 1, 31)},
      {"2024NovQ4", PeriodType::kQuarterlyNov, Date(2024, 8, 1), Date(2024, 10, 31)},
      {"2024S2", PeriodType::kSixMonthly, Date(2024, 7, 1), Date(2024, 12, 31)},
      {"2024AprilS2", PeriodType::kSixMonthlyApril, Date(2024, 10, 1), Date(2025, 3, 31)},
      {"2024NovS1", PeriodType::kSixMonthlyNov, Date(2023, 11, 1), Date(2024, 4, 30)},
      {"2024NovS2", PeriodType::kSixMonthlyNov, Date(2024, 5, 1), Date(2024, 10, 31)},
      {"2024", PeriodType::kYearly, Date(2024, 1, 1), Date(2024, 12, 31)},
      {"2024April", PeriodType::kFinancialApril, Date(2024, 4, 1), Date(2025, 3, 31)},
      {"2024July", PeriodType::kFinancialJuly, Date(2024, 7, 1), Date(2025, 6, 30)},
      {"2024Sep", PeriodType::kFinancialSep, Date(2024, 9, 1), Date(2025, 8, 31)},
      {"2024Oct", PeriodType::kFinancialOct, Date(2024, 10, 1), Date(2025, 9, 30)},
      {"2024Nov", PeriodType::kFinancialNov, Date(2023, 11, 1), Date(2024, 10, 31)},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Period> period = ParseIsoPeriod(c.iso);
    ASSERT_TRUE(period.ok()) << c.iso << ": " << period.status();
    EXPECT_EQ(period->type, c.type) << c.iso;
    EXPECT_EQ(FormatDate(period->start), FormatDate(c.start)) << c.iso;
    EXPECT_EQ(FormatDate(period->end), FormatDate(c.end)) << c.iso;
  }
}

TEST(ParseIsoPeriodTest, RejectsMalformedAndImpossiblePeriods) {
  const std::string_view invalid[] = {
      "",
      "2024X1",
      "24",
      "202",
      "abcd",
      " 2024",
      "2024 ",
      "2024W5 ",
      "2024-1",
      "2024-01-1",
      "2024/01",
      "2024-W05",
      "+2024",
      "20240",
      "2024001",
      // Weeks that do not exist.
      "2024W0",
      "2024W",
      "2024W00",
      "2024W123",
      "2024W53",
      "2024W54",
      "2021W53",
      "2020W54",
      "2024WedW53",
      "2021SunW53",
      "2026SunW53",
      "2023SatW53",
      "2024ThuW53",
      "2024BiW0",
      "2024BiW27",
      "2020BiW28",
      "2024BiW100",
      // Months and days that do not exist.
      "202400",
      "202413",
      "2024-00",
      "2024-13",
      "20240230",
      "20230229",
      "2024-02-30",
      "20241301",
      "20240100",
      "20240132",
      // Numbers out of range or in the wrong form.
      "202400B",
      "202407B",
      "20241B",
      "2024B",
      "2024Q0",
      "2024Q5",
      "2024Q",
      "2024Q01",
      "2024NovQ0",
      "2024NovQ5",
      "2024S0",
      "2024S3",
      "2024AprilS3",
      "2024NovS0",
      "2024NovS3",
      // Unknown suffixes.
      "2024Jan",
      "2024April1",
      "2024april",
      "2024Aug",
      "2024Feb",
      "2024FriW1",
      "2024w1",
      "2024q1",
      "2024BiMonthly",
  };
  for (std::string_view iso : invalid) {
    absl::StatusOr<Period> period = ParseIsoPeriod(iso);
    EXPECT_FALSE(period.ok()) << iso << " parsed as "
                              << (period.ok() ? FormatDate(period->start) : "");
    EXPECT_EQ(period.status().code(), absl::StatusCode::kInvalidArgument) << iso;
  }
}

// PostgreSQL has no year 0: a period with a day before 0001-01-01 (or after
// 9999-12-31) would fail in SQL; it is refused here instead.
TEST(ParseIsoPeriodTest, RejectsPeriodsOutsideYearsOneTo9999) {
  for (std::string_view iso : {"0000", "0000W1", "0000Q1", "000001", "00000101", "0000-01-01",
                               "0000BiW1", "0000April", "0001Nov", "0001NovQ1", "0001NovS1",
                               "0001SunW1", "0001SatW1", "9999W52", "9999BiW26", "9999Oct"}) {
    absl::StatusOr<Period> period = ParseIsoPeriod(iso);
    EXPECT_EQ(period.status().code(), absl::StatusCode::kInvalidArgument)
        << iso << " parsed as " << (period.ok() ? FormatDate(period->start) : "");
  }
  EXPECT_EQ(ParseIsoPeriod("0001Nov").status().message(),
            "\"0001Nov\" is not a valid ISO period: it runs from 0000-11-01 to 0001-10-31, and "
            "periods must lie within the years 1 to 9999");
  EXPECT_EQ(ParseIsoPeriod("9999W52").status().message(),
            "\"9999W52\" is not a valid ISO period: it runs from 9999-12-27 to 10000-01-02, and "
            "periods must lie within the years 1 to 9999");
  // The first and last periods that fit.
  for (std::string_view iso : {"0001", "0001W1", "0001BiW1", "00010101", "0001NovQ2", "0001April",
                               "9999", "9999W51", "9999Q4", "99991231", "9999NovS2", "9998Oct"}) {
    EXPECT_TRUE(ParseIsoPeriod(iso).ok()) << iso << ": " << ParseIsoPeriod(iso).status();
  }
}

TEST(ParseIsoPeriodTest, ErrorNamesTheValue) {
  EXPECT_EQ(ParseIsoPeriod("2024W54").status().message(), "\"2024W54\" is not a valid ISO period");
  EXPECT_EQ(ParseIsoPeriod(std::string_view("2024\n", 5)).status().message(),
            "\"2024\\n\" is not a valid ISO period");
}

// java.time's WeekFields computation (WeekFields.ComputedDayOfField,
// localizedWeekBasedYear and localizedWeekOfWeekBasedYear), ported literally
// as an oracle that is independent of the "week 1 holds January 4" rule the
// library uses.
struct JavaWeek {
  int year;
  int week;
};

int FloorMod(int a, int b) { return ((a % b) + b) % b; }

int DayOfYear(sys_days date) {
  const std::chrono::year_month_day ymd{date};
  return static_cast<int>((date - sys_days{ymd.year() / 1 / 1}).count()) + 1;
}

int YearLength(int year) { return std::chrono::year{year}.is_leap() ? 366 : 365; }

JavaWeek JavaWeekFields(sys_days date, weekday first_day) {
  constexpr int kMinimalDays = 4;
  const int dow = FloorMod(static_cast<int>(weekday{date}.iso_encoding()) -
                               static_cast<int>(first_day.iso_encoding()),
                           7) +
                  1;
  const int year = static_cast<int>(std::chrono::year_month_day{date}.year());
  const int doy = DayOfYear(date);
  const auto start_of_week_offset = [](int day, int dow) {
    const int week_start = FloorMod(day - dow, 7);
    return week_start + 1 > kMinimalDays ? 7 - week_start : -week_start;
  };
  const auto compute_week = [](int offset, int day) { return (7 + offset + (day - 1)) / 7; };
  const int offset = start_of_week_offset(doy, dow);
  const int week = compute_week(offset, doy);
  if (week == 0) return JavaWeekFields(date - days{doy}, first_day);
  const int new_year_week = compute_week(offset, YearLength(year) + kMinimalDays);
  if (week >= new_year_week) return {year + 1, week - new_year_week + 1};
  return {year, week};
}

TEST(FormatIsoPeriodTest, WeeksMatchJavaWeekFieldsEveryDay) {
  struct WeeklyType {
    PeriodType type;
    weekday first_day;
    std::string_view infix;
  };
  const WeeklyType weekly_types[] = {
      {PeriodType::kWeekly, std::chrono::Monday, "W"},
      {PeriodType::kWeeklyWednesday, std::chrono::Wednesday, "WedW"},
      {PeriodType::kWeeklyThursday, std::chrono::Thursday, "ThuW"},
      {PeriodType::kWeeklySaturday, std::chrono::Saturday, "SatW"},
      {PeriodType::kWeeklySunday, std::chrono::Sunday, "SunW"},
  };
  for (const WeeklyType& t : weekly_types) {
    for (sys_days day = Date(1990, 1, 1); day <= Date(2060, 12, 31); day += days{1}) {
      const sys_days start = day - (weekday{day} - t.first_day);
      const JavaWeek java = JavaWeekFields(start, t.first_day);
      const std::string expected =
          std::to_string(java.year) + std::string(t.infix) + std::to_string(java.week);
      ASSERT_EQ(FormatIsoPeriod(t.type, day), expected)
          << PeriodTypeName(t.type) << " " << FormatDate(day);
      if (t.type == PeriodType::kWeekly) {
        const JavaWeek bi = JavaWeekFields(start, std::chrono::Monday);
        if (bi.week % 2 == 1) {
          ASSERT_EQ(FormatIsoPeriod(PeriodType::kBiWeekly, start),
                    std::to_string(bi.year) + "BiW" + std::to_string(bi.week / 2 + 1))
              << FormatDate(start);
        }
      }
    }
  }
}

// For every type: the periods from the one containing 2000-01-01 through
// 2040, each starting the day after the previous one ends, have distinct ids;
// each id parses back to the same type, start and end; and every day of a
// period has the period's id.
class PeriodSequenceTest : public ::testing::TestWithParam<PeriodType> {};

TEST_P(PeriodSequenceTest, ConsecutivePeriodsHaveDistinctIdsThatParseBack) {
  const PeriodType type = GetParam();
  std::set<std::string> ids;
  Period period = CreatePeriod(type, Date(2000, 1, 1));
  while (period.start <= Date(2040, 12, 31)) {
    const std::string id = FormatIsoPeriod(type, period.start);
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;

    absl::StatusOr<Period> parsed = ParseIsoPeriod(id);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->type, type) << id;
    ASSERT_EQ(FormatDate(parsed->start), FormatDate(period.start)) << id;
    ASSERT_EQ(FormatDate(parsed->end), FormatDate(period.end)) << id;

    // A bi-week starting in ISO week 53 runs into the next ISO year, whose
    // first bi-week starts in ISO week 1 as well: DHIS2 gives that week's days
    // to the later bi-week, so the two overlap by a week.
    const bool overlaps_next_biweek = type == PeriodType::kBiWeekly &&
                                      JavaWeekFields(period.start, std::chrono::Monday).week == 53;
    const sys_days last_own_day = overlaps_next_biweek ? period.start + days{6} : period.end;
    for (sys_days day = period.start; day <= last_own_day; day += days{1}) {
      ASSERT_EQ(FormatIsoPeriod(type, day), id) << FormatDate(day);
    }

    const Period next = CreatePeriod(type, period.end + days{1});
    ASSERT_EQ(FormatDate(next.start), FormatDate(last_own_day + days{1})) << id;
    period = next;
  }
  EXPECT_GT(ids.size(), 40u);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, PeriodSequenceTest, ::testing::ValuesIn(kAllPeriodTypes),
                         [](const ::testing::TestParamInfo<PeriodType>& info) {
                           return std::string(PeriodTypeName(info.param));
                         });

}  // namespace
}  // namespace dvexport::dhis2
