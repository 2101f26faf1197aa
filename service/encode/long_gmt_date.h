#ifndef DVEXPORT_SERVICE_ENCODE_LONG_GMT_DATE_H_
#define DVEXPORT_SERVICE_ENCODE_LONG_GMT_DATE_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "service/encode/data_value_row.h"
#include "service/encode/timestamp.h"

namespace dvexport::encode {

// Length of FormatLongGmtDate's output for years 0 through 9999.
inline constexpr size_t kLongGmtDateLength = 28;
static_assert(kLongGmtDateLength == 28, "FormatUsualTimestamp (timestamp.h) writes 28 bytes");

// Longest possible output of FormatLongGmtDate: a sign, a six-digit year (int64 microseconds
// reach about year +-294,000) and the 24 characters after the year.
inline constexpr size_t kMaxLongGmtDateLength = 31;

// Writes "micros" (microseconds since 1970-01-01T00:00:00 UTC) the way DHIS2's
// DateUtils.toLongGmtDate does, "yyyy-MM-ddTHH:mm:ss.SSS+0000", and returns the number of bytes
// written. Sub-millisecond digits are truncated towards the past (floor), so -1 becomes
// 1969-12-31T23:59:59.999+0000. Dates use the proleptic Gregorian calendar, as Joda's
// ISOChronology does.
//
// Years 0 through 9999 produce exactly kLongGmtDateLength bytes. Other years follow Joda's
// "yyyy": years after 9999 use as many digits as they need ("10000-01-01T..."), years before 0
// (astronomical numbering, 0 is 1 BC) are written as '-' and at least four digits
// ("-0001-12-31T..."). Never writes more than kMaxLongGmtDateLength bytes, for any int64.
//
// REQUIRES: "out" has room for kMaxLongGmtDateLength bytes.
size_t FormatLongGmtDate(int64_t micros, char* out);

// FormatLongGmtDate with a memory of recent days: a direct-mapped cache of the "yyyy-MM-dd" part
// of kCachedDays days (for years 0 through 9999), so that an export, whose values mostly come
// from a few hundred days, rarely pays for the calendar arithmetic. The output is identical to
// FormatLongGmtDate's. About 16 KiB; not thread-safe.
class LongGmtDateFormatter {
 public:
  LongGmtDateFormatter();

  // Same contract as FormatLongGmtDate.
  size_t Format(int64_t micros, char* out);

  // The timestamp in either form; a usual text is rearranged (FormatUsualTimestamp), not parsed.
  size_t Format(const Timestamp& timestamp, char* out) {
    return timestamp.usual_text.empty() ? Format(timestamp.micros, out)
                                        : FormatUsualTimestamp(timestamp.usual_text, out);
  }

 private:
  static constexpr size_t kCachedDays = 1024;
  static constexpr uint32_t kNoDay = 0xFFFFFFFF;

  struct CachedDay {
    uint32_t day;   // Days since 0000-01-01, or kNoDay.
    char date[12];  // "yyyy-MM-dd"
  };

  std::array<CachedDay, kCachedDays> cache_;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_LONG_GMT_DATE_H_
