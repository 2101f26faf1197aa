#ifndef DVEXPORT_TESTS_SUPPORT_POSTGRES_TIMESTAMP_H_
#define DVEXPORT_TESTS_SUPPORT_POSTGRES_TIMESTAMP_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "service/encode/data_value_row.h"

namespace dvexport::test_support {

// Microseconds since 1970 of 0001-01-01 00:00:00 and of 10000-01-01 00:00:00: the timestamps
// PostgreSQL writes with a four-digit year lie in [kFirstUsualMicros, kEndUsualMicros).
inline constexpr int64_t kFirstUsualMicros = -62'135'596'800'000'000;
inline constexpr int64_t kEndUsualMicros = 253'402'300'800'000'000;

// "micros" as PostgreSQL's COPY writes a timestamp without time zone with DateStyle ISO:
// "YYYY-MM-DD HH:MM:SS", then '.' and the microseconds without trailing zeros unless they are
// zero. Built on std::chrono's calendar, independently of the service's date code.
// REQUIRES: kFirstUsualMicros <= micros < kEndUsualMicros.
std::string PostgresTimestampText(int64_t micros);

// The inverse of PostgresTimestampText, for texts of that form.
int64_t PostgresTimestampMicros(std::string_view text);

// The timestamp's microseconds, from whichever form it is in.
int64_t MicrosOf(const encode::Timestamp& timestamp);

}  // namespace dvexport::test_support

#endif  // DVEXPORT_TESTS_SUPPORT_POSTGRES_TIMESTAMP_H_
