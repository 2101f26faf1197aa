#include "service/db/identity.h"

#include <algorithm>
#include <charconv>
#include <pqxx/result>
#include <string>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

namespace dvexport::db {
namespace {

// The columns every DHIS2 from 2.40 to 2.43 has (db/dhis2_schema.h), and the 2FA state as each
// version keeps it. Timestamps without time zone are read as UTC (the session's TimeZone, set by
// DatabaseConnection::SetUp), in whole milliseconds as Java reads them.
constexpr const char* kUserColumns =
    "SELECT u.userinfoid, u.uid, u.username, u.password, coalesce(u.disabled, false), "
    "floor(extract(epoch FROM u.accountexpiry) * 1000)::bigint, "
    "floor(extract(epoch FROM u.passwordlastupdated) * 1000)::bigint, "
    // 2FA: twofactortype since 2.42 (V2_42_29); before, a secret that is neither NULL nor empty
    // (User.isTwoFactorEnabled of 2.40 and 2.41, an enrolment under way included). to_jsonb reads
    // a column that may not exist without failing on the schemas that lack it.
    "coalesce(to_jsonb(u) ->> 'twofactortype', "
    "  CASE WHEN coalesce(to_jsonb(u) ->> 'secret', '') <> '' THEN 'TOTP_ENABLED' "
    "  ELSE 'NOT_ENABLED' END), "
    "coalesce(u.externalauth, false), "
    "EXISTS (SELECT 1 FROM userrolemembers m JOIN userroleauthorities a USING (userroleid) "
    "        WHERE m.userid = u.userinfoid AND a.authority = 'ALL'), "
    "EXISTS (SELECT 1 FROM userrolemembers m JOIN userrolerestrictions r USING (userroleid) "
    "        WHERE m.userid = u.userinfoid AND r.restriction = 'R_ENABLE_2FA') "
    "FROM userinfo u ";

constexpr const char* kGroupUids =
    "SELECT g.uid FROM usergroupmembers m JOIN usergroup g USING (usergroupid) "
    "WHERE m.userid = $1";

// The first attribute of each rule type, and its list's values in order. attributes is '{}'
// (an object) for a token without rules, and a value that is not a string list is no rule.
constexpr const char* kTokenRules =
    "WITH a AS ("
    "  SELECT x.e, x.ord FROM api_token t, jsonb_array_elements("
    "    CASE WHEN jsonb_typeof(t.attributes) = 'array' THEN t.attributes ELSE '[]' END)"
    "    WITH ORDINALITY AS x(e, ord)"
    "  WHERE t.apitokenid = $1 AND jsonb_typeof(x.e) = 'object'), "
    "f AS ("
    "  SELECT DISTINCT ON (e->>'type') e->>'type' AS type, "
    "    CASE e->>'type' WHEN 'IpAllowedList' THEN e->'allowedIps' "
    "      WHEN 'MethodAllowedList' THEN e->'allowedMethods' "
    "      WHEN 'RefererAllowedList' THEN e->'allowedReferrers' END AS list "
    "  FROM a WHERE e->>'type' IN ('IpAllowedList', 'MethodAllowedList', 'RefererAllowedList') "
    "  ORDER BY e->>'type', ord) "
    "SELECT f.type, l.value FROM f, jsonb_array_elements_text("
    "  CASE WHEN jsonb_typeof(f.list) = 'array' THEN f.list ELSE '[]' END)"
    "  WITH ORDINALITY AS l(value, n) "
    "WHERE l.value IS NOT NULL ORDER BY f.type, l.n";

std::string Text(const pqxx::field& field) { return std::string(field.c_str(), field.size()); }

std::optional<int64_t> OptionalInt(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return field.as<int64_t>();
}

// The user of the first row of "result" (kUserColumns) and its groups; nullopt for none.
std::optional<UserRow> ReadUser(pqxx::transaction_base& tx, const pqxx::result& result) {
  if (result.empty()) return std::nullopt;
  const pqxx::row row = result[0];
  UserRow user;
  user.user_id = row[0].as<int64_t>();
  user.uid = Text(row[1]);
  user.username = Text(row[2]);
  if (!row[3].is_null()) user.password_hash = Text(row[3]);
  user.account.disabled = row[4].as<bool>();
  user.account.account_expiry_ms = OptionalInt(row[5]);
  user.account.password_last_updated_ms = OptionalInt(row[6]);
  user.account.two_factor_type = row[7].is_null() ? "NOT_ENABLED" : Text(row[7]);
  user.account.external_auth = row[8].as<bool>();
  user.superuser = row[9].as<bool>();
  user.account.two_factor_required = row[10].as<bool>();
  for (const pqxx::row& group : tx.exec_params(kGroupUids, user.user_id)) {
    user.group_uids.push_back(Text(group[0]));
  }
  std::sort(user.group_uids.begin(), user.group_uids.end());
  user.group_uids.erase(std::unique(user.group_uids.begin(), user.group_uids.end()),
                        user.group_uids.end());
  return user;
}

// credentialsExpires: a whole number of months (DHIS2 2.42 stores settings as plain text; an
// older JSON string "3" is read too). Anything else is DHIS2's default, 0 (never).
int64_t ReadCredentialsExpires(pqxx::transaction_base& tx) {
  const pqxx::row exists = tx.exec1("SELECT to_regclass('systemsetting') IS NOT NULL");
  if (!exists[0].as<bool>()) return 0;
  const pqxx::result value =
      tx.exec("SELECT value FROM systemsetting WHERE name = 'credentialsExpires'");
  if (value.empty() || value[0][0].is_null()) return 0;
  absl::string_view text = absl::StripAsciiWhitespace(value[0][0].c_str());
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  int64_t months = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), months);
  if (error != std::errc() || end != text.data() + text.size() || months < 0) return 0;
  return months;
}

}  // namespace

absl::StatusOr<UserLookup> LookUpUser(ReadSession& session, absl::string_view username) {
  UserLookup lookup;
  absl::Status status = session.Lookup("looking up the user", [&](pqxx::transaction_base& tx) {
    lookup.credentials_expires_months = ReadCredentialsExpires(tx);
    lookup.user = ReadUser(tx, tx.exec_params(std::string(kUserColumns) + "WHERE u.username = $1",
                                              std::string(username)));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return lookup;
}

absl::StatusOr<ApiTokenLookup> LookUpApiToken(ReadSession& session, absl::string_view key) {
  ApiTokenLookup lookup;
  absl::Status status = session.Lookup("looking up the API token", [&](pqxx::transaction_base& tx) {
    const pqxx::result token =
        tx.exec_params("SELECT apitokenid, uid, createdby, expire FROM api_token WHERE key = $1",
                       std::string(key));
    if (token.empty()) return absl::OkStatus();
    ApiTokenRow row;
    row.token_id = token[0][0].as<int64_t>();
    row.uid = Text(token[0][1]);
    row.owner_id = OptionalInt(token[0][2]);
    row.expire_ms = OptionalInt(token[0][3]);
    for (const pqxx::row& rule : tx.exec_params(kTokenRules, row.token_id)) {
      const std::string type = Text(rule[0]);
      std::vector<std::string>* list = type == "IpAllowedList"       ? &row.rules.allowed_ips
                                       : type == "MethodAllowedList" ? &row.rules.allowed_methods
                                                                     : &row.rules.allowed_referrers;
      list->push_back(Text(rule[1]));
    }
    lookup.token = std::move(row);
    lookup.credentials_expires_months = ReadCredentialsExpires(tx);
    if (lookup.token->owner_id) {
      lookup.owner =
          ReadUser(tx, tx.exec_params(std::string(kUserColumns) + "WHERE u.userinfoid = $1",
                                      *lookup.token->owner_id));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return lookup;
}

}  // namespace dvexport::db
