// DHIS2 2.43's ISO period parser: Period.Input.of, then DateUnitPeriodTypeParser.

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/period.h"

namespace dvexport::dhis2 {

namespace {

using std::chrono::days;
using std::chrono::sys_days;
using std::chrono::weekday;

absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

// The text as Java holds it, in UTF-16 units; a byte that is not part of well-formed UTF-8
// becomes U+FFFD.
std::u16string ToUtf16(std::string_view s) {
  std::u16string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80                 ? 0
                          : c >= 0xC2 && c <= 0xDF ? 1
                          : c >= 0xE0 && c <= 0xEF ? 2
                          : c >= 0xF0 && c <= 0xF4 ? 3
                                                   : 4;
    char32_t cp = n == 0 ? c : n == 1 ? c & 0x1F : n == 2 ? c & 0x0F : c & 0x07;
    bool ok = n < 4 && i + n < s.size();
    for (std::size_t k = 1; ok && k <= n; ++k) {
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3F);
    }
    const char32_t min = n == 1 ? 0x80 : n == 2 ? 0x800 : n == 3 ? 0x10000 : 0;
    if (!ok || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      out.push_back(u'\uFFFD');
      ++i;
      continue;
    }
    if (cp >= 0x10000) {
      out.push_back(static_cast<char16_t>(0xD800 + ((cp - 0x10000) >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
    i += n + 1;
  }
  return out;
}

// UTF-16 units back to UTF-8; a lone surrogate becomes U+FFFD.
std::string ToUtf8(std::u16string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char32_t cp = s[i];
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 &&
        s[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (s[++i] - 0xDC00);
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      cp = 0xFFFD;
    }
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

// Period.Input: the type and the numbers as written, not yet checked against the calendar.
struct PeriodInput {
  PeriodType type;
  int year;
  int primary = 0;  // week, month, quarter, half, ...
  int day = 0;      // Daily only
};

// Period.Input.of, check by check in DHIS2's order; a failure keeps DHIS2's message.
class PeriodInputParser {
 public:
  explicit PeriodInputParser(std::string_view iso) : p_(ToUtf16(iso)), text_(ToUtf8(p_)) {}

  absl::StatusOr<PeriodInput> Parse();

 private:
  absl::StatusOr<PeriodInput> Length6(int year);
  absl::StatusOr<PeriodInput> Length7(int year);
  absl::StatusOr<PeriodInput> Length9(int year);
  absl::StatusOr<PeriodInput> Length10(int year);

  // checkDigit and digitsN: the number, or -1 with error_ set.
  int Digits(std::size_t index, std::size_t count) {
    int value = 0;
    for (std::size_t i = index; i < index + count; ++i) {
      if (p_[i] < u'0' || p_[i] > u'9') {
        error_ = IllegalChar("digit", i);
        return -1;
      }
      value = value * 10 + (p_[i] - u'0');
    }
    return value;
  }

  bool At(std::size_t index, std::u16string_view infix) const {
    return p_.compare(index, infix.size(), infix) == 0;
  }
  bool EndsWith(std::u16string_view suffix) const {
    return p_.size() >= suffix.size() && At(p_.size() - suffix.size(), suffix);
  }

  absl::Status IllegalChar(std::string_view expected, std::size_t index) const {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid Period `", text_, "`, expected a ", Absl(expected), " at position ",
                     index, " but found: `", ToUtf8(p_.substr(index, 1)), "`"));
  }

  // List.of(oneOf).toString() is "[W, Q, S]".
  absl::Status IllegalInfix(std::initializer_list<std::string_view> one_of) const {
    std::string list = "[";
    for (std::string_view infix : one_of) {
      if (list.size() > 1) list.append(", ");
      list.append(infix.data(), infix.size());
    }
    list.append("]");
    return absl::InvalidArgumentError(absl::StrCat("Invalid Period `", text_, "`, expected one of ",
                                                   list, " at index 4 for a ISO period of length ",
                                                   p_.size(), " but found: `", ToUtf8(p_.substr(4)),
                                                   "`"));
  }

  const std::u16string p_;
  const std::string text_;
  absl::Status error_;
};

absl::StatusOr<PeriodInput> PeriodInputParser::Parse() {
  const std::size_t len = p_.size();
  if (len < 4 || len > 11) {
    return absl::InvalidArgumentError(
        absl::StrCat("Period must be have between 4 and 11 characters but got: `", text_, "`"));
  }
  const int year = Digits(0, 4);
  if (year < 0) return error_;
  switch (len) {
    case 4:
      return PeriodInput{PeriodType::kYearly, year};
    case 6:
      return Length6(year);
    case 7:
      return Length7(year);
    case 8: {
      if (EndsWith(u"July")) return PeriodInput{PeriodType::kFinancialJuly, year};
      if (At(4, u"BiW")) {
        const int n = Digits(7, 1);
        if (n < 0) return error_;
        return PeriodInput{PeriodType::kBiWeekly, year, n};
      }
      const int month = Digits(4, 2);
      if (month < 0) return error_;
      const int day = Digits(6, 2);
      if (day < 0) return error_;
      return PeriodInput{PeriodType::kDaily, year, month, day};
    }
    case 9:
      return Length9(year);
    case 10:
      return Length10(year);
    default:  // 5 and 11
      if (At(4, u"AprilS")) {
        const int n = Digits(10, 1);
        if (n < 0) return error_;
        return PeriodInput{PeriodType::kSixMonthlyApril, year, n};
      }
      return IllegalInfix({"AprilS"});
  }
}

absl::StatusOr<PeriodInput> PeriodInputParser::Length6(int year) {
  const int primary = Digits(5, 1);
  if (primary < 0) return error_;
  const char16_t c4 = p_[4];
  if (c4 == u'W') return PeriodInput{PeriodType::kWeekly, year, primary};
  if (c4 >= u'0' && c4 <= u'9') {
    const int month = Digits(4, 2);
    if (month < 0) return error_;
    return PeriodInput{PeriodType::kMonthly, year, month};
  }
  if (c4 == u'Q') return PeriodInput{PeriodType::kQuarterly, year, primary};
  if (c4 == u'S') return PeriodInput{PeriodType::kSixMonthly, year, primary};
  return IllegalInfix({"W", "Q", "S"});
}

absl::StatusOr<PeriodInput> PeriodInputParser::Length7(int year) {
  if (EndsWith(u"Feb")) return PeriodInput{PeriodType::kFinancialFeb, year};
  if (EndsWith(u"Aug")) return PeriodInput{PeriodType::kFinancialAug, year};
  if (EndsWith(u"Sep")) return PeriodInput{PeriodType::kFinancialSep, year};
  if (EndsWith(u"Oct")) return PeriodInput{PeriodType::kFinancialOct, year};
  if (EndsWith(u"Nov")) return PeriodInput{PeriodType::kFinancialNov, year};
  if (EndsWith(u"B")) {
    const int n = Digits(4, 2);
    if (n < 0) return error_;
    return PeriodInput{PeriodType::kBiMonthly, year, n};
  }
  const int primary = Digits(5, 2);
  if (primary < 0) return error_;
  if (p_[4] == u'W') return PeriodInput{PeriodType::kWeekly, year, primary};
  if (p_[4] == u'-') return PeriodInput{PeriodType::kMonthly, year, primary};
  return IllegalInfix({"W", "-"});
}

// The weekly infixes after the year, in DHIS2's order of checks.
struct WeeklyInfix {
  std::u16string_view infix;
  PeriodType type;
};
constexpr WeeklyInfix kWeeklyInfixes[] = {
    {u"WedW", PeriodType::kWeeklyWednesday}, {u"ThuW", PeriodType::kWeeklyThursday},
    {u"FriW", PeriodType::kWeeklyFriday},    {u"SatW", PeriodType::kWeeklySaturday},
    {u"SunW", PeriodType::kWeeklySunday},
};

absl::StatusOr<PeriodInput> PeriodInputParser::Length9(int year) {
  if (EndsWith(u"April")) return PeriodInput{PeriodType::kFinancialApril, year};
  if (At(4, u"NovQ")) {
    const int n = Digits(8, 1);
    if (n < 0) return error_;
    return PeriodInput{PeriodType::kQuarterlyNov, year, n};
  }
  if (At(4, u"BiW")) {
    const int n = Digits(7, 2);
    if (n < 0) return error_;
    return PeriodInput{PeriodType::kBiWeekly, year, n};
  }
  const int primary = Digits(8, 1);
  if (primary < 0) return error_;
  for (const WeeklyInfix& weekly : kWeeklyInfixes) {
    if (At(4, weekly.infix)) return PeriodInput{weekly.type, year, primary};
  }
  if (At(4, u"NovS")) return PeriodInput{PeriodType::kSixMonthlyNov, year, primary};
  // DHIS2's list leaves FriW out.
  return IllegalInfix({"WedW", "ThuW", "SatW", "SunW", "NovS"});
}

absl::StatusOr<PeriodInput> PeriodInputParser::Length10(int year) {
  if (p_[4] == u'-') {
    if (p_[7] != u'-') return IllegalChar("dash", 7);
    const int month = Digits(5, 2);
    if (month < 0) return error_;
    const int day = Digits(8, 2);
    if (day < 0) return error_;
    return PeriodInput{PeriodType::kDaily, year, month, day};
  }
  const int primary = Digits(8, 2);
  if (primary < 0) return error_;
  for (const WeeklyInfix& weekly : kWeeklyInfixes) {
    if (At(4, weekly.infix)) return PeriodInput{weekly.type, year, primary};
  }
  return IllegalInfix({"WedW", "ThuW", "SatW", "SunW"});
}

sys_days Day(int year, int month, int day) {
  return sys_days{std::chrono::year{year} / month / day};
}

// WeekFields.of(first, 4): week 1 is the week (starting on "first") that holds January 4.
sys_days WeekOneStart(int week_based_year, weekday first) {
  const sys_days jan4 = Day(week_based_year, 1, 4);
  return jan4 - (weekday{jan4} - first);
}

// Joda's weekOfWeekyear().getMaximumValue() at January 1 of "year": the ISO weeks of the
// week-based year January 1 belongs to (the year before when it is a Friday, Saturday or
// Sunday).
int JodaWeeksInYear(int year) {
  const unsigned jan1 = weekday{Day(year, 1, 1)}.iso_encoding();
  const int week_based_year = jan1 >= 5 ? year - 1 : year;
  return static_cast<int>((WeekOneStart(week_based_year + 1, std::chrono::Monday) -
                           WeekOneStart(week_based_year, std::chrono::Monday))
                              .count() /
                          7);
}

std::optional<weekday> WeeklyFirstDay(PeriodType type) {
  switch (type) {
    case PeriodType::kWeekly:
      return std::chrono::Monday;
    case PeriodType::kWeeklyWednesday:
      return std::chrono::Wednesday;
    case PeriodType::kWeeklyThursday:
      return std::chrono::Thursday;
    case PeriodType::kWeeklyFriday:
      return std::chrono::Friday;
    case PeriodType::kWeeklySaturday:
      return std::chrono::Saturday;
    case PeriodType::kWeeklySunday:
      return std::chrono::Sunday;
    default:
      return std::nullopt;
  }
}

// DateUnitPeriodTypeParser's weeks: week 1 to 53 of the type's week-based year, and (DHIS2's
// overflow check) the id of the week found must begin with "%d" of the year.
std::optional<Period> WeeklyPeriod(PeriodType type, weekday first, int year, int week) {
  if (week < 1 || week > 53) return std::nullopt;
  const sys_days start = WeekOneStart(year, first) + days{7 * (week - 1)};
  const std::string id = FormatIsoPeriod(type, start);
  const std::string year_text = absl::StrCat(year);
  if (id.size() < 4 || id.compare(0, 4, year_text) != 0) return std::nullopt;
  return CreatePeriod(type, start);
}

// The first day of the period "input" names, if it exists (DateUnitPeriodTypeParser).
std::optional<sys_days> StartOf(const PeriodInput& input) {
  const int y = input.year;
  const int n = input.primary;
  switch (input.type) {
    case PeriodType::kDaily: {
      const std::chrono::year_month_day ymd{std::chrono::year{y},
                                            std::chrono::month(static_cast<unsigned>(n)),
                                            std::chrono::day(static_cast<unsigned>(input.day))};
      if (!ymd.ok()) return std::nullopt;
      return sys_days{ymd};
    }
    case PeriodType::kBiWeekly: {
      const int week = 2 * n - 1;
      if (week < 1 || week > JodaWeeksInYear(y)) return std::nullopt;
      return WeekOneStart(y, std::chrono::Monday) + days{7 * (week - 1)};
    }
    case PeriodType::kMonthly:
      return n >= 1 && n <= 12 ? std::optional(Day(y, n, 1)) : std::nullopt;
    case PeriodType::kBiMonthly:
      return n >= 1 && n <= 6 ? std::optional(Day(y, 2 * n - 1, 1)) : std::nullopt;
    case PeriodType::kQuarterly:
      return n >= 1 && n <= 4 ? std::optional(Day(y, 3 * n - 2, 1)) : std::nullopt;
    case PeriodType::kQuarterlyNov:
      if (n < 1 || n > 4) return std::nullopt;
      return n == 1 ? Day(y - 1, 11, 1) : Day(y, 3 * n - 4, 1);
    case PeriodType::kSixMonthly:
      return n >= 1 && n <= 2 ? std::optional(Day(y, n == 1 ? 1 : 7, 1)) : std::nullopt;
    case PeriodType::kSixMonthlyApril:
      return n >= 1 && n <= 2 ? std::optional(Day(y, n == 1 ? 4 : 10, 1)) : std::nullopt;
    case PeriodType::kSixMonthlyNov:
      if (n < 1 || n > 2) return std::nullopt;
      return n == 1 ? Day(y - 1, 11, 1) : Day(y, 5, 1);
    case PeriodType::kFinancialFeb:
      return Day(y, 2, 1);
    case PeriodType::kFinancialApril:
      return Day(y, 4, 1);
    case PeriodType::kFinancialJuly:
      return Day(y, 7, 1);
    case PeriodType::kFinancialAug:
      return Day(y, 8, 1);
    case PeriodType::kFinancialSep:
      return Day(y, 9, 1);
    case PeriodType::kFinancialOct:
      return Day(y, 10, 1);
    case PeriodType::kFinancialNov:
      return Day(y - 1, 11, 1);
    default:  // Yearly
      return Day(y, 1, 1);
  }
}

}  // namespace

absl::StatusOr<Period> ParseIsoPeriod243(std::string_view iso) {
  absl::StatusOr<PeriodInput> input = PeriodInputParser(iso).Parse();
  if (!input.ok()) return input.status();
  std::optional<Period> period;
  if (const std::optional<weekday> first = WeeklyFirstDay(input->type)) {
    period = WeeklyPeriod(input->type, *first, input->year, input->primary);
  } else if (const std::optional<sys_days> start = StartOf(*input)) {
    period = CreatePeriod(input->type, *start);
  }
  if (!period) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid Period `", ToUtf8(ToUtf16(iso)),
                                                   "`, failed to create date interval"));
  }
  return *period;
}

}  // namespace dvexport::dhis2
