// DHIS2 period types and ISO period identifiers (DHIS2 2.42, and 2.43's three new types and
// its parser, ParseIsoPeriod243; ISO 8601 calendar).
//
// DHIS2 2.42 stores a period as (periodtype.name, startdate, enddate) and computes
// its identifier on export as
//   PeriodType.getPeriodTypeByName(name).createPeriod(startdate).getIsoDate()
// This file reproduces that computation and its inverse, the ISO period parser.

#ifndef DVEXPORT_SERVICE_DHIS2_PERIOD_H_
#define DVEXPORT_SERVICE_DHIS2_PERIOD_H_

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dvexport::dhis2 {

// The 20 period types of DHIS2 2.42 (PeriodType.PERIOD_TYPES), in that order, then the three
// 2.43 added. TwoYearly exists in the schema but not in PERIOD_TYPES and has no ISO id.
enum class PeriodType {
  kDaily,
  kWeekly,
  kWeeklyWednesday,
  kWeeklyThursday,
  kWeeklySaturday,
  kWeeklySunday,
  kBiWeekly,
  kMonthly,
  kBiMonthly,
  kQuarterly,
  kQuarterlyNov,
  kSixMonthly,
  kSixMonthlyApril,
  kSixMonthlyNov,
  kYearly,
  kFinancialApril,
  kFinancialJuly,
  kFinancialSep,
  kFinancialOct,
  kFinancialNov,
  // DHIS2 2.43 only: weeks starting on Friday (2024FriW6), financial years starting on
  // February 1 (2024Feb) and on August 1 (2024Aug).
  kWeeklyFriday,
  kFinancialFeb,
  kFinancialAug,
};

inline constexpr std::array<PeriodType, 20> kAllPeriodTypes = {
    PeriodType::kDaily,           PeriodType::kWeekly,         PeriodType::kWeeklyWednesday,
    PeriodType::kWeeklyThursday,  PeriodType::kWeeklySaturday, PeriodType::kWeeklySunday,
    PeriodType::kBiWeekly,        PeriodType::kMonthly,        PeriodType::kBiMonthly,
    PeriodType::kQuarterly,       PeriodType::kQuarterlyNov,   PeriodType::kSixMonthly,
    PeriodType::kSixMonthlyApril, PeriodType::kSixMonthlyNov,  PeriodType::kYearly,
    PeriodType::kFinancialApril,  PeriodType::kFinancialJuly,  PeriodType::kFinancialSep,
    PeriodType::kFinancialOct,    PeriodType::kFinancialNov,
};

// The 23 period types of DHIS2 2.43, in its PeriodType.PERIOD_TYPES order.
inline constexpr std::array<PeriodType, 23> kAllPeriodTypes243 = {
    PeriodType::kDaily,          PeriodType::kWeekly,          PeriodType::kWeeklyWednesday,
    PeriodType::kWeeklyThursday, PeriodType::kWeeklyFriday,    PeriodType::kWeeklySaturday,
    PeriodType::kWeeklySunday,   PeriodType::kBiWeekly,        PeriodType::kMonthly,
    PeriodType::kBiMonthly,      PeriodType::kQuarterly,       PeriodType::kQuarterlyNov,
    PeriodType::kSixMonthly,     PeriodType::kSixMonthlyApril, PeriodType::kSixMonthlyNov,
    PeriodType::kYearly,         PeriodType::kFinancialFeb,    PeriodType::kFinancialApril,
    PeriodType::kFinancialJuly,  PeriodType::kFinancialAug,    PeriodType::kFinancialSep,
    PeriodType::kFinancialOct,   PeriodType::kFinancialNov,
};

// Returns the type whose periodtype.name is exactly `name` ("Daily", "Weekly",
// "WeeklyWednesday", ..., "FinancialNov"; case-sensitive), or nullopt for any
// other name, including "TwoYearly".
std::optional<PeriodType> PeriodTypeFromName(std::string_view name);

// The same for DHIS2 2.`dhis2`: from 43 on, "WeeklyFriday", "FinancialFeb" and "FinancialAug"
// too; before, as PeriodTypeFromName(name).
std::optional<PeriodType> PeriodTypeFromName(std::string_view name, int dhis2);

// Returns the periodtype.name of `type`, e.g. "QuarterlyNov". The view refers
// to static storage.
std::string_view PeriodTypeName(PeriodType type);

// A period as DHIS2 stores it. Both dates are inclusive (period.startdate,
// period.enddate).
struct Period {
  PeriodType type;
  std::chrono::sys_days start;
  std::chrono::sys_days end;

  friend bool operator==(const Period&, const Period&) = default;
};

// Returns the period of `type` in which DHIS2's createPeriod places `date`:
// the day, the week starting on the type's first weekday, the month, ... or
// the financial year containing `date`. BiWeekly periods start on the Monday
// of an odd ISO week; in a year with 53 ISO weeks the bi-week starting in week
// 53 overlaps the next year's first bi-week, and a date in ISO week 1 belongs
// to the latter.
Period CreatePeriod(PeriodType type, std::chrono::sys_days date);

// Parses an ISO period identifier into its type and dates. Accepts every form
// FormatIsoPeriod produces (4-digit years only) and the alternatives DHIS2's
// parser accepts:
//   Daily          yyyyMMdd, yyyy-MM-dd
//   Weekly         yyyyWn, and yyyyWedWn, yyyyThuWn, yyyySatWn, yyyySunWn
//                  (n is 1 or 2 digits, "05" is week 5)
//   BiWeekly       yyyyBiWn (n is 1 or 2 digits; starts on ISO week 2n-1)
//   Monthly        yyyyMM, yyyy-MM
//   BiMonthly      yyyyMMB (MM is 01 to 06)
//   Quarterly      yyyyQn, QuarterlyNov yyyyNovQn (NovQ1 starts in November
//                  of yyyy-1)
//   SixMonthly     yyyySn, yyyyAprilSn, yyyyNovSn (NovS1 starts in November of
//                  yyyy-1)
//   Yearly         yyyy
//   Financial      yyyyApril, yyyyJuly, yyyySep, yyyyOct (start in that month
//                  of yyyy), yyyyNov (starts on yyyy-1 November 1)
// Returns InvalidArgument naming the value if it has none of these forms or
// names a period that does not exist (2024W54, 202413, 20240230, 2024BiW28),
// or one with a day outside the years kMinYear to kMaxYear (dates.h): 0000,
// 0001Nov and 0001NovQ1 (which start in year 0), 0001SunW1 (starts on
// 0000-12-31), 9999W52 (ends on 10000-01-02).
// A week number is checked against the weeks of the type's own week-based year,
// so 2025SunW53 is accepted and 2026SunW53 rejected. DHIS2 checks every weekly
// type against ISO weeks instead, which rejects some ids it produces
// (2025SunW53) and shifts others into the next year (2026SunW53).
absl::StatusOr<Period> ParseIsoPeriod(std::string_view iso);

// Returns DHIS2 2.42's ISO identifier of CreatePeriod(type, start), i.e.
// createPeriod(start).getIsoDate(); `start` is normally the period's start
// date. Years are printed without padding, as Java's "%d".
//   Daily 20240105; Weekly 2024W5 (week-based year and week of
//   WeekFields(firstDay, 4): week 1 is the first week with at least 4 days in
//   the year, so 2024-12-30 gives 2025W1); WeeklyWednesday 2024WedW1, ...;
//   BiWeekly 2024BiW1 (ISO week-based year, ISO week / 2 + 1); Monthly 202401;
//   BiMonthly 202406B; Quarterly 2024Q1; QuarterlyNov 2024NovQ1 for
//   2023-11-01; SixMonthly 2024S1; SixMonthlyApril 2024AprilS1; SixMonthlyNov
//   2024NovS1 for 2023-11-01; Yearly 2024; FinancialApril 2024April, ...;
//   FinancialNov 2024Nov for 2023-11-01. DHIS2 2.43's types: WeeklyFriday 2024FriW6
//   (WeekFields(FRIDAY, 4)), FinancialFeb 2024Feb, FinancialAug 2024Aug.
// Every id of a 4-digit year fits std::string's small-string buffer, so the
// call does not allocate.
std::string FormatIsoPeriod(PeriodType type, std::chrono::sys_days start);

// DHIS2 2.43's Period.of: Period.Input.of's forms by length (4 to 11 characters, counted in
// UTF-16 units as Java counts them), then DateUnitPeriodTypeParser's interval:
//   4 yyyy; 6 yyyyMM, yyyyWn, yyyyQn, yyyySn; 7 yyyy-MM, yyyyWnn, yyyyMMB, yyyyFeb, yyyyAug,
//   yyyySep, yyyyOct, yyyyNov; 8 yyyyMMdd, yyyyBiWn, yyyyJuly; 9 yyyyApril, yyyyNovQn,
//   yyyyBiWnn, yyyy{Wed,Thu,Fri,Sat,Sun}Wn, yyyyNovSn; 10 yyyy-MM-dd, yyyy{Wed,...,Sun}Wnn;
//   11 yyyyAprilSn.
// Weeks of the weekly types count in the type's own week-based year (WeekFields(first day, 4)):
// 2024FriW6 starts on 2024-02-02; week 0, 54 and 53 of a 52-week year, and any weekly id of a
// year below 1000 (DHIS2's check compares "%d" of the year with the id's first 4 characters),
// fail. BiWeekly accepts n up to half the weeks of the ISO week-based year that January 1 of
// yyyy belongs to (Joda's weeksInYear), so 2021BiW27 is 2022BiW1 (2022-01-03).
// Returns the period with its canonical start (FormatIsoPeriod of it is DHIS2's getIsoDate, so
// 2024-01 and 202401, 2024W01 and 2024W1 are one period), or InvalidArgument whose message is
// DHIS2's exact text:
//   Period must be have between 4 and 11 characters but got: `x`
//   Invalid Period `x`, expected a digit at position i but found: `c`
//   Invalid Period `x`, expected a dash at position 7 but found: `c`
//   Invalid Period `x`, expected one of [W, Q, S] at index 4 for a ISO period of length n but
//   found: `rest`
//   Invalid Period `x`, failed to create date interval
// Periods with days outside the years kMinYear to kMaxYear (0000, 0001Nov) are returned as DHIS2
// returns them; the caller decides (PostgreSQL has no year 0).
absl::StatusOr<Period> ParseIsoPeriod243(std::string_view iso);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_PERIOD_H_
