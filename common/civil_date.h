#ifndef DVEXPORT_COMMON_CIVIL_DATE_H_
#define DVEXPORT_COMMON_CIVIL_DATE_H_

#include <cstdint>

namespace dvexport::common {

// A date of the proleptic Gregorian calendar; years in astronomical numbering (0 is 1 BC).
struct CivilDate {
  int64_t year;
  uint32_t month;  // [1, 12]
  uint32_t day;    // [1, 31]
};

// The magnitude of the largest day count CivilFromDays takes: beyond the 106.8 million days
// either side of 1970 that int64 microseconds reach.
inline constexpr int64_t kMaxCivilDays = 110'000'000;

namespace civil_date_internal {

inline constexpr uint32_t kDaysPerEra = 146'097;  // 400 Gregorian years.

// Days from 0000-03-01, the origin of Hinnant's eras, to 1970-01-01.
inline constexpr uint32_t kEpochDaysSinceOrigin = 719'468;

// Counting days from an origin this many eras before 0000-03-01 keeps every day count in
// [-kMaxCivilDays, kMaxCivilDays] positive and below 2^32, so that the calendar arithmetic is
// unsigned 32-bit with no floor corrections.
inline constexpr uint32_t kOriginEraShift = 800;  // 320,000 years.
static_assert(int64_t{kOriginEraShift} * kDaysPerEra + kEpochDaysSinceOrigin > kMaxCivilDays);
static_assert(int64_t{kOriginEraShift} * kDaysPerEra + kEpochDaysSinceOrigin + kMaxCivilDays <
              (int64_t{1} << 32));

}  // namespace civil_date_internal

// The date "days" days after 1970-01-01 (before it when negative): Howard Hinnant's
// civil_from_days ("chrono-Compatible Low-Level Date Algorithms").
// REQUIRES: -kMaxCivilDays <= days <= kMaxCivilDays.
inline CivilDate CivilFromDays(int64_t days) {
  using namespace civil_date_internal;
  const auto shifted =
      static_cast<uint32_t>(days + kEpochDaysSinceOrigin + int64_t{kOriginEraShift} * kDaysPerEra);
  const uint32_t era = shifted / kDaysPerEra;
  const uint32_t doe = shifted - era * kDaysPerEra;                              // [0, 146096]
  const uint32_t yoe = (doe - doe / 1460 + doe / 36'524 - doe / 146'096) / 365;  // [0, 399]
  const uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                  // [0, 365]
  const uint32_t mp = (5 * doy + 2) / 153;                                       // [0, 11]
  const uint32_t day = doy - (153 * mp + 2) / 5 + 1;
  const uint32_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = (static_cast<int64_t>(era) - kOriginEraShift) * 400 + yoe + (month <= 2);
  return CivilDate{year, month, day};
}

// Days from 1970-01-01 to year-month-day of the proleptic Gregorian calendar (astronomical
// years: 1 BC is 0), negative before it: Howard Hinnant's days_from_civil.
// REQUIRES: 1 <= m <= 12, 1 <= d <= 31, |y| < 2^40.
[[gnu::always_inline]] inline int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_CIVIL_DATE_H_
