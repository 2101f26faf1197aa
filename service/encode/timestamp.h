#ifndef DVEXPORT_SERVICE_ENCODE_TIMESTAMP_H_
#define DVEXPORT_SERVICE_ENCODE_TIMESTAMP_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "service/encode/data_value_row.h"

namespace dvexport::encode {

// The usual text of a timestamp without time zone, as PostgreSQL writes it with DateStyle ISO:
// "YYYY-MM-DD HH:MM:SS", then optionally '.' and 1 to 6 fraction digits (PostgreSQL drops
// trailing zeros). Four-digit years only: years before 1 (" BC") or after 9999 are not usual.
inline constexpr size_t kMinUsualTimestampLength = 19;
inline constexpr size_t kMaxUsualTimestampLength = 26;

// The two decimal digits at t[i] and t[i + 1] as a number (digits already checked).
inline unsigned TimestampDigitPair(const char* t, size_t i) {
  return static_cast<unsigned>(t[i] - '0') * 10u + static_cast<unsigned>(t[i + 1] - '0');
}

// Whether "text" has the usual form: digits and separators where they belong, a year from 0001,
// month 01-12, day 01-31, hour 00-23, minute and second 00-59. (The day is not checked against
// its month: PostgreSQL writes only real dates; the shape is what the encoders rely on.)
inline bool IsUsualTimestamp(std::string_view text) {
  const size_t n = text.size();
  if (n < kMinUsualTimestampLength || n > kMaxUsualTimestampLength || n == 20) return false;
  const char* const t = text.data();
#if defined(__SSE2__)
  // Two overlapping 16-byte checks, the first and the last 16 bytes of the text against the
  // same stretch of the full shape: XOR with the shape leaves 0-9 at the digits and 0 at the
  // separators, so a byte above its limit is anything else.
  static constexpr char kShape[kMaxUsualTimestampLength + 1] = "0000-00-00 00:00:00.000000";
  static constexpr char kLimit[kMaxUsualTimestampLength] = {9, 9, 9, 9, 0, 9, 9, 0, 9, 9, 0, 9, 9,
                                                            0, 9, 9, 0, 9, 9, 0, 9, 9, 9, 9, 9, 9};
  const auto load = [](const char* q) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  };
  const auto fits = [&load](const char* text_part, size_t offset) {
    const __m128i x = _mm_xor_si128(load(text_part), load(kShape + offset));
    const __m128i limit = load(kLimit + offset);
    return _mm_cmpeq_epi8(_mm_max_epu8(x, limit), limit);
  };
  if (_mm_movemask_epi8(_mm_and_si128(fits(t, 0), fits(t + n - 16, n - 16))) != 0xFFFF) {
    return false;
  }
#else
  const auto is_digit = [](char c) {
    return static_cast<unsigned>(static_cast<unsigned char>(c)) - 48u <= 9u;
  };
  static constexpr char kShape[] = "dddd-dd-dd dd:dd:dd.dddddd";
  for (size_t i = 0; i < n; ++i) {
    if (kShape[i] == 'd' ? !is_digit(t[i]) : t[i] != kShape[i]) return false;
  }
#endif
  const auto two_digits = [t](size_t i) { return TimestampDigitPair(t, i); };
  if (std::memcmp(t, "0000", 4) == 0 || two_digits(5) - 1 > 11 || two_digits(8) - 1 > 30 ||
      two_digits(11) > 23 || two_digits(14) > 59 || two_digits(17) > 59) {
    return false;
  }
  return true;
}

// Writes the usual timestamp "text" the way FormatLongGmtDate (long_gmt_date.h) writes the
// same instant, "yyyy-MM-ddTHH:mm:ss.SSS+0000": the text with 'T' for the space, the fraction
// cut (floored) or padded to three digits, and the zone. Returns kLongGmtDateLength (28).
// REQUIRES: IsUsualTimestamp(text); 28 bytes writable at "out".
inline size_t FormatUsualTimestamp(std::string_view text, char* out) {
  std::memcpy(out, text.data(), kMinUsualTimestampLength);  // "YYYY-MM-DD HH:MM:SS"
  out[10] = 'T';
  out[19] = '.';
  if (text.size() >= 23) {
    // Milliseconds or finer, the usual case: three digits kept, the rest cut.
    std::memcpy(out + 20, text.data() + 20, 3);
  } else {
    // No fraction, or 1 or 2 digits: padded with zeros.
    for (size_t i = 20; i < 23; ++i) out[i] = i < text.size() ? text[i] : '0';
  }
  std::memcpy(out + 23, "+0000", 5);
  return 28;
}

// Whether two usual timestamp texts are the same (a value never updated has lastupdated equal
// to created): two overlapping 16-byte compares instead of a call to memcmp.
// REQUIRES: both have at least 16 bytes.
inline bool SameTimestampText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
#if defined(__SSE2__)
  const auto load = [](const char* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  };
  const size_t tail = a.size() - 16;
  const __m128i same = _mm_and_si128(_mm_cmpeq_epi8(load(a.data()), load(b.data())),
                                     _mm_cmpeq_epi8(load(a.data() + tail), load(b.data() + tail)));
  return _mm_movemask_epi8(same) == 0xFFFF;
#else
  return a == b;
#endif
}

// A timestamp as google.protobuf.Timestamp holds it: seconds since 1970-01-01T00:00:00, floored,
// and the nanoseconds after them, in [0, 1e9).
struct TimestampParts {
  int64_t seconds = 0;
  int32_t nanos = 0;
};

// Timestamps in either form as seconds and nanoseconds since
// 1970-01-01T00:00:00, remembering the day of the last usual text (consecutive values often share
// their dates) and the first day of its year (and most exports span few years). Not thread-safe.
class TimestampReader {
 public:
  TimestampParts Parts(const Timestamp& timestamp) {
    const std::string_view t = timestamp.usual_text;
    if (t.empty()) {
      int64_t seconds = timestamp.micros / 1000000;
      int64_t rest = timestamp.micros % 1000000;
      if (rest < 0) {
        --seconds;
        rest += 1000000;
      }
      return TimestampParts{seconds, static_cast<int32_t>(rest * 1000)};
    }
    return TimestampParts{SecondsOfUsualText(t), static_cast<int32_t>(FractionMicros(t) * 1000)};
  }

 private:
  int64_t SecondsOfUsualText(std::string_view t) {
    if (std::memcmp(t.data(), date_, sizeof date_) != 0) ReadDate(t.data());
    const auto two_digits = [&t](size_t i) { return int64_t{TimestampDigitPair(t.data(), i)}; };
    return days_ * 86400 + two_digits(11) * 3600 + two_digits(14) * 60 + two_digits(17);
  }

  // The fraction digits (0 to 6 after the '.') as microseconds, without a loop over them: the
  // last 8 bytes of the text hold them; they are moved to the low bytes, padded to "00dddddd"
  // and converted in three multiplications.
  static int64_t FractionMicros(std::string_view t) {
    if (t.size() <= kMinUsualTimestampLength) return 0;
    const size_t digits = t.size() - 20;  // 1 to 6
    uint64_t word;
    std::memcpy(&word, t.data() + t.size() - 8, 8);  // little-endian: first byte lowest
    const unsigned drop = static_cast<unsigned>(8 - digits) * 8;
    uint64_t v = (word >> drop) - (0x3030303030303030ull >> drop);  // digit values, first lowest
    v <<= 16;  // "00" then the digits, zeros after them
    v = v * 10 + (v >> 8);
    v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
        32;
    return static_cast<int64_t>(v);
  }

  // Sets date_ and days_ from the usual text at "t" (its year from year_days_ when it is the
  // year of the date before).
  void ReadDate(const char* t);

  char date_[10] = {};     // "YYYY-MM-DD" of the last usual text, or zeros
  int64_t days_ = 0;       // its days since 1970-01-01
  char year_[4] = {};      // "YYYY" of the last year read, or zeros
  int64_t year_days_ = 0;  // days from 1970-01-01 to its January 1
  bool leap_ = false;      // whether it is a leap year
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_TIMESTAMP_H_
