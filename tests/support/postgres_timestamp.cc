#include "tests/support/postgres_timestamp.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace dvexport::test_support {

std::string PostgresTimestampText(int64_t micros) {
  using namespace std::chrono;
  if (micros < kFirstUsualMicros || micros >= kEndUsualMicros) {
    throw std::out_of_range("not a four-digit year");
  }
  const sys_time<microseconds> time{microseconds{micros}};
  const sys_days day = floor<days>(time);
  const year_month_day date{day};
  const hh_mm_ss<microseconds> clock{time - day};
  char text[40];
  int n = std::snprintf(text, sizeof text, "%04d-%02u-%02u %02lld:%02lld:%02lld",
                        static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                        static_cast<unsigned>(date.day()),
                        static_cast<long long>(clock.hours().count()),
                        static_cast<long long>(clock.minutes().count()),
                        static_cast<long long>(clock.seconds().count()));
  std::string result(text, static_cast<size_t>(n));
  if (const long long fraction = clock.subseconds().count(); fraction != 0) {
    n = std::snprintf(text, sizeof text, ".%06lld", fraction);
    while (text[n - 1] == '0') --n;
    result.append(text, static_cast<size_t>(n));
  }
  return result;
}

int64_t PostgresTimestampMicros(std::string_view text) {
  using namespace std::chrono;
  const std::string copy(text);
  int y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0;
  int consumed = 0;
  if (std::sscanf(copy.c_str(), "%4d-%2u-%2u %2u:%2u:%2u%n", &y, &mo, &d, &h, &mi, &s, &consumed) !=
      6) {
    throw std::invalid_argument("not a PostgreSQL timestamp: " + copy);
  }
  int64_t fraction = 0;
  if (static_cast<size_t>(consumed) < copy.size()) {
    std::string digits = copy.substr(static_cast<size_t>(consumed) + 1);
    digits.resize(6, '0');
    fraction = std::stoll(digits);
  }
  const sys_days day{year{y} / month{mo} / std::chrono::day{d}};
  return duration_cast<microseconds>(day.time_since_epoch()).count() +
         ((int64_t{h} * 60 + mi) * 60 + s) * 1'000'000 + fraction;
}

int64_t MicrosOf(const encode::Timestamp& timestamp) {
  return timestamp.usual_text.empty() ? timestamp.micros
                                      : PostgresTimestampMicros(timestamp.usual_text);
}

}  // namespace dvexport::test_support
