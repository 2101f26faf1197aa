#include "service/dhis2/account.h"

#include "common/civil_date.h"

namespace dvexport::dhis2 {
namespace {

constexpr int64_t kMsPerDay = 86'400'000;

// Floor division: the day of a time before 1970 is the one before it.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

bool IsLeap(int64_t year) { return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }

int64_t DaysInMonth(int64_t year, int64_t month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeap(year) ? 29 : kDays[month - 1];
}

// A UTC time as Joda's month field sees it: year, month, and the milliseconds since the start
// of the month (day of month and time of day).
struct MonthTime {
  int64_t year;
  int64_t month;
  int64_t day;
  int64_t ms_of_day;
  int64_t MsIntoMonth() const { return (day - 1) * kMsPerDay + ms_of_day; }
};

MonthTime ToMonthTime(int64_t ms) {
  const int64_t days = FloorDiv(ms, kMsPerDay);
  const common::CivilDate date = common::CivilFromDays(days);
  return MonthTime{date.year, date.month, date.day, ms - days * kMsPerDay};
}

bool AccountExpired(const Account& account, int64_t now_ms) {
  return account.account_expiry_ms && *account.account_expiry_ms <= now_ms;
}

}  // namespace

const char* AccountRefusalName(AccountRefusal refusal) {
  switch (refusal) {
    case AccountRefusal::kNone:
      return "none";
    case AccountRefusal::kDisabled:
      return "disabled";
    case AccountRefusal::kAccountExpired:
      return "account_expired";
    case AccountRefusal::kCredentialsExpired:
      return "credentials_expired";
    case AccountRefusal::kExternalAuth:
      return "external_auth";
    case AccountRefusal::kTwoFactorEnrolment:
      return "two_factor_enrolment";
    case AccountRefusal::kTwoFactorEnabled:
      return "two_factor_enabled";
  }
  return "unknown";
}

bool TwoFactorEnabled(absl::string_view two_factor_type) {
  return two_factor_type == "TOTP_ENABLED" || two_factor_type == "EMAIL_ENABLED";
}

int64_t MonthsBetween(int64_t start_ms, int64_t end_ms) {
  // BasicMonthOfYearDateTimeField.getDifferenceAsLong(end, start).
  if (end_ms < start_ms) return -MonthsBetween(end_ms, start_ms);
  const MonthTime end = ToMonthTime(end_ms);
  MonthTime start = ToMonthTime(start_ms);
  int64_t difference = (end.year - start.year) * 12 + end.month - start.month;
  // Adding months to the start clamps its day to the month's last day: an end on the last day
  // of its month counts as a whole month after a start on a later day of the month.
  if (end.day == DaysInMonth(end.year, end.month) && start.day > end.day) start.day = end.day;
  if (end.MsIntoMonth() < start.MsIntoMonth()) --difference;
  return difference;
}

bool CredentialsExpired(const Account& account, int64_t credentials_expires_months,
                        int64_t now_ms) {
  return credentials_expires_months > 0 && account.password_last_updated_ms &&
         MonthsBetween(*account.password_last_updated_ms, now_ms) >= credentials_expires_months;
}

AccountRefusal CheckPasswordAccount(const Account& account, int64_t credentials_expires_months,
                                    int64_t now_ms) {
  // DaoAuthenticationProvider's pre-checks, its post-check, then TwoFactorAuthenticationProvider.
  if (account.disabled) return AccountRefusal::kDisabled;
  if (AccountExpired(account, now_ms)) return AccountRefusal::kAccountExpired;
  if (CredentialsExpired(account, credentials_expires_months, now_ms)) {
    return AccountRefusal::kCredentialsExpired;
  }
  if (account.external_auth) return AccountRefusal::kExternalAuth;
  const bool two_factor = TwoFactorEnabled(account.two_factor_type);
  if (account.two_factor_required && !two_factor) return AccountRefusal::kTwoFactorEnrolment;
  if (two_factor) return AccountRefusal::kTwoFactorEnabled;
  return AccountRefusal::kNone;
}

AccountRefusal CheckTokenOwnerAccount(const Account& account, int64_t credentials_expires_months,
                                      int64_t now_ms) {
  if (account.disabled) return AccountRefusal::kDisabled;
  if (AccountExpired(account, now_ms)) return AccountRefusal::kAccountExpired;
  if (CredentialsExpired(account, credentials_expires_months, now_ms)) {
    return AccountRefusal::kCredentialsExpired;
  }
  if (TwoFactorEnabled(account.two_factor_type)) return AccountRefusal::kTwoFactorEnabled;
  return AccountRefusal::kNone;
}

}  // namespace dvexport::dhis2
