// DHIS2 2.42's account checks: Joda-Time's Months.monthsBetween at month ends and leap days
// (credentialsExpires), account expiry at its exact millisecond, two-factor states, and the
// order in which Basic authentication and the API token manager refuse.

#include "service/dhis2/account.h"

#include <gtest/gtest.h>

#include "common/civil_date.h"

namespace dvexport::dhis2 {
namespace {

// Milliseconds since the epoch of a UTC date and time.
int64_t Ms(int64_t year, int64_t month, int64_t day, int64_t hour = 0, int64_t minute = 0,
           int64_t second = 0, int64_t ms = 0) {
  return (common::DaysFromCivil(year, month, day) * 86'400 + hour * 3600 + minute * 60 + second) *
             1000 +
         ms;
}

TEST(MonthsBetweenTest, WholeMonthsWithDayAndTime) {
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 15, 10), Ms(2026, 2, 15, 10)), 1);
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 15, 10), Ms(2026, 2, 15, 9, 59, 59, 999)), 0);
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 15, 10), Ms(2026, 1, 15, 10)), 0);
  EXPECT_EQ(MonthsBetween(Ms(2025, 3, 1), Ms(2026, 3, 1)), 12);
  EXPECT_EQ(MonthsBetween(Ms(2025, 3, 1), Ms(2026, 2, 28, 23, 59, 59, 999)), 11);
}

TEST(MonthsBetweenTest, EndOnTheLastDayOfAShorterMonth) {
  // Joda clamps the start's day to the end month's last day: Jan 31 + 1 month is Feb 28.
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 31, 10), Ms(2026, 2, 28, 10)), 1);
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 31, 10), Ms(2026, 2, 28, 9, 59)), 0);
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 30), Ms(2026, 2, 28)), 1);
  EXPECT_EQ(MonthsBetween(Ms(2026, 3, 31), Ms(2026, 4, 30)), 1);
  EXPECT_EQ(MonthsBetween(Ms(2026, 3, 31), Ms(2026, 4, 29, 23, 59)), 0);
  // Leap years: Feb 29 exists.
  EXPECT_EQ(MonthsBetween(Ms(2024, 1, 31), Ms(2024, 2, 29)), 1);
  EXPECT_EQ(MonthsBetween(Ms(2024, 1, 31), Ms(2024, 2, 28)), 0);
  EXPECT_EQ(MonthsBetween(Ms(2024, 2, 29), Ms(2025, 2, 28)), 12);
  EXPECT_EQ(MonthsBetween(Ms(2024, 2, 29), Ms(2025, 2, 27, 23)), 11);
  // The end not on its month's last day: no clamping.
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 31), Ms(2026, 3, 30)), 1);
  EXPECT_EQ(MonthsBetween(Ms(2026, 1, 31), Ms(2026, 3, 31)), 2);
}

TEST(MonthsBetweenTest, BackwardsIsNegativeAndBefore1970Works) {
  EXPECT_EQ(MonthsBetween(Ms(2026, 2, 15), Ms(2026, 1, 15)), -1);
  EXPECT_EQ(MonthsBetween(Ms(2026, 2, 15), Ms(2026, 1, 16)), 0);
  EXPECT_EQ(MonthsBetween(Ms(1969, 12, 31, 23), Ms(1970, 1, 31, 23)), 1);
  EXPECT_EQ(MonthsBetween(Ms(1969, 12, 31, 23), Ms(1970, 1, 31, 22)), 0);
}

TEST(CredentialsExpiredTest, MonthsSincePasswordLastUpdated) {
  Account account;
  account.password_last_updated_ms = Ms(2026, 1, 31, 12);
  EXPECT_FALSE(CredentialsExpired(account, 0, Ms(2100, 1, 1)));  // 0: never
  EXPECT_FALSE(CredentialsExpired(account, 3, Ms(2026, 4, 30, 11, 59)));
  EXPECT_TRUE(CredentialsExpired(account, 3, Ms(2026, 4, 30, 12)));
  EXPECT_TRUE(CredentialsExpired(account, 1, Ms(2026, 2, 28, 12)));
  account.password_last_updated_ms.reset();
  EXPECT_FALSE(CredentialsExpired(account, 1, Ms(2100, 1, 1)));  // never set: never expires
}

TEST(AccountTest, TwoFactorEnabledStates) {
  EXPECT_TRUE(TwoFactorEnabled("TOTP_ENABLED"));
  EXPECT_TRUE(TwoFactorEnabled("EMAIL_ENABLED"));
  EXPECT_FALSE(TwoFactorEnabled("NOT_ENABLED"));
  EXPECT_FALSE(TwoFactorEnabled("ENROLLING_TOTP"));
  EXPECT_FALSE(TwoFactorEnabled("ENROLLING_EMAIL"));
  EXPECT_FALSE(TwoFactorEnabled("totp_enabled"));
}

TEST(AccountTest, AccountExpiresAtItsMillisecond) {
  Account account;
  const int64_t now = Ms(2026, 6, 1, 8);
  account.account_expiry_ms = now + 1;
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kNone);
  account.account_expiry_ms = now;  // accountexpiry <= now
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kAccountExpired);
  EXPECT_EQ(CheckTokenOwnerAccount(account, 0, now), AccountRefusal::kAccountExpired);
}

TEST(AccountTest, PasswordAccountOrder) {
  const int64_t now = Ms(2026, 6, 1);
  Account account;
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kNone);
  account.disabled = true;
  account.account_expiry_ms = now - 1;
  account.password_last_updated_ms = Ms(2020, 1, 1);
  account.external_auth = true;
  account.two_factor_type = "TOTP_ENABLED";
  EXPECT_EQ(CheckPasswordAccount(account, 1, now), AccountRefusal::kDisabled);
  account.disabled = false;
  EXPECT_EQ(CheckPasswordAccount(account, 1, now), AccountRefusal::kAccountExpired);
  account.account_expiry_ms.reset();
  EXPECT_EQ(CheckPasswordAccount(account, 1, now), AccountRefusal::kCredentialsExpired);
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kExternalAuth);
  account.external_auth = false;
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kTwoFactorEnabled);
  account.two_factor_required = true;  // R_ENABLE_2FA, already enabled: still 2FA
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kTwoFactorEnabled);
  account.two_factor_type = "ENROLLING_TOTP";
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kTwoFactorEnrolment);
  account.two_factor_required = false;
  EXPECT_EQ(CheckPasswordAccount(account, 0, now), AccountRefusal::kNone);
}

TEST(AccountTest, TokenOwnerIgnoresExternalAuthAndEnrolment) {
  const int64_t now = Ms(2026, 6, 1);
  Account account;
  account.external_auth = true;
  account.two_factor_required = true;
  EXPECT_EQ(CheckTokenOwnerAccount(account, 0, now), AccountRefusal::kNone);
  account.two_factor_type = "EMAIL_ENABLED";
  EXPECT_EQ(CheckTokenOwnerAccount(account, 0, now), AccountRefusal::kTwoFactorEnabled);
  account.password_last_updated_ms = Ms(2026, 3, 1);
  EXPECT_EQ(CheckTokenOwnerAccount(account, 3, now), AccountRefusal::kCredentialsExpired);
  account.disabled = true;
  EXPECT_EQ(CheckTokenOwnerAccount(account, 3, now), AccountRefusal::kDisabled);
  EXPECT_STREQ(AccountRefusalName(AccountRefusal::kDisabled), "disabled");
}

}  // namespace
}  // namespace dvexport::dhis2
