#include "service/dhis2/dates.h"

#include <chrono>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace dvexport::dhis2 {
namespace {

using std::chrono::days;
using std::chrono::sys_days;

sys_days Date(int y, unsigned m, unsigned d) {
  return sys_days{std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d}};
}

TEST(ParseDateTest, AcceptsDhis2DateForms) {
  struct Case {
    std::string_view text;
    sys_days date;
  };
  const Case cases[] = {
      {"2024-01-31", Date(2024, 1, 31)},
      {"20240131", Date(2024, 1, 31)},
      {"2024-02", Date(2024, 2, 1)},
      {"2024", Date(2024, 1, 1)},
      {"2024-02-29", Date(2024, 2, 29)},
      {"2000-02-29", Date(2000, 2, 29)},
      {"1970-01-01", Date(1970, 1, 1)},
      {"0001-01-01", Date(1, 1, 1)},
      {"2024-01-31T23:59:59", Date(2024, 1, 31)},
      {"2024-01-31T23:59:59.999", Date(2024, 1, 31)},
      {"2024-01-31T23:59:59.1", Date(2024, 1, 31)},
      {"2024-01-31T23:59:59.123456789Z", Date(2024, 1, 31)},
      {"2024-01-31T00:00:00Z", Date(2024, 1, 31)},
      {"2024-01-31T23:59:59+02:00", Date(2024, 1, 31)},
      {"2024-01-31T00:00:00-0530", Date(2024, 1, 31)},
      {"2024-01-31T10:11:12+02", Date(2024, 1, 31)},
      {"2024-01-31 10:11:12+0000", Date(2024, 1, 31)},
  };
  for (const Case& c : cases) {
    absl::StatusOr<sys_days> date = ParseDate(c.text);
    ASSERT_TRUE(date.ok()) << c.text << ": " << date.status();
    EXPECT_EQ(FormatDate(*date), FormatDate(c.date)) << c.text;
  }
}

TEST(ParseDateTest, RejectsMalformedAndImpossibleDates) {
  const std::string_view invalid[] = {
      "",
      "2024-13-01",
      "2024-00-10",
      "2024-01-32",
      "2024-01-00",
      "2023-02-29",
      "1900-02-29",
      "2024-04-31",
      "20241301",
      "20230229",
      "2024-13",
      "2024-00",
      "202401",
      "24-01-01",
      "2024/01/01",
      "2024-1-1",
      "2024-01-1",
      "24",
      "20245",
      "x2024",
      " 2024-01-31",
      "2024-01-31 ",
      "2024-01-31x",
      "2024-01-31T",
      "2024-01-31T23:59",
      "2024-01-31T24:00:00",
      "2024-01-31T23:60:00",
      "2024-01-31T23:59:60",
      "2024-01-31T23:59:59.",
      "2024-01-31T23:59:59.1234567890",
      "2024-01-31T23:59:59+25:00",
      "2024-01-31T23:59:59+02:60",
      "2024-01-31T23:59:59+2",
      "2024-01-31T23:59:59+02:",
      "2024-01-31T23:59:59X",
      "2024-01-31T23:59:59ZZ",
      "2024-01-31t23:59:59",
      "2024-01-31T2:59:59",
      "+2024-01-31",
      "2024-01-31T23:59:59 +02:00",
  };
  for (std::string_view text : invalid) {
    absl::StatusOr<sys_days> date = ParseDate(text);
    EXPECT_FALSE(date.ok()) << text << " parsed as " << (date.ok() ? FormatDate(*date) : "");
    EXPECT_EQ(date.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

// PostgreSQL has no year 0 ("date/time field value out of range").
TEST(ParseDateTest, RejectsYearZero) {
  for (std::string_view text :
       {"0000", "0000-01-01", "00001231", "0000-12", "0000-12-31T23:59:59"}) {
    EXPECT_EQ(ParseDate(text).status().message(),
              "\"" + std::string(text) + "\" is not a valid date: years run from 1 to 9999");
    EXPECT_EQ(ParseDateTimeMicros(text).status().code(), absl::StatusCode::kInvalidArgument)
        << text;
  }
  EXPECT_EQ(FormatDate(*ParseDate("0001-01-01")), "0001-01-01");
  EXPECT_EQ(FormatDate(*ParseDate("9999-12-31")), "9999-12-31");
}

TEST(ParseDateTest, ErrorNamesTheValue) {
  EXPECT_EQ(ParseDate("2024-13-01").status().message(),
            "\"2024-13-01\" is not a valid date (yyyy-MM-dd)");
}

TEST(ParseDateTimeMicrosTest, ReadsInstantsInUtc) {
  constexpr int64_t kDay = int64_t{86400} * 1000000;
  // 2024-03-01 is day 19783 since 1970-01-01.
  const int64_t midnight = 19783 * kDay;
  struct Case {
    const char* text;
    int64_t micros;
  } cases[] = {
      {"2024-03-01", midnight},
      {"20240301", midnight},
      {"2024-03", midnight},
      {"2024-03-01T10:00:00", midnight + int64_t{36000} * 1000000},
      {"2024-03-01 10:00:00Z", midnight + int64_t{36000} * 1000000},
      {"2024-03-01T10:00:00.1239", midnight + int64_t{36000} * 1000000 + 123000},
      {"2024-03-01T11:00:00.5+01:00", midnight + int64_t{36000} * 1000000 + 500000},
      {"2024-03-01T04:30:00-0530", midnight + int64_t{36000} * 1000000},
      {"2024-03-01T00:00:00+02", midnight - int64_t{7200} * 1000000},
      {"1969-12-31T23:59:59.999Z", -1000},
  };
  for (const Case& c : cases) {
    absl::StatusOr<int64_t> micros = ParseDateTimeMicros(c.text);
    ASSERT_TRUE(micros.ok()) << c.text << ": " << micros.status();
    EXPECT_EQ(*micros, c.micros) << c.text;
  }
  EXPECT_EQ(ParseDateTimeMicros("2024-03-01T24:00:00").status().message(),
            "\"2024-03-01T24:00:00\" is not a valid date (yyyy-MM-dd)");
}

TEST(FormatDateTest, WritesIsoCalendarDate) {
  EXPECT_EQ(FormatDate(Date(2024, 1, 5)), "2024-01-05");
  EXPECT_EQ(FormatDate(Date(2024, 12, 31)), "2024-12-31");
  EXPECT_EQ(FormatDate(Date(999, 3, 4)), "0999-03-04");
  EXPECT_EQ(FormatDate(sys_days{}), "1970-01-01");
}

TEST(FormatDateTest, ParseDateReadsItBack) {
  for (sys_days day = Date(1999, 12, 1); day <= Date(2041, 1, 31); day += days{1}) {
    absl::StatusOr<sys_days> parsed = ParseDate(FormatDate(day));
    ASSERT_TRUE(parsed.ok()) << FormatDate(day);
    ASSERT_EQ(*parsed, day) << FormatDate(day);
  }
}

}  // namespace
}  // namespace dvexport::dhis2
