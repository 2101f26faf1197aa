#include "service/encode/long_gmt_date.h"

#include <cstring>
#include <limits>

#include "common/civil_date.h"

namespace dvexport::encode {

namespace {

constexpr int64_t kMicrosPerDay = int64_t{86'400'000'000};

// Every day an int64 of microseconds reaches (about 106.8 million either side of 1970) is one
// common::CivilFromDays takes.
static_assert(std::numeric_limits<int64_t>::max() / kMicrosPerDay + 1 <= common::kMaxCivilDays);

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline char* WriteTwoDigits(uint32_t value, char* p) {
  std::memcpy(p, kDigitPairs + 2 * value, 2);
  return p + 2;
}

// Writes "year" with at least four digits, preceded by '-' when negative.
char* WriteYear(int64_t year, char* p) {
  if (year >= 0 && year <= 9999) {
    const auto four_digits = static_cast<uint32_t>(year);
    p = WriteTwoDigits(four_digits / 100, p);
    return WriteTwoDigits(four_digits % 100, p);
  }
  uint64_t magnitude = year < 0 ? 0 - static_cast<uint64_t>(year) : static_cast<uint64_t>(year);
  if (year < 0) *p++ = '-';
  char digits[20];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  while (count < 4) digits[count++] = '0';
  while (count > 0) *p++ = digits[--count];
  return p;
}

// Writes "yyyy-MM-dd" (the year as in WriteYear) for a day counted from 1970-01-01.
char* WriteDate(int64_t days_since_epoch, char* p) {
  const common::CivilDate date = common::CivilFromDays(days_since_epoch);
  p = WriteYear(date.year, p);
  *p++ = '-';
  p = WriteTwoDigits(date.month, p);
  *p++ = '-';
  return WriteTwoDigits(date.day, p);
}

// Writes "THH:mm:ss.SSS+0000" (kTimeOfDayLength bytes).
constexpr size_t kTimeOfDayLength = 18;

char* WriteTimeOfDay(uint32_t millis_of_day, char* p) {
  const uint32_t seconds_of_day = millis_of_day / 1000;
  const uint32_t millis_of_second = millis_of_day % 1000;
  *p++ = 'T';
  p = WriteTwoDigits(seconds_of_day / 3600, p);
  *p++ = ':';
  p = WriteTwoDigits(seconds_of_day / 60 % 60, p);
  *p++ = ':';
  p = WriteTwoDigits(seconds_of_day % 60, p);
  *p++ = '.';
  *p++ = static_cast<char>('0' + millis_of_second / 100);
  p = WriteTwoDigits(millis_of_second % 100, p);
  std::memcpy(p, "+0000", 5);
  return p + 5;
}

// The range of LongGmtDateFormatter's cache: 0000-01-01 (719,528 days before 1970-01-01)
// through 9999-12-31, where the date part is always 10 bytes.
constexpr int64_t kFirstCachedDay = -719'528;
constexpr int64_t kFirstCachedMicros = kFirstCachedDay * kMicrosPerDay;
constexpr int64_t kEndCachedMicros = int64_t{2'932'897} * kMicrosPerDay;  // 10000-01-01
constexpr size_t kCachedDateLength = 10;

}  // namespace

size_t FormatLongGmtDate(int64_t micros, char* out) {
  int64_t days = micros / kMicrosPerDay;  // Rounded towards zero; floor it.
  int64_t micros_of_day = micros - days * kMicrosPerDay;
  if (micros_of_day < 0) {
    --days;
    micros_of_day += kMicrosPerDay;
  }
  char* p = WriteDate(days, out);
  p = WriteTimeOfDay(static_cast<uint32_t>(micros_of_day / 1000), p);
  return static_cast<size_t>(p - out);
}

LongGmtDateFormatter::LongGmtDateFormatter() {
  for (CachedDay& cached : cache_) cached.day = kNoDay;
}

size_t LongGmtDateFormatter::Format(int64_t micros, char* out) {
  if (micros < kFirstCachedMicros || micros >= kEndCachedMicros) {
    return FormatLongGmtDate(micros, out);
  }
  const uint64_t since_first = static_cast<uint64_t>(micros - kFirstCachedMicros);
  const auto day = static_cast<uint32_t>(since_first / kMicrosPerDay);
  const auto millis_of_day =
      static_cast<uint32_t>((since_first - uint64_t{day} * kMicrosPerDay) / 1000);
  CachedDay& cached = cache_[day % kCachedDays];
  if (cached.day != day) {
    WriteDate(kFirstCachedDay + day, cached.date);
    cached.day = day;
  }
  std::memcpy(out, cached.date, kCachedDateLength);
  WriteTimeOfDay(millis_of_day, out + kCachedDateLength);
  return kCachedDateLength + kTimeOfDayLength;
}

}  // namespace dvexport::encode
