#include "service/dhis2/period.h"

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/quote.h"

namespace dvexport::dhis2 {

namespace {

using std::chrono::days;
using std::chrono::sys_days;
using std::chrono::weekday;
using std::chrono::year_month_day;

// Indexed by PeriodType.
constexpr std::array<std::string_view, kAllPeriodTypes243.size()> kPeriodTypeNames = {
    "Daily",          "Weekly",        "WeeklyWednesday", "WeeklyThursday", "WeeklySaturday",
    "WeeklySunday",   "BiWeekly",      "Monthly",         "BiMonthly",      "Quarterly",
    "QuarterlyNov",   "SixMonthly",    "SixMonthlyApril", "SixMonthlyNov",  "Yearly",
    "FinancialApril", "FinancialJuly", "FinancialSep",    "FinancialOct",   "FinancialNov",
    "WeeklyFriday",   "FinancialFeb",  "FinancialAug",
};

int YearOf(const year_month_day& ymd) { return static_cast<int>(ymd.year()); }
int MonthOf(const year_month_day& ymd) {
  return static_cast<int>(static_cast<unsigned>(ymd.month()));
}

sys_days FirstOfMonth(int year, int month) { return sys_days{std::chrono::year{year} / month / 1}; }

// The day before the date `months` months after `start`, a first of month.
sys_days EndAfterMonths(sys_days start, int months) {
  const year_month_day ymd{start};
  const std::chrono::year_month ym = ymd.year() / ymd.month() + std::chrono::months{months};
  return sys_days{ym / 1} - days{1};
}

// The first day of the week of the Weekly* types and of BiWeekly.
std::optional<weekday> FirstDayOfWeek(PeriodType type) {
  switch (type) {
    case PeriodType::kWeekly:
    case PeriodType::kBiWeekly:
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

// The month a financial year starts in: FinancialPeriodType.getBaseMonth()
// (a java.util.Calendar month, counted from 0) plus 1.
int FinancialYearFirstMonth(PeriodType type) {
  switch (type) {
    case PeriodType::kFinancialFeb:
      return 2;
    case PeriodType::kFinancialApril:
      return 4;
    case PeriodType::kFinancialJuly:
      return 7;
    case PeriodType::kFinancialAug:
      return 8;
    case PeriodType::kFinancialSep:
      return 9;
    case PeriodType::kFinancialOct:
      return 10;
    default:
      return 11;
  }
}

// java.time WeekFields.of(first, 4): week 1 of a week-based year is the first
// week (starting on `first`) with at least 4 days in that calendar year, i.e.
// the week containing January 4.
sys_days WeekOneStart(int week_based_year, weekday first) {
  const sys_days jan4{std::chrono::year{week_based_year} / std::chrono::January / 4};
  return jan4 - (weekday{jan4} - first);
}

int WeeksInYear(int week_based_year, weekday first) {
  return static_cast<int>(
      (WeekOneStart(week_based_year + 1, first) - WeekOneStart(week_based_year, first)).count() /
      7);
}

struct WeekDate {
  int year;  // week-based year
  int week;  // 1-based week of the week-based year
};

WeekDate ToWeekDate(sys_days date, weekday first) {
  int year = YearOf(year_month_day{date});
  sys_days week_one = WeekOneStart(year + 1, first);
  if (date >= week_one) {
    ++year;
  } else {
    week_one = WeekOneStart(year, first);
    if (date < week_one) {
      --year;
      week_one = WeekOneStart(year, first);
    }
  }
  return {year, static_cast<int>((date - week_one).count() / 7) + 1};
}

// The normalised start date, as each DHIS2 createPeriod computes it.
sys_days StartOfPeriod(PeriodType type, sys_days date) {
  const year_month_day ymd{date};
  const int y = YearOf(ymd);
  const int m = MonthOf(ymd);
  switch (type) {
    case PeriodType::kDaily:
      return date;
    case PeriodType::kWeekly:
    case PeriodType::kWeeklyWednesday:
    case PeriodType::kWeeklyThursday:
    case PeriodType::kWeeklyFriday:
    case PeriodType::kWeeklySaturday:
    case PeriodType::kWeeklySunday:
      return date - (weekday{date} - *FirstDayOfWeek(type));
    case PeriodType::kBiWeekly: {
      // BiWeeklyAbstractPeriodType.adjustToStartOfBiWeek: back to the Monday
      // of the ISO week, and one week further if that week is even.
      const sys_days monday = date - (weekday{date} - std::chrono::Monday);
      const int iso_week = ToWeekDate(monday, std::chrono::Monday).week;
      return iso_week % 2 == 0 ? monday - days{7} : monday;
    }
    case PeriodType::kMonthly:
      return FirstOfMonth(y, m);
    case PeriodType::kBiMonthly:
      return FirstOfMonth(y, m - (m - 1) % 2);
    case PeriodType::kQuarterly:
      return FirstOfMonth(y, m - (m - 1) % 3);
    case PeriodType::kQuarterlyNov:
      // Quarters start in November, February, May and August.
      if (m == 1) return FirstOfMonth(y - 1, 11);
      return FirstOfMonth(y, m - (m - 2) % 3);
    case PeriodType::kSixMonthly:
      return FirstOfMonth(y, m < 7 ? 1 : 7);
    case PeriodType::kSixMonthlyApril:
      if (m < 4) return FirstOfMonth(y - 1, 10);
      return FirstOfMonth(y, m < 10 ? 4 : 10);
    case PeriodType::kSixMonthlyNov:
      if (m < 5) return FirstOfMonth(y - 1, 11);
      return FirstOfMonth(y, m < 11 ? 5 : 11);
    case PeriodType::kYearly:
      return FirstOfMonth(y, 1);
    case PeriodType::kFinancialFeb:
    case PeriodType::kFinancialApril:
    case PeriodType::kFinancialJuly:
    case PeriodType::kFinancialAug:
    case PeriodType::kFinancialSep:
    case PeriodType::kFinancialOct:
    case PeriodType::kFinancialNov: {
      const int first_month = FinancialYearFirstMonth(type);
      return FirstOfMonth(m >= first_month ? y : y - 1, first_month);
    }
  }
  return date;
}

// The inclusive end of the period of `type` starting on `start`.
sys_days EndOfPeriod(PeriodType type, sys_days start) {
  switch (type) {
    case PeriodType::kDaily:
      return start;
    case PeriodType::kWeekly:
    case PeriodType::kWeeklyWednesday:
    case PeriodType::kWeeklyThursday:
    case PeriodType::kWeeklyFriday:
    case PeriodType::kWeeklySaturday:
    case PeriodType::kWeeklySunday:
      return start + days{6};
    case PeriodType::kBiWeekly:
      return start + days{13};
    case PeriodType::kMonthly:
      return EndAfterMonths(start, 1);
    case PeriodType::kBiMonthly:
      return EndAfterMonths(start, 2);
    case PeriodType::kQuarterly:
    case PeriodType::kQuarterlyNov:
      return EndAfterMonths(start, 3);
    case PeriodType::kSixMonthly:
    case PeriodType::kSixMonthlyApril:
    case PeriodType::kSixMonthlyNov:
      return EndAfterMonths(start, 6);
    case PeriodType::kYearly:
    case PeriodType::kFinancialFeb:
    case PeriodType::kFinancialApril:
    case PeriodType::kFinancialJuly:
    case PeriodType::kFinancialAug:
    case PeriodType::kFinancialSep:
    case PeriodType::kFinancialOct:
    case PeriodType::kFinancialNov:
      return EndAfterMonths(start, 12);
  }
  return start;
}

Period MakePeriod(PeriodType type, sys_days start) {
  return Period{type, start, EndOfPeriod(type, start)};
}

// Builds an id in a fixed buffer; every id of a 4-digit year fits in the
// std::string small-string buffer.
class IsoIdBuilder {
 public:
  // Java's "%d".
  void Int(int value) {
    unsigned magnitude = static_cast<unsigned>(value);
    if (value < 0) {
      Char('-');
      magnitude = 0u - magnitude;
    }
    char digits[10];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    while (n > 0) Char(digits[--n]);
  }

  // Java's "%02d" for 0 <= value <= 99.
  void TwoDigits(int value) {
    Char(static_cast<char>('0' + value / 10));
    Char(static_cast<char>('0' + value % 10));
  }

  void Text(std::string_view text) {
    for (char c : text) Char(c);
  }

  std::string Build() const { return std::string(buffer_, size_); }

 private:
  void Char(char c) {
    if (size_ < sizeof(buffer_)) buffer_[size_++] = c;
  }

  // Longest id: "-2147483648AprilS1" (18 characters).
  char buffer_[24];
  std::size_t size_ = 0;
};

// Returns the number in `text`: 1 to `max_digits` ASCII digits, nothing else.
std::optional<int> ParseNumber(std::string_view text, std::size_t max_digits) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<Period> MonthPeriod(PeriodType type, int year, int month) {
  if (month < 1 || month > 12) return std::nullopt;
  return MakePeriod(type, FirstOfMonth(year, month));
}

std::optional<Period> DailyPeriod(int year, int month, int day) {
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  const year_month_day ymd{std::chrono::year{year}, std::chrono::month(month),
                           std::chrono::day(day)};
  if (!ymd.ok()) return std::nullopt;
  return MakePeriod(PeriodType::kDaily, sys_days{ymd});
}

// The period numbered `n` within `year`: a week, bi-week, quarter or half.
std::optional<Period> NumberedPeriod(PeriodType type, int year, int n) {
  switch (type) {
    case PeriodType::kWeekly:
    case PeriodType::kWeeklyWednesday:
    case PeriodType::kWeeklyThursday:
    case PeriodType::kWeeklySaturday:
    case PeriodType::kWeeklySunday: {
      const weekday first = *FirstDayOfWeek(type);
      if (n < 1 || n > WeeksInYear(year, first)) return std::nullopt;
      return MakePeriod(type, WeekOneStart(year, first) + days{7 * (n - 1)});
    }
    case PeriodType::kBiWeekly: {
      const int iso_week = 2 * n - 1;
      if (n < 1 || iso_week > WeeksInYear(year, std::chrono::Monday)) return std::nullopt;
      return MakePeriod(type, WeekOneStart(year, std::chrono::Monday) + days{7 * (iso_week - 1)});
    }
    case PeriodType::kQuarterly:
      if (n < 1 || n > 4) return std::nullopt;
      return MonthPeriod(type, year, 3 * n - 2);
    case PeriodType::kQuarterlyNov:
      if (n < 1 || n > 4) return std::nullopt;
      if (n == 1) return MonthPeriod(type, year - 1, 11);
      return MonthPeriod(type, year, 3 * n - 4);
    case PeriodType::kSixMonthly:
      if (n < 1 || n > 2) return std::nullopt;
      return MonthPeriod(type, year, n == 1 ? 1 : 7);
    case PeriodType::kSixMonthlyApril:
      if (n < 1 || n > 2) return std::nullopt;
      return MonthPeriod(type, year, n == 1 ? 4 : 10);
    case PeriodType::kSixMonthlyNov:
      if (n < 1 || n > 2) return std::nullopt;
      return n == 1 ? MonthPeriod(type, year - 1, 11) : MonthPeriod(type, year, 5);
    default:
      return std::nullopt;
  }
}

// Suffixes of the form <prefix><number> after the year.
struct NumberedForm {
  std::string_view prefix;
  PeriodType type;
  std::size_t max_digits;
};

constexpr NumberedForm kNumberedForms[] = {
    {"W", PeriodType::kWeekly, 2},
    {"WedW", PeriodType::kWeeklyWednesday, 2},
    {"ThuW", PeriodType::kWeeklyThursday, 2},
    {"SatW", PeriodType::kWeeklySaturday, 2},
    {"SunW", PeriodType::kWeeklySunday, 2},
    {"BiW", PeriodType::kBiWeekly, 2},
    {"Q", PeriodType::kQuarterly, 1},
    {"NovQ", PeriodType::kQuarterlyNov, 1},
    {"S", PeriodType::kSixMonthly, 1},
    {"AprilS", PeriodType::kSixMonthlyApril, 1},
    {"NovS", PeriodType::kSixMonthlyNov, 1},
};

// Financial years: <year><suffix>; all but FinancialNov start in <year>.
struct FinancialForm {
  std::string_view suffix;
  PeriodType type;
  int year_offset;
};

constexpr FinancialForm kFinancialForms[] = {
    {"April", PeriodType::kFinancialApril, 0}, {"July", PeriodType::kFinancialJuly, 0},
    {"Sep", PeriodType::kFinancialSep, 0},     {"Oct", PeriodType::kFinancialOct, 0},
    {"Nov", PeriodType::kFinancialNov, -1},
};

std::optional<Period> ParsePeriod(std::string_view iso) {
  if (iso.size() < 4) return std::nullopt;
  const std::optional<int> year = ParseNumber(iso.substr(0, 4), 4);
  if (!year) return std::nullopt;
  const std::string_view rest = iso.substr(4);
  const int y = *year;

  if (rest.empty()) return MonthPeriod(PeriodType::kYearly, y, 1);
  if (rest.size() == 2) {  // yyyyMM
    if (auto month = ParseNumber(rest, 2)) return MonthPeriod(PeriodType::kMonthly, y, *month);
  }
  if (rest.size() == 4) {  // yyyyMMdd
    auto month = ParseNumber(rest.substr(0, 2), 2);
    auto day = ParseNumber(rest.substr(2, 2), 2);
    if (month && day) return DailyPeriod(y, *month, *day);
  }
  if (rest.size() == 3 && rest[0] == '-') {  // yyyy-MM
    if (auto month = ParseNumber(rest.substr(1), 2)) {
      return MonthPeriod(PeriodType::kMonthly, y, *month);
    }
    return std::nullopt;
  }
  if (rest.size() == 6 && rest[0] == '-' && rest[3] == '-') {  // yyyy-MM-dd
    auto month = ParseNumber(rest.substr(1, 2), 2);
    auto day = ParseNumber(rest.substr(4, 2), 2);
    if (month && day) return DailyPeriod(y, *month, *day);
    return std::nullopt;
  }
  if (rest.size() == 3 && rest[2] == 'B') {  // yyyyMMB
    const std::optional<int> n = ParseNumber(rest.substr(0, 2), 2);
    if (!n || *n < 1 || *n > 6) return std::nullopt;
    return MonthPeriod(PeriodType::kBiMonthly, y, 2 * *n - 1);
  }
  for (const NumberedForm& form : kNumberedForms) {
    if (rest.size() > form.prefix.size() && rest.substr(0, form.prefix.size()) == form.prefix) {
      const std::optional<int> n = ParseNumber(rest.substr(form.prefix.size()), form.max_digits);
      if (n) return NumberedPeriod(form.type, y, *n);
    }
  }
  for (const FinancialForm& form : kFinancialForms) {
    if (rest == form.suffix) {
      return MonthPeriod(form.type, y + form.year_offset, FinancialYearFirstMonth(form.type));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<PeriodType> PeriodTypeFromName(std::string_view name) {
  return PeriodTypeFromName(name, 42);
}

std::optional<PeriodType> PeriodTypeFromName(std::string_view name, int dhis2) {
  const std::size_t known = dhis2 >= 43 ? kAllPeriodTypes243.size() : kAllPeriodTypes.size();
  for (std::size_t i = 0; i < known; ++i) {
    if (kPeriodTypeNames[i] == name) return static_cast<PeriodType>(i);
  }
  return std::nullopt;
}

std::string_view PeriodTypeName(PeriodType type) {
  return kPeriodTypeNames[static_cast<std::size_t>(type)];
}

Period CreatePeriod(PeriodType type, std::chrono::sys_days date) {
  return MakePeriod(type, StartOfPeriod(type, date));
}

absl::StatusOr<Period> ParseIsoPeriod(std::string_view iso) {
  std::optional<Period> period = ParsePeriod(iso);
  if (!period) {
    return absl::InvalidArgumentError(
        absl::StrCat(QuoteForMessage(iso), " is not a valid ISO period"));
  }
  // PostgreSQL has no year 0 (0000 is 1 BC there), and ids have 4-digit years.
  const int first_year = YearOf(year_month_day{period->start});
  const int last_year = YearOf(year_month_day{period->end});
  if (first_year < kMinYear || last_year > kMaxYear) {
    return absl::InvalidArgumentError(
        absl::StrCat(QuoteForMessage(iso), " is not a valid ISO period: it runs from ",
                     FormatDate(period->start), " to ", FormatDate(period->end),
                     ", and periods must lie within the years ", kMinYear, " to ", kMaxYear));
  }
  return *period;
}

namespace {

// The id of the week (or two weeks) of "type" that starts on "start": "2024W1", "2024WedW1",
// "2024BiW1".
void AppendWeekId(PeriodType type, sys_days start, IsoIdBuilder* id) {
  if (type == PeriodType::kBiWeekly) {
    const WeekDate week = ToWeekDate(start, std::chrono::Monday);
    id->Int(week.year);
    id->Text("BiW");
    id->Int(week.week / 2 + 1);
    return;
  }
  const WeekDate week = ToWeekDate(start, *FirstDayOfWeek(type));
  id->Int(week.year);
  if (type == PeriodType::kWeeklyWednesday) id->Text("Wed");
  if (type == PeriodType::kWeeklyThursday) id->Text("Thu");
  if (type == PeriodType::kWeeklyFriday) id->Text("Fri");
  if (type == PeriodType::kWeeklySaturday) id->Text("Sat");
  if (type == PeriodType::kWeeklySunday) id->Text("Sun");
  id->Text("W");
  id->Int(week.week);
}

// The id of the financial year of "type" that starts in "start_year": "2024April", and
// "2024Nov" for the year starting on 2023-11-01.
void AppendFinancialYearId(PeriodType type, int start_year, IsoIdBuilder* id) {
  switch (type) {
    case PeriodType::kFinancialFeb:
      id->Int(start_year);
      id->Text("Feb");
      return;
    case PeriodType::kFinancialApril:
      id->Int(start_year);
      id->Text("April");
      return;
    case PeriodType::kFinancialJuly:
      id->Int(start_year);
      id->Text("July");
      return;
    case PeriodType::kFinancialAug:
      id->Int(start_year);
      id->Text("Aug");
      return;
    case PeriodType::kFinancialSep:
      id->Int(start_year);
      id->Text("Sep");
      return;
    case PeriodType::kFinancialOct:
      id->Int(start_year);
      id->Text("Oct");
      return;
    default:  // FinancialNov
      id->Int(start_year + 1);
      id->Text("Nov");
      return;
  }
}

}  // namespace

std::string FormatIsoPeriod(PeriodType type, std::chrono::sys_days start) {
  const sys_days s = StartOfPeriod(type, start);
  const year_month_day ymd{s};
  const int y = YearOf(ymd);
  const int m = MonthOf(ymd);
  IsoIdBuilder id;
  switch (type) {
    case PeriodType::kDaily:
      id.Int(y);
      id.TwoDigits(m);
      id.TwoDigits(static_cast<int>(static_cast<unsigned>(ymd.day())));
      break;
    case PeriodType::kWeekly:
    case PeriodType::kWeeklyWednesday:
    case PeriodType::kWeeklyThursday:
    case PeriodType::kWeeklyFriday:
    case PeriodType::kWeeklySaturday:
    case PeriodType::kWeeklySunday:
    case PeriodType::kBiWeekly:
      AppendWeekId(type, s, &id);
      break;
    case PeriodType::kMonthly:
      id.Int(y);
      id.TwoDigits(m);
      break;
    case PeriodType::kBiMonthly:
      id.Int(y);
      id.TwoDigits((m + 1) / 2);
      id.Text("B");
      break;
    case PeriodType::kQuarterly:
      id.Int(y);
      id.Text("Q");
      id.Int((m - 1) / 3 + 1);
      break;
    case PeriodType::kQuarterlyNov:
      // Starts in November (Q1 of the next year), February, May, August.
      id.Int(m == 11 ? y + 1 : y);
      id.Text("NovQ");
      id.Int(m == 11 ? 1 : (m + 4) / 3);
      break;
    case PeriodType::kSixMonthly:
      id.Int(y);
      id.Text(m == 1 ? "S1" : "S2");
      break;
    case PeriodType::kSixMonthlyApril:
      id.Int(y);
      id.Text(m == 4 ? "AprilS1" : "AprilS2");
      break;
    case PeriodType::kSixMonthlyNov:
      id.Int(m == 11 ? y + 1 : y);
      id.Text(m == 11 ? "NovS1" : "NovS2");
      break;
    case PeriodType::kYearly:
      id.Int(y);
      break;
    case PeriodType::kFinancialFeb:
    case PeriodType::kFinancialApril:
    case PeriodType::kFinancialJuly:
    case PeriodType::kFinancialAug:
    case PeriodType::kFinancialSep:
    case PeriodType::kFinancialOct:
    case PeriodType::kFinancialNov:
      AppendFinancialYearId(type, y, &id);
      break;
  }
  return id.Build();
}

}  // namespace dvexport::dhis2
