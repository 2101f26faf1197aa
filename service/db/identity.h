#ifndef DVEXPORT_SERVICE_DB_IDENTITY_H_
#define DVEXPORT_SERVICE_DB_IDENTITY_H_

// Authentication's reads of DHIS2 2.42's user tables (userinfo, userrolemembers,
// userroleauthorities, userrolerestrictions, usergroupmembers, usergroup, api_token,
// systemsetting), each in one READ ONLY transaction of a ReadSession (ReadSession::Lookup), with
// bind parameters only. The rules applied to the rows are service/dhis2/account.h and
// service/auth/verify.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "service/db/read_session.h"
#include "service/dhis2/account.h"
#include "service/dhis2/api_token.h"

namespace dvexport::db {

// A userinfo row and what DHIS2's UserDetails adds to it.
struct UserRow {
  int64_t user_id = 0;                       // userinfoid
  std::string uid;                           // uid
  std::string username;                      // username
  std::optional<std::string> password_hash;  // password (bcrypt), NULL: none
  dhis2::Account account;                    // the columns of the account checks
  bool superuser = false;                    // a role of the user has the authority ALL
  std::vector<std::string> group_uids;       // usergroupmembers' groups, sorted, unique
};

// An api_token row.
struct ApiTokenRow {
  int64_t token_id = 0;              // apitokenid
  std::string uid;                   // uid
  std::optional<int64_t> owner_id;   // createdby
  std::optional<int64_t> expire_ms;  // expire (ms since the epoch), NULL: never
  // The first IpAllowedList, MethodAllowedList and RefererAllowedList of attributes (a JSON
  // array of objects with "type"), each list as stored.
  dhis2::TokenRules rules;
};

struct UserLookup {
  std::optional<UserRow> user;  // nullopt: no user of that name
  // System setting credentialsExpires (months; 0 when the table or the row is absent, or the
  // value is not a whole number).
  int64_t credentials_expires_months = 0;
};

struct ApiTokenLookup {
  std::optional<ApiTokenRow> token;  // nullopt: no token with that key
  std::optional<UserRow> owner;      // the token's createdby user, if it exists
  int64_t credentials_expires_months = 0;
};

// The user whose username is exactly "username" (case-sensitive, as DHIS2's
// getUserByUsername(username, false)), in one Lookup of "session". Errors as Lookup's.
absl::StatusOr<UserLookup> LookUpUser(ReadSession& session, absl::string_view username);

// The token whose api_token.key is "key" and its owner, in one Lookup of "session".
absl::StatusOr<ApiTokenLookup> LookUpApiToken(ReadSession& session, absl::string_view key);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_IDENTITY_H_
