#include "service/encode/timestamp.h"

#include "common/civil_date.h"

namespace dvexport::encode {

void TimestampReader::ReadDate(const char* t) {
  const auto two_digits = [t](size_t i) { return int64_t{TimestampDigitPair(t, i)}; };
  days_ = common::DaysFromCivil(two_digits(0) * 100 + two_digits(2), two_digits(5), two_digits(8));
  std::memcpy(date_, t, sizeof date_);
}

}  // namespace dvexport::encode
