#include "service/encode/timestamp.h"

#include "common/civil_date.h"

namespace dvexport::encode {

void TimestampReader::ReadDate(const char* t) {
  const auto two_digits = [t](size_t i) { return int64_t{TimestampDigitPair(t, i)}; };
  if (std::memcmp(t, year_, sizeof year_) != 0) {
    const int64_t year = two_digits(0) * 100 + two_digits(2);
    year_days_ = common::DaysFromCivil(year, 1, 1);
    leap_ = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    std::memcpy(year_, t, sizeof year_);
  }
  // Days of the months before month m (1-12) in a common year.
  static constexpr int16_t kDaysBefore[12] = {0,   31,  59,  90,  120, 151,
                                              181, 212, 243, 273, 304, 334};
  const int64_t month = two_digits(5);  // 1-12: IsUsualTimestamp checked it
  days_ = year_days_ + kDaysBefore[month - 1] + (leap_ && month > 2 ? 1 : 0) + two_digits(8) - 1;
  std::memcpy(date_, t, sizeof date_);
}

}  // namespace dvexport::encode
