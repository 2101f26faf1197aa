#include "service/encode/long_gmt_date.h"

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace dvexport::encode {
namespace {

constexpr int64_t kMicrosPerDay = int64_t{86'400} * 1'000'000;

std::string Format(int64_t micros) {
  char buffer[kMaxLongGmtDateLength + 8];
  std::memset(buffer, '#', sizeof(buffer));
  const size_t length = FormatLongGmtDate(micros, buffer);
  EXPECT_LE(length, kMaxLongGmtDateLength);
  EXPECT_EQ(buffer[length], '#') << "wrote past the returned length";
  return std::string(buffer, length);
}

TEST(LongGmtDateTest, FormatsEpoch) { EXPECT_EQ(Format(0), "1970-01-01T00:00:00.000+0000"); }

TEST(LongGmtDateTest, FormatsTypicalTimestampLikeDhis2) {
  EXPECT_EQ(Format(1704449472123456), "2024-01-05T10:11:12.123+0000");
}

TEST(LongGmtDateTest, TruncatesMicrosecondsToMilliseconds) {
  EXPECT_EQ(Format(123999), "1970-01-01T00:00:00.123+0000");
  EXPECT_EQ(Format(999), "1970-01-01T00:00:00.000+0000");
  EXPECT_EQ(Format(946684799999999), "1999-12-31T23:59:59.999+0000");
}

TEST(LongGmtDateTest, FloorsTimesBeforeEpoch) {
  EXPECT_EQ(Format(-1), "1969-12-31T23:59:59.999+0000");
  EXPECT_EQ(Format(-1000), "1969-12-31T23:59:59.999+0000");
  EXPECT_EQ(Format(-1001), "1969-12-31T23:59:59.998+0000");
  EXPECT_EQ(Format(-kMicrosPerDay), "1969-12-31T00:00:00.000+0000");
  EXPECT_EQ(Format(-14182940000000), "1969-07-20T20:17:40.000+0000");
}

TEST(LongGmtDateTest, FormatsLeapDays) {
  EXPECT_EQ(Format(1709210096789000), "2024-02-29T12:34:56.789+0000");
  EXPECT_EQ(Format(951782400000000), "2000-02-29T00:00:00.000+0000");
  EXPECT_EQ(Format(-2203891200000000 - 1), "1900-02-28T23:59:59.999+0000");  // 1900 not leap.
}

TEST(LongGmtDateTest, FormatsFourDigitYearLimits) {
  EXPECT_EQ(Format(253402300799999999), "9999-12-31T23:59:59.999+0000");
  EXPECT_EQ(Format(-62135596800000000), "0001-01-01T00:00:00.000+0000");
  EXPECT_EQ(Format(-62135596800000000 - 366 * kMicrosPerDay), "0000-01-01T00:00:00.000+0000");
}

TEST(LongGmtDateTest, FormatsYearsOutsideFourDigitsLikeJoda) {
  EXPECT_EQ(Format(253402300800000000), "10000-01-01T00:00:00.000+0000");
  EXPECT_EQ(Format(-62135596800000000 - 366 * kMicrosPerDay - 1), "-0001-12-31T23:59:59.999+0000");
}

TEST(LongGmtDateTest, NeverExceedsMaximumLengthForExtremeValues) {
  EXPECT_EQ(Format(std::numeric_limits<int64_t>::max()), "294247-01-10T04:00:54.775+0000");
  EXPECT_EQ(Format(std::numeric_limits<int64_t>::min()), "-290308-12-21T19:59:05.224+0000");
  EXPECT_EQ(Format(std::numeric_limits<int64_t>::min()).size(), kMaxLongGmtDateLength);
}

// Walks the calendar one day at a time, the slow obvious way, and compares every day of the
// years 0 through 9999 (each at a different time of day).
TEST(LongGmtDateTest, MatchesDayByDayCalendarForYearsZeroToNineThousandNineHundredNinetyNine) {
  auto is_leap = [](int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; };
  auto days_in_month = [&](int64_t year, int month) {
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap(year) ? 29 : kDays[month - 1];
  };
  // Returns false (after reporting) on the first mismatch.
  auto check = [&](int64_t days, int64_t year, int month, int day) {
    const int64_t millis_of_day = (days * 7919 % 86'400'000 + 86'400'000) % 86'400'000;
    const int64_t micros = days * kMicrosPerDay + millis_of_day * 1000 + 999;
    // "yyyy-MM-ddTHH:mm:ss.SSS+0000", filled in digit by digit (snprintf would dominate the run).
    char expected[] = "0000-00-00T00:00:00.000+0000";
    auto put = [&](size_t offset, int64_t number, int width) {
      for (int i = width - 1; i >= 0; --i, number /= 10) expected[offset + i] = '0' + number % 10;
    };
    put(0, year, 4);
    put(5, month, 2);
    put(8, day, 2);
    put(11, millis_of_day / 3'600'000, 2);
    put(14, millis_of_day / 60'000 % 60, 2);
    put(17, millis_of_day / 1000 % 60, 2);
    put(20, millis_of_day % 1000, 3);
    const size_t expected_length = sizeof(expected) - 1;
    char actual[kMaxLongGmtDateLength];
    const size_t actual_length = FormatLongGmtDate(micros, actual);
    if (actual_length == expected_length && std::memcmp(actual, expected, actual_length) == 0) {
      return true;
    }
    ADD_FAILURE() << "days since epoch " << days << ": got "
                  << std::string_view(actual, actual_length) << ", want " << expected;
    return false;
  };

  int64_t year = 1970;
  int month = 1;
  int day = 1;
  for (int64_t days = 0; year <= 9999; ++days) {
    if (!check(days, year, month, day)) return;
    if (++day > days_in_month(year, month)) {
      day = 1;
      if (++month > 12) {
        month = 1;
        ++year;
      }
    }
  }
  year = 1970;
  month = 1;
  day = 1;
  for (int64_t days = 0; year >= 0; --days) {
    if (!check(days, year, month, day)) return;
    if (--day < 1) {
      if (--month < 1) {
        month = 12;
        --year;
      }
      day = days_in_month(year, month);
    }
  }
}

TEST(LongGmtDateFormatterTest, MatchesFormatLongGmtDateIncludingCacheCollisionsAndRangeEdges) {
  const int64_t year_zero = -62135596800000000 - 366 * kMicrosPerDay;  // 0000-01-01
  const int64_t year_ten_thousand = 253402300800000000;                // 10000-01-01
  std::vector<int64_t> inputs = {0,
                                 -1,
                                 year_zero,
                                 year_zero - 1,
                                 year_ten_thousand - 1,
                                 year_ten_thousand,
                                 std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::max()};
  // Days 1024 apart share a cache slot; alternate between them.
  for (int64_t k = 0; k < 50; ++k) {
    inputs.push_back(1704449472123456 + (k % 2) * 1024 * kMicrosPerDay + k * 1000);
    inputs.push_back(-1704449472123456 - (k % 3) * 2048 * kMicrosPerDay - k);
  }
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100'000; ++i) {
    inputs.push_back(
        i % 2 == 0 ? static_cast<int64_t>(rng())
                   : year_zero + static_cast<int64_t>(rng() % (year_ten_thousand - year_zero)));
  }
  LongGmtDateFormatter formatter;
  for (int64_t micros : inputs) {
    char cached[kMaxLongGmtDateLength];
    const size_t length = formatter.Format(micros, cached);
    ASSERT_EQ(std::string_view(cached, length), Format(micros)) << micros;
  }
}

}  // namespace
}  // namespace dvexport::encode
