#ifndef DVEXPORT_SERVICE_DHIS2_ACCOUNT_H_
#define DVEXPORT_SERVICE_DHIS2_ACCOUNT_H_

// DHIS2 2.42's account checks of a userinfo row, without I/O: what its UserDetails computes
// (enabled, accountNonExpired, credentialsNonExpired, isTwoFactorEnabled, externalAuth) and the
// order in which Basic authentication and the API token manager refuse an account.
// docs/SECURITY.md, "Authentication".

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace dvexport::dhis2 {

// What the account checks read of a userinfo row. Times are milliseconds since the epoch; a
// "timestamp without time zone" column is read as UTC.
struct Account {
  bool disabled = false;                            // userinfo.disabled (NULL: false)
  std::optional<int64_t> account_expiry_ms;         // userinfo.accountexpiry (NULL: never)
  std::optional<int64_t> password_last_updated_ms;  // userinfo.passwordlastupdated
  std::string two_factor_type = "NOT_ENABLED";      // userinfo.twofactortype
  bool external_auth = false;                       // userinfo.externalauth (NULL: false)
  // A role of the user has the restriction R_ENABLE_2FA (userrolerestrictions).
  bool two_factor_required = false;
};

// Why an account is refused, in the order the checks run.
enum class AccountRefusal {
  kNone,
  kDisabled,            // userinfo.disabled
  kAccountExpired,      // accountexpiry <= now
  kCredentialsExpired,  // credentialsExpires months since passwordlastupdated
  kExternalAuth,        // Basic only: the user signs in elsewhere (LDAP, OpenID)
  kTwoFactorEnrolment,  // Basic only: R_ENABLE_2FA while two-factor login is not enabled
  kTwoFactorEnabled,    // two-factor login on: only DHIS2's form login can carry the code
};

// "disabled", "account_expired", ...: for logs and metrics labels; "none" for kNone.
const char* AccountRefusalName(AccountRefusal refusal);

// twofactortype TOTP_ENABLED or EMAIL_ENABLED (UserDetails.isTwoFactorEnabled); the ENROLLING_
// states are not enabled.
bool TwoFactorEnabled(absl::string_view two_factor_type);

// Joda-Time's Months.monthsBetween(start, end) in UTC, as DHIS2's DateUtils.monthsBetween: the
// whole months from "start" to "end" (negative when end is before start), the day of month and
// the time of day counted: 01-31 10:00 to 02-28 10:00 is one month (the start's day is clamped
// to the end month's last day when the end is on that last day), to 02-28 09:59 none.
int64_t MonthsBetween(int64_t start_ms, int64_t end_ms);

// DefaultUserService.userNonExpired negated: credentialsExpires > 0, passwordlastupdated set,
// and MonthsBetween(passwordlastupdated, now) >= credentialsExpires.
bool CredentialsExpired(const Account& account, int64_t credentials_expires_months, int64_t now_ms);

// The checks of Basic authentication once the password matched (dvexport checks the password
// first; DHIS2 checks disabled and account expiry before it): disabled, account expired,
// credentials expired, external authentication, R_ENABLE_2FA enrolment, two-factor login.
AccountRefusal CheckPasswordAccount(const Account& account, int64_t credentials_expires_months,
                                    int64_t now_ms);

// The checks of an API token's owner (ApiTokenAuthManager; external authentication and
// R_ENABLE_2FA do not matter), also used for a certificate's user: disabled, account expired,
// credentials expired, two-factor login.
AccountRefusal CheckTokenOwnerAccount(const Account& account, int64_t credentials_expires_months,
                                      int64_t now_ms);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_ACCOUNT_H_
