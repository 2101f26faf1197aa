// Calendar dates in request parameters (DHIS2 startDate, endDate).

#ifndef DVEXPORT_SERVICE_DHIS2_DATES_H_
#define DVEXPORT_SERVICE_DHIS2_DATES_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dvexport::dhis2 {

// Parses a date given in one of the forms DHIS2's DateUtils.parseDate accepts:
//   yyyy-MM-dd   2024-01-31
//   yyyyMMdd     20240131
//   yyyy-MM      2024-01     (the first day of the month)
//   yyyy         2024        (January 1)
//   a date-time  yyyy-MM-ddTHH:mm:ss[.f...][zone], 'T' or a space before the
//                time, 1 to 9 fraction digits, zone Z, +hh, +hhmm or +hh:mm
//                (or -); e.g. 2024-01-31T23:59:59.999+02:00
// Years have exactly 4 digits, from kMinYear (0000 is refused: PostgreSQL has
// no year 0) to kMaxYear. Fields must form a real date (no 2023-02-29) and
// a real time of day. Of a date-time only the date as written is used: the
// time and offset are checked, then ignored (DHIS2 would convert it to the
// server's time zone first). Returns InvalidArgument naming the value otherwise:
// "2024-13-01" is not a valid date (yyyy-MM-dd).
absl::StatusOr<std::chrono::sys_days> ParseDate(std::string_view text);

// The years a date or a period given in a request may fall in.
inline constexpr int kMinYear = 1;
inline constexpr int kMaxYear = 9999;

// Parses the same forms as ParseDate into an instant (DHIS2 lastUpdated):
// microseconds since 1970-01-01T00:00:00 UTC. A date alone is its midnight; a
// date-time without a zone is taken as UTC (DHIS2 uses the JVM's zone, UTC on
// a usual server); a zone shifts the time to UTC. The fraction is truncated to
// milliseconds, as java.util.Date holds it. Same error as ParseDate.
absl::StatusOr<int64_t> ParseDateTimeMicros(std::string_view text);

// Returns `date` as yyyy-MM-dd, the year zero-padded to 4 digits (e.g.
// 0999-01-01; a negative year gets a leading '-').
std::string FormatDate(std::chrono::sys_days date);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_DATES_H_
