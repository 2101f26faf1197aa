#include "service/dhis2/dates.h"

#include <cstddef>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/quote.h"

namespace dvexport::dhis2 {

namespace {

// Returns the value of `text` if it is exactly `digits` ASCII digits.
std::optional<int> FixedDigits(std::string_view text, std::size_t digits) {
  if (text.size() != digits) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<std::chrono::sys_days> MakeDate(int year, int month, int day) {
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{year}, std::chrono::month(month),
                                        std::chrono::day(day)};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days{ymd};
}

// Checks "<hh>:<mm>" or "<hh><mm>" or "<hh>" after the sign of an offset.
bool IsValidOffset(std::string_view text) {
  std::optional<int> hours = FixedDigits(text.substr(0, 2), 2);
  if (!hours || *hours > 23) return false;
  text.remove_prefix(2);
  if (text.empty()) return true;
  if (text[0] == ':') text.remove_prefix(1);
  std::optional<int> minutes = FixedDigits(text, 2);
  return minutes && *minutes <= 59;
}

// Checks "HH:mm:ss[.f...][zone]".
bool IsValidTime(std::string_view text) {
  if (text.size() < 8 || text[2] != ':' || text[5] != ':') return false;
  std::optional<int> hour = FixedDigits(text.substr(0, 2), 2);
  std::optional<int> minute = FixedDigits(text.substr(3, 2), 2);
  std::optional<int> second = FixedDigits(text.substr(6, 2), 2);
  if (!hour || !minute || !second || *hour > 23 || *minute > 59 || *second > 59) return false;
  text.remove_prefix(8);
  if (!text.empty() && text[0] == '.') {
    std::size_t digits = 1;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 1 || digits > 10) return false;
    text.remove_prefix(digits);
  }
  if (text.empty() || text == "Z") return true;
  if (text[0] != '+' && text[0] != '-') return false;
  return IsValidOffset(text.substr(1));
}

std::optional<std::chrono::sys_days> ParseDateForms(std::string_view text) {
  const std::optional<int> year = FixedDigits(text.substr(0, 4), 4);
  if (!year) return std::nullopt;
  switch (text.size()) {
    case 4:
      return MakeDate(*year, 1, 1);
    case 7:
      if (text[4] != '-') return std::nullopt;
      if (auto month = FixedDigits(text.substr(5, 2), 2)) return MakeDate(*year, *month, 1);
      return std::nullopt;
    case 8: {
      auto month = FixedDigits(text.substr(4, 2), 2);
      auto day = FixedDigits(text.substr(6, 2), 2);
      if (month && day) return MakeDate(*year, *month, *day);
      return std::nullopt;
    }
    default:
      break;
  }
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const std::optional<int> month = FixedDigits(text.substr(5, 2), 2);
  const std::optional<int> day = FixedDigits(text.substr(8, 2), 2);
  if (!month || !day) return std::nullopt;
  if (text.size() > 10 && ((text[10] != 'T' && text[10] != ' ') || !IsValidTime(text.substr(11)))) {
    return std::nullopt;
  }
  return MakeDate(*year, *month, *day);
}

}  // namespace

absl::StatusOr<std::chrono::sys_days> ParseDate(std::string_view text) {
  std::optional<std::chrono::sys_days> date = ParseDateForms(text);
  if (!date) {
    return absl::InvalidArgumentError(
        absl::StrCat(QuoteForMessage(text), " is not a valid date (yyyy-MM-dd)"));
  }
  // Four digits hold at most 9999; PostgreSQL has no year 0 (0000 is 1 BC there).
  if (std::chrono::year_month_day{*date}.year() < std::chrono::year{kMinYear}) {
    return absl::InvalidArgumentError(absl::StrCat(QuoteForMessage(text),
                                                   " is not a valid date: years run from ",
                                                   kMinYear, " to ", kMaxYear));
  }
  return *date;
}

absl::StatusOr<int64_t> ParseDateTimeMicros(std::string_view text) {
  absl::StatusOr<std::chrono::sys_days> date = ParseDate(text);
  if (!date.ok()) return date.status();
  int64_t micros = int64_t{date->time_since_epoch().count()} * 86400 * 1000000;
  if (text.size() <= 10) return micros;
  // ParseDate checked the form: "?HH:mm:ss[.f...][Z|+hh[[:]mm]]" follows.
  std::string_view time = text.substr(11);
  const int64_t seconds = *FixedDigits(time.substr(0, 2), 2) * 3600 +
                          *FixedDigits(time.substr(3, 2), 2) * 60 +
                          *FixedDigits(time.substr(6, 2), 2);
  time.remove_prefix(8);
  int64_t millis = 0;
  if (!time.empty() && time[0] == '.') {
    std::size_t i = 1;
    for (int place = 100; i < time.size() && time[i] >= '0' && time[i] <= '9'; ++i, place /= 10) {
      millis += (time[i] - '0') * place;
    }
    time.remove_prefix(i);
  }
  micros += (seconds * 1000 + millis) * 1000;
  if (!time.empty() && time[0] != 'Z') {
    const int sign = time[0] == '-' ? -1 : 1;
    time.remove_prefix(1);
    int64_t offset_minutes = *FixedDigits(time.substr(0, 2), 2) * 60;
    time.remove_prefix(2);
    if (!time.empty() && time[0] == ':') time.remove_prefix(1);
    if (!time.empty()) offset_minutes += *FixedDigits(time, 2);
    micros -= sign * offset_minutes * 60 * 1000000;
  }
  return micros;
}

std::string FormatDate(std::chrono::sys_days date) {
  const std::chrono::year_month_day ymd{date};
  const int year = static_cast<int>(ymd.year());
  const unsigned month = static_cast<unsigned>(ymd.month());
  const unsigned day = static_cast<unsigned>(ymd.day());
  const unsigned magnitude = static_cast<unsigned>(year < 0 ? -year : year);
  std::string text;
  if (year < 0) text.push_back('-');
  const std::string digits = absl::StrCat(magnitude);
  text.append(digits.size() < 4 ? 4 - digits.size() : 0, '0');
  text.append(digits);
  text.push_back('-');
  text.push_back(static_cast<char>('0' + month / 10));
  text.push_back(static_cast<char>('0' + month % 10));
  text.push_back('-');
  text.push_back(static_cast<char>('0' + day / 10));
  text.push_back(static_cast<char>('0' + day % 10));
  return text;
}

}  // namespace dvexport::dhis2
