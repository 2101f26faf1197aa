#include "common/civil_date.h"

#include <chrono>
#include <cstdint>

#include "gtest/gtest.h"

namespace dvexport::common {
namespace {

constexpr int64_t kDaysPer400Years = 146'097;

void ExpectChronoDate(int64_t days) {
  const std::chrono::year_month_day expected{std::chrono::sys_days{std::chrono::days{days}}};
  const CivilDate date = CivilFromDays(days);
  EXPECT_EQ(date.year, static_cast<int>(expected.year())) << days;
  EXPECT_EQ(date.month, static_cast<unsigned>(expected.month())) << days;
  EXPECT_EQ(date.day, static_cast<unsigned>(expected.day())) << days;
}

TEST(CivilDateTest, KnownDates) {
  const CivilDate epoch = CivilFromDays(0);
  EXPECT_EQ(epoch.year, 1970);
  EXPECT_EQ(epoch.month, 1u);
  EXPECT_EQ(epoch.day, 1u);
  const CivilDate before = CivilFromDays(-1);
  EXPECT_EQ(before.year, 1969);
  EXPECT_EQ(before.month, 12u);
  EXPECT_EQ(before.day, 31u);
  const CivilDate leap_day = CivilFromDays(11'016);  // 2000-02-29
  EXPECT_EQ(leap_day.year, 2000);
  EXPECT_EQ(leap_day.month, 2u);
  EXPECT_EQ(leap_day.day, 29u);
  const CivilDate year_zero = CivilFromDays(-719'528);  // 0000-01-01
  EXPECT_EQ(year_zero.year, 0);
  EXPECT_EQ(year_zero.month, 1u);
  EXPECT_EQ(year_zero.day, 1u);
}

TEST(CivilDateTest, EqualsStdChronoOverTwoThousandYears) {
  // Every day from 0001-01-01 through 2100-12-31, then a stride through chrono's whole range.
  for (int64_t days = -719'162; days <= 47'846; ++days) ExpectChronoDate(days);
  for (int64_t days = -11'000'000; days <= 11'000'000; days += 997) ExpectChronoDate(days);
}

TEST(CivilDateTest, RepeatsEveryFourHundredYearsUpToTheLimits) {
  // The Gregorian calendar repeats every 146,097 days; chrono checked the days near 1970 above,
  // so this carries them to the ends of the accepted range.
  for (const int64_t days : {int64_t{0}, int64_t{59}, int64_t{11'016}, int64_t{-1}}) {
    const CivilDate base = CivilFromDays(days);
    for (const int64_t direction : {-1, 1}) {
      const int64_t cycles = (kMaxCivilDays - 100) / kDaysPer400Years * direction;
      const CivilDate far = CivilFromDays(days + cycles * kDaysPer400Years);
      EXPECT_EQ(far.year, base.year + 400 * cycles) << days;
      EXPECT_EQ(far.month, base.month) << days;
      EXPECT_EQ(far.day, base.day) << days;
    }
  }
  const CivilDate last = CivilFromDays(kMaxCivilDays);
  const CivilDate first = CivilFromDays(-kMaxCivilDays);
  EXPECT_GT(last.year, 290'000);
  EXPECT_LT(first.year, -290'000);
}

}  // namespace
}  // namespace dvexport::common
