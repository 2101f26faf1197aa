#include "service/encode/timestamp.h"

#include "common/civil_date.h"

namespace dvexport::encode {

namespace {

inline int64_t TwoDigits(const char* p) { return (p[0] - '0') * 10 + (p[1] - '0'); }

}  // namespace

int64_t TimestampReader::Micros(const Timestamp& timestamp) {
  const std::string_view t = timestamp.usual_text;
  if (t.empty()) return timestamp.micros;
  if (std::memcmp(t.data(), date_, sizeof date_) != 0) {
    days_ = common::DaysFromCivil(TwoDigits(t.data()) * 100 + TwoDigits(t.data() + 2),
                                  TwoDigits(t.data() + 5), TwoDigits(t.data() + 8));
    std::memcpy(date_, t.data(), sizeof date_);
  }
  int64_t fraction = 0;
  for (size_t i = 20; i < t.size(); ++i) fraction = fraction * 10 + (t[i] - '0');
  static constexpr int64_t kScale[] = {1000000, 100000, 10000, 1000, 100, 10, 1};
  const int64_t seconds = days_ * 86400 + TwoDigits(t.data() + 11) * 3600 +
                          TwoDigits(t.data() + 14) * 60 + TwoDigits(t.data() + 17);
  return seconds * 1000000 + fraction * kScale[t.size() > 20 ? t.size() - 20 : 0];
}

}  // namespace dvexport::encode
