// Verify and CheckPerCall against the test PostgreSQL: users, roles, groups and tokens made in
// DHIS2 2.42's format in its tables (through DVEXPORT_TEST_PG_ADMIN, ids 8,700,000 and up,
// removed before and after each test), read through the read-only role as the service reads
// them. Every DHIS2 message, V1 and V2 tokens, expiry, each refused owner, bcrypt $2a$/$2b$/$2y$,
// the same "Unauthorized" for an unknown user and a wrong password, and bounded waits.

#include "service/auth/verify.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "service/auth/password.h"
#include "service/db/connection_pool.h"
#include "service/db/read_session.h"
#include "service/dhis2/api_token.h"
#include "tests/db/db_test_support.h"
#include "tests/support/api_token_rows.h"

namespace dvexport::auth {
namespace {

using std::chrono::system_clock;

constexpr int64_t kBase = 8'700'000;  // userinfoid, userroleid, usergroupid, apitokenid range
constexpr int64_t kSuperRole = kBase + 900;
constexpr int64_t kPlainRole = kBase + 901;
constexpr int64_t kTwoFactorRole = kBase + 902;
constexpr int64_t kGroupA = kBase + 800;
constexpr int64_t kGroupB = kBase + 801;
constexpr const char* kPassword = "correct horse";

// Runs "sql" with "params" as the admin.
template <typename... Params>
void AdminExec(const std::string& sql, const Params&... params) {
  pqxx::connection conn(db::TestConninfo(/*admin=*/true));
  pqxx::nontransaction tx(conn);
  tx.exec_params(sql, params...);
}

// An 11-character DHIS2 uid: two letters and the id in nine digits.
std::string Uid(const std::string& letters, int64_t id) {
  const std::string digits = std::to_string(id % 1'000'000'000);
  return letters + std::string(9 - digits.size(), '0') + digits;
}

struct UserOptions {
  std::string password_hash;  // empty: NULL
  std::string disabled = "NULL";
  std::string account_expiry = "NULL";         // an SQL expression
  std::string password_last_updated = "NULL";  // an SQL expression
  std::string two_factor_type = "NOT_ENABLED";
  std::string external_auth = "NULL";
};

class VerifyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One hash per prefix at a low cost: the check is the same at DHIS2's cost 10.
    for (const char* prefix : {"$2a$", "$2b$", "$2y$"}) {
      absl::StatusOr<std::string> hash = BcryptHash(kPassword, prefix, 5);
      ASSERT_TRUE(hash.ok()) << hash.status();
      hashes_->push_back(*hash);
    }
  }

  void SetUp() override {
    Cleanup();
    const std::vector<std::string> setting =
        db::AdminColumn("SELECT value FROM systemsetting WHERE name = 'credentialsExpires'");
    if (!setting.empty()) saved_setting_ = setting[0];
    for (auto [id, name] : {std::pair{kSuperRole, "super"}, std::pair{kPlainRole, "plain"},
                            std::pair{kTwoFactorRole, "2fa"}}) {
      AdminExec(
          "INSERT INTO userrole (userroleid, uid, created, lastupdated, name) "
          "VALUES ($1, $2, now(), now(), $3)",
          id, Uid("vr", id), absl::StrCat("verify test ", name));
    }
    AdminExec("INSERT INTO userroleauthorities VALUES ($1, 'ALL')", kSuperRole);
    AdminExec("INSERT INTO userroleauthorities VALUES ($1, 'F_EXPORT_DATA')", kPlainRole);
    AdminExec("INSERT INTO userrolerestrictions VALUES ($1, 'R_ENABLE_2FA')", kTwoFactorRole);
    // B's uid sorts before A's: the principal's groups come sorted.
    AdminExec(
        "INSERT INTO usergroup (usergroupid, uid, created, lastupdated, name) VALUES "
        "($1, 'vgZZZZZZZZZ', now(), now(), 'verify test A'), "
        "($2, 'vgAAAAAAAAA', now(), now(), 'verify test B')",
        kGroupA, kGroupB);
  }

  void TearDown() override {
    Cleanup();
    if (saved_setting_) {
      AdminExec("UPDATE systemsetting SET value = $1 WHERE name = 'credentialsExpires'",
                *saved_setting_);
    } else {
      AdminExec("DELETE FROM systemsetting WHERE name = 'credentialsExpires'");
    }
  }

  static void Cleanup() {
    const int64_t low = kBase, high = kBase + 999;
    AdminExec("DELETE FROM api_token WHERE apitokenid BETWEEN $1 AND $2", low, high);
    AdminExec("DELETE FROM usergroupmembers WHERE userid BETWEEN $1 AND $2", low, high);
    AdminExec("DELETE FROM userrolemembers WHERE userid BETWEEN $1 AND $2", low, high);
    AdminExec("DELETE FROM userroleauthorities WHERE userroleid BETWEEN $1 AND $2", low, high);
    AdminExec("DELETE FROM userrolerestrictions WHERE userroleid BETWEEN $1 AND $2", low, high);
    AdminExec("DELETE FROM userrole WHERE userroleid BETWEEN $1 AND $2", low, high);
    AdminExec("DELETE FROM usergroup WHERE usergroupid BETWEEN $1 AND $2", low, high);
    AdminExec("DELETE FROM userinfo WHERE userinfoid BETWEEN $1 AND $2", low, high);
  }

  static void SetCredentialsExpires(const std::string& value) {
    AdminExec(
        "INSERT INTO systemsetting (systemsettingid, name, value) "
        "VALUES ($1, 'credentialsExpires', $2) ON CONFLICT (name) DO UPDATE SET value = $2",
        kBase, value);
  }

  // A user "name" with id kBase + n; the timestamps are SQL expressions (UTC).
  static int64_t AddUser(int n, const std::string& name, const UserOptions& options = {}) {
    const int64_t id = kBase + n;
    const std::optional<std::string> hash =
        options.password_hash.empty() ? std::nullopt : std::optional(options.password_hash);
    AdminExec(
        absl::StrCat("INSERT INTO userinfo (userinfoid, uid, lastupdated, username, password, "
                     "disabled, accountexpiry, passwordlastupdated, twofactortype, externalauth, "
                     "surname, firstname) VALUES ($1, $2, now(), $3, $4, ",
                     options.disabled, ", ", options.account_expiry, ", ",
                     options.password_last_updated, ", $5, ", options.external_auth,
                     ", 'Test', 'Verify')"),
        id, Uid("vu", id), name, hash, options.two_factor_type);
    return id;
  }

  static void AddRole(int64_t user, int64_t role) {
    AdminExec("INSERT INTO userrolemembers (userroleid, userid) VALUES ($1, $2)", role, user);
  }
  static void AddGroup(int64_t user, int64_t group) {
    AdminExec("INSERT INTO usergroupmembers (usergroupid, userid) VALUES ($1, $2)", group, user);
  }

  // A token of "type" owned by "owner" (api_token.createdby), with "expire" (ms; nullopt: NULL)
  // and "attributes" (jsonb text). Returns the token.
  static std::string AddToken(int n, int64_t owner, dhis2::ApiTokenType type,
                              std::optional<int64_t> expire = std::nullopt,
                              const std::string& attributes = "{}") {
    const int64_t id = kBase + n;
    return test_support::AddApiToken(db::TestConninfo(/*admin=*/true), {.id = id,
                                                                        .uid = Uid("vt", id),
                                                                        .owner = owner,
                                                                        .type = type,
                                                                        .expire_ms = expire,
                                                                        .attributes = attributes});
  }

  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               system_clock::now().time_since_epoch())
        .count();
  }

  absl::StatusOr<Identity> VerifyValue(const std::string& authorization,
                                       system_clock::time_point now = system_clock::now()) {
    Credentials credentials;
    credentials.authorization.push_back(authorization);
    return VerifyCredentials(credentials, now);
  }

  absl::StatusOr<Identity> VerifyCredentials(const Credentials& credentials,
                                             system_clock::time_point now = system_clock::now()) {
    absl::StatusOr<PresentedCredential> presented = Present(credentials);
    if (!presented.ok()) return presented.status();
    db::ReadSession session(&pool_, db::ReadSessionOptions(), system_clock::now() + kDeadline);
    return Verify(session, *presented, now);
  }

  absl::StatusOr<Identity> VerifyToken(const std::string& token) {
    return VerifyValue("ApiToken " + token);
  }
  absl::StatusOr<Identity> VerifyBasic(const std::string& user, const std::string& password) {
    return VerifyValue("Basic " + absl::Base64Escape(user + ":" + password));
  }

  static void ExpectRefused(const absl::StatusOr<Identity>& identity, const std::string& message,
                            const std::string& reason) {
    ASSERT_FALSE(identity.ok()) << "expected: " << message;
    EXPECT_EQ(identity.status().code(), absl::StatusCode::kUnauthenticated) << identity.status();
    EXPECT_EQ(identity.status().message(), message);
    EXPECT_EQ(RefusalReason(identity.status()), reason) << identity.status();
  }

  static constexpr std::chrono::seconds kDeadline{30};
  static std::vector<std::string>* hashes_;
  db::ConnectionPool pool_{db::TestConninfo(), 2};
  std::optional<std::string> saved_setting_;
};

std::vector<std::string>* VerifyTest::hashes_ = new std::vector<std::string>();

TEST_F(VerifyTest, V2TokenOfASuperuserInTwoGroups) {
  const int64_t alice = AddUser(1, "verify_alice");
  AddRole(alice, kSuperRole);
  AddGroup(alice, kGroupA);
  AddGroup(alice, kGroupB);
  const std::string token = AddToken(1, alice, dhis2::ApiTokenType::kV2);
  absl::StatusOr<Identity> identity = VerifyToken(token);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->principal.user_id, alice);
  EXPECT_EQ(identity->principal.uid, Uid("vu", alice));
  EXPECT_EQ(identity->principal.username, "verify_alice");
  EXPECT_TRUE(identity->principal.superuser);
  EXPECT_EQ(identity->principal.group_uids,
            (std::vector<std::string>{"vgAAAAAAAAA", "vgZZZZZZZZZ"}));
  EXPECT_EQ(identity->principal.method, dhis2::AuthMethod::kApiToken);
  EXPECT_EQ(identity->principal.token_uid, Uid("vt", kBase + 1));
  EXPECT_FALSE(identity->token_expires_ms.has_value());
  EXPECT_EQ(identity->token_rules, dhis2::TokenRules());
  EXPECT_TRUE(CheckPerCall(*identity, "127.0.0.1", system_clock::now()).ok());
}

TEST_F(VerifyTest, V1TokenOfAPlainUser) {
  const int64_t bob = AddUser(2, "verify_bob");
  AddRole(bob, kPlainRole);
  AddRole(bob, kTwoFactorRole);  // R_ENABLE_2FA does not matter for a token
  const std::string token = AddToken(2, bob, dhis2::ApiTokenType::kV1);
  ASSERT_EQ(token.substr(0, 6), "d2pat_");
  absl::StatusOr<Identity> identity = VerifyToken(token);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->principal.username, "verify_bob");
  EXPECT_FALSE(identity->principal.superuser);
  EXPECT_TRUE(identity->principal.group_uids.empty());
}

TEST_F(VerifyTest, UnknownToken) {
  AddUser(3, "verify_carol");
  absl::StatusOr<std::string> token = dhis2::GenerateApiToken(
      dhis2::RandomApiTokenCode(dhis2::ApiTokenType::kV2), dhis2::ApiTokenType::kV2);
  ASSERT_TRUE(token.ok());
  ExpectRefused(VerifyToken(*token), "The API token does not exists", "unknown_token");
}

TEST_F(VerifyTest, TokenExpiry) {
  const int64_t owner = AddUser(4, "verify_dave");
  const int64_t now = NowMs();
  const system_clock::time_point at{std::chrono::milliseconds(now)};
  const std::string expired = AddToken(4, owner, dhis2::ApiTokenType::kV2, now - 1);
  const std::string expiring_now = AddToken(5, owner, dhis2::ApiTokenType::kV2, now);
  const std::string later = AddToken(6, owner, dhis2::ApiTokenType::kV2, now + 60'000);
  const std::string message = "Failed to authenticate API token, token has expired.";
  ExpectRefused(VerifyValue("ApiToken " + expired, at), message, "token_expired");
  ExpectRefused(VerifyValue("ApiToken " + expiring_now, at), message, "token_expired");
  absl::StatusOr<Identity> identity = VerifyValue("ApiToken " + later, at);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->token_expires_ms, now + 60'000);
  // A cached identity is checked again at each call.
  EXPECT_TRUE(CheckPerCall(*identity, "127.0.0.1", at + std::chrono::milliseconds(59'999)).ok());
  absl::Status status = CheckPerCall(*identity, "127.0.0.1", at + std::chrono::seconds(60));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(status.message(), message);
  EXPECT_EQ(RefusalReason(status), "token_expired");
}

TEST_F(VerifyTest, TokenOwnerMissing) {
  const std::string token = AddToken(7, kBase + 999, dhis2::ApiTokenType::kV2);
  ExpectRefused(VerifyToken(token), "The API token owner does not exists.", "token_owner_missing");
}

TEST_F(VerifyTest, RefusedTokenOwners) {
  const std::string message = "The API token is disabled, locked or 2FA is enabled.";
  SetCredentialsExpires("3");
  struct Case {
    std::string reason;
    UserOptions options;
  };
  std::vector<Case> cases(5);
  cases[0] = {"token_owner_disabled", {}};
  cases[0].options.disabled = "true";
  cases[1] = {"token_owner_account_expired", {}};
  cases[1].options.account_expiry = "(now() AT TIME ZONE 'UTC') - interval '1 minute'";
  cases[2] = {"token_owner_credentials_expired", {}};
  cases[2].options.password_last_updated = "(now() AT TIME ZONE 'UTC') - interval '4 months'";
  cases[3] = {"token_owner_two_factor_enabled", {}};
  cases[3].options.two_factor_type = "TOTP_ENABLED";
  cases[4] = {"token_owner_two_factor_enabled", {}};
  cases[4].options.two_factor_type = "EMAIL_ENABLED";
  for (size_t i = 0; i < cases.size(); ++i) {
    const int64_t owner = AddUser(10 + i, absl::StrCat("verify_refused_", i), cases[i].options);
    const std::string token = AddToken(10 + i, owner, dhis2::ApiTokenType::kV2);
    SCOPED_TRACE(cases[i].reason);
    ExpectRefused(VerifyToken(token), message, cases[i].reason);
  }
}

TEST_F(VerifyTest, AcceptedTokenOwners) {
  SetCredentialsExpires("3");
  std::vector<UserOptions> owners(6);
  owners[0].disabled = "false";
  owners[1].external_auth = "true";  // does not matter for a token
  owners[2].account_expiry = "(now() AT TIME ZONE 'UTC') + interval '1 day'";
  owners[3].password_last_updated = "(now() AT TIME ZONE 'UTC') - interval '2 months'";
  owners[4].two_factor_type = "ENROLLING_TOTP";
  owners[5].password_last_updated = "(now() AT TIME ZONE 'UTC') - interval '5 years'";
  for (size_t i = 0; i < owners.size(); ++i) {
    if (i == 5) SetCredentialsExpires("0");  // 0: passwords never expire
    const int64_t owner = AddUser(20 + i, absl::StrCat("verify_accepted_", i), owners[i]);
    const std::string token = AddToken(20 + i, owner, dhis2::ApiTokenType::kV2);
    absl::StatusOr<Identity> identity = VerifyToken(token);
    EXPECT_TRUE(identity.ok()) << i << ": " << identity.status();
  }
}

TEST_F(VerifyTest, CredentialsExpiresSettingForms) {
  const int64_t owner = AddUser(30, "verify_setting", [] {
    UserOptions options;
    options.password_last_updated = "(now() AT TIME ZONE 'UTC') - interval '4 months'";
    return options;
  }());
  const std::string token = AddToken(30, owner, dhis2::ApiTokenType::kV2);
  for (const std::string value : {"3", " 3 ", "\"3\""}) {
    SetCredentialsExpires(value);
    ExpectRefused(VerifyToken(token), "The API token is disabled, locked or 2FA is enabled.",
                  "token_owner_credentials_expired");
  }
  for (const std::string value : {"5", "0", "three", "-3", ""}) {
    SetCredentialsExpires(value);
    EXPECT_TRUE(VerifyToken(token).ok()) << value;
  }
  AdminExec("DELETE FROM systemsetting WHERE name = 'credentialsExpires'");
  EXPECT_TRUE(VerifyToken(token).ok());
}

TEST_F(VerifyTest, TokenRequestRules) {
  const int64_t owner = AddUser(40, "verify_rules");
  const std::string ip_token =
      AddToken(40, owner, dhis2::ApiTokenType::kV2, std::nullopt,
               R"([{"type":"IpAllowedList","allowedIps":["10.0.0.1","::1"]},)"
               R"({"type":"IpAllowedList","allowedIps":["10.0.0.2"]}])");  // the first one counts
  absl::StatusOr<Identity> identity = VerifyToken(ip_token);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->token_rules.allowed_ips, (std::vector<std::string>{"10.0.0.1", "::1"}));
  EXPECT_TRUE(CheckPerCall(*identity, "10.0.0.1", system_clock::now()).ok());
  EXPECT_TRUE(CheckPerCall(*identity, "::1", system_clock::now()).ok());
  absl::Status status = CheckPerCall(*identity, "10.0.0.2", system_clock::now());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(status.message(),
            "Failed to authenticate API token, request ip address is not allowed.");
  EXPECT_EQ(RefusalReason(status), "ip_not_allowed");

  const std::string post_token =
      AddToken(41, owner, dhis2::ApiTokenType::kV2, std::nullopt,
               R"([{"type":"MethodAllowedList","allowedMethods":["POST"]}])");
  identity = VerifyToken(post_token);
  ASSERT_TRUE(identity.ok()) << identity.status();
  status = CheckPerCall(*identity, "10.0.0.1", system_clock::now());
  EXPECT_EQ(status.message(),
            "Failed to authenticate API token, request http method is not allowed.");
  EXPECT_EQ(RefusalReason(status), "method_not_allowed");

  const std::string get_token =
      AddToken(42, owner, dhis2::ApiTokenType::kV2, std::nullopt,
               R"([{"type":"MethodAllowedList","allowedMethods":["POST","GET"]},)"
               R"({"type":"IpAllowedList","allowedIps":[]}])");  // empty: no rule
  identity = VerifyToken(get_token);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_TRUE(CheckPerCall(*identity, "10.9.9.9", system_clock::now()).ok());

  const std::string referrer_token =
      AddToken(43, owner, dhis2::ApiTokenType::kV2, std::nullopt,
               R"([{"type":"RefererAllowedList","allowedReferrers":["https://x.org/app"]}])");
  identity = VerifyToken(referrer_token);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->token_rules.allowed_referrers,
            (std::vector<std::string>{"https://x.org/app"}));
  status = CheckPerCall(*identity, "10.0.0.1", system_clock::now());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(status.message().substr(0, 82),
            "Failed to authenticate API token, request http referrer is missing or not allowed.");
  EXPECT_NE(status.message().find("a gRPC call carries no Referer"), absl::string_view::npos);
  EXPECT_EQ(RefusalReason(status), "referrer_required");

  // Not a list of rules, or lists that are not arrays: no rules.
  const std::string odd_token =
      AddToken(44, owner, dhis2::ApiTokenType::kV2, std::nullopt,
               R"([1, {"type":"IpAllowedList","allowedIps":"10.0.0.1"}, {"allowedIps":["x"]}])");
  identity = VerifyToken(odd_token);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->token_rules, dhis2::TokenRules());
}

TEST_F(VerifyTest, BasicWithEachBcryptPrefix) {
  for (size_t i = 0; i < hashes_->size(); ++i) {
    UserOptions options;
    options.password_hash = (*hashes_)[i];
    const int64_t id = AddUser(50 + i, absl::StrCat("verify_basic_", i), options);
    AddGroup(id, kGroupA);
    absl::StatusOr<Identity> identity = VerifyBasic(absl::StrCat("verify_basic_", i), kPassword);
    ASSERT_TRUE(identity.ok()) << (*hashes_)[i] << ": " << identity.status();
    EXPECT_EQ(identity->principal.user_id, id);
    EXPECT_EQ(identity->principal.method, dhis2::AuthMethod::kPassword);
    EXPECT_TRUE(identity->principal.token_uid.empty());
    EXPECT_EQ(identity->principal.group_uids, std::vector<std::string>{"vgZZZZZZZZZ"});
    EXPECT_FALSE(identity->token_expires_ms.has_value());
    EXPECT_TRUE(CheckPerCall(*identity, "10.0.0.1", system_clock::now()).ok());
  }
}

TEST_F(VerifyTest, WrongPasswordIsAlwaysUnauthorized) {
  UserOptions plain;
  plain.password_hash = (*hashes_)[0];
  AddUser(60, "verify_erin", plain);
  UserOptions disabled = plain;
  disabled.disabled = "true";
  AddUser(61, "verify_frank", disabled);
  UserOptions no_password;
  AddUser(62, "verify_grace", no_password);
  // Unknown user, wrong password of an existing, of a disabled and of a password-less user,
  // and the right password with the name in another case (usernames are case-sensitive).
  ExpectRefused(VerifyBasic("verify_nobody", kPassword), "Unauthorized", "wrong_password");
  ExpectRefused(VerifyBasic("verify_erin", "wrong"), "Unauthorized", "wrong_password");
  ExpectRefused(VerifyBasic("verify_frank", "wrong"), "Unauthorized", "wrong_password");
  ExpectRefused(VerifyBasic("verify_grace", ""), "Unauthorized", "wrong_password");
  ExpectRefused(VerifyBasic("VERIFY_ERIN", kPassword), "Unauthorized", "wrong_password");
  ExpectRefused(VerifyBasic(std::string("verify_erin\0x", 13), kPassword), "Unauthorized",
                "wrong_password");
  ExpectRefused(VerifyBasic("verify_erin", std::string(kPassword) + std::string(70, 'x')),
                "Unauthorized", "wrong_password");
  // The right password of the disabled user: now DHIS2's message.
  ExpectRefused(VerifyBasic("verify_frank", kPassword), "Account disabled", "account_disabled");
  EXPECT_TRUE(VerifyBasic("verify_erin", kPassword).ok());
}

TEST_F(VerifyTest, RefusedAccountsWithTheRightPassword) {
  SetCredentialsExpires("3");
  struct Case {
    std::string reason;
    UserOptions options;
    bool two_factor_role = false;
  };
  std::vector<Case> cases(6);
  cases[0].reason = "account_expired";
  cases[0].options.account_expiry = "(now() AT TIME ZONE 'UTC') - interval '1 second'";
  cases[1].reason = "credentials_expired";
  cases[1].options.password_last_updated = "(now() AT TIME ZONE 'UTC') - interval '3 months'";
  cases[2].reason = "external_auth";
  cases[2].options.external_auth = "true";
  cases[3].reason = "two_factor_enabled";
  cases[3].options.two_factor_type = "TOTP_ENABLED";
  cases[4].reason = "two_factor_enabled";
  cases[4].options.two_factor_type = "EMAIL_ENABLED";
  cases[5].reason = "two_factor_enrolment";
  cases[5].two_factor_role = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    cases[i].options.password_hash = (*hashes_)[i % hashes_->size()];
    const std::string name = absl::StrCat("verify_account_", i);
    const int64_t id = AddUser(70 + i, name, cases[i].options);
    if (cases[i].two_factor_role) AddRole(id, kTwoFactorRole);
    SCOPED_TRACE(cases[i].reason);
    ExpectRefused(VerifyBasic(name, kPassword), "Unauthorized", cases[i].reason);
  }
}

TEST_F(VerifyTest, CertificateUsers) {
  const int64_t id = AddUser(80, "verify_sibling");
  AddRole(id, kPlainRole);
  UserOptions disabled;
  disabled.disabled = "true";
  AddUser(81, "verify_retired", disabled);
  Credentials credentials;
  credentials.certificate_user = "verify_sibling";
  absl::StatusOr<Identity> identity = VerifyCredentials(credentials);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(identity->principal.user_id, id);
  EXPECT_EQ(identity->principal.method, dhis2::AuthMethod::kCertificate);
  EXPECT_TRUE(CheckPerCall(*identity, "10.0.0.1", system_clock::now()).ok());
  credentials.certificate_user = "verify_stranger";
  identity = VerifyCredentials(credentials);
  ASSERT_FALSE(identity.ok());
  EXPECT_EQ(identity.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(RefusalReason(identity.status()), "unknown_certificate_user");
  credentials.certificate_user = "verify_retired";
  identity = VerifyCredentials(credentials);
  ASSERT_FALSE(identity.ok());
  EXPECT_EQ(RefusalReason(identity.status()), "certificate_user_disabled");
}

TEST_F(VerifyTest, LookupsEndAtTheDeadlineAndAtCancel) {
  const int64_t owner = AddUser(90, "verify_waiter");
  const std::string token = AddToken(90, owner, dhis2::ApiTokenType::kV2);
  absl::StatusOr<PresentedCredential> presented =
      Present(Credentials{{"ApiToken " + token}, std::nullopt, "GET", std::nullopt});
  ASSERT_TRUE(presented.ok());
  {
    // A deadline already passed: no statement starts.
    db::ReadSession session(&pool_, db::ReadSessionOptions(),
                            system_clock::now() - std::chrono::seconds(1));
    absl::StatusOr<Identity> identity = Verify(session, *presented, system_clock::now());
    EXPECT_EQ(identity.status().code(), absl::StatusCode::kDeadlineExceeded) << identity.status();
  }
  {
    db::ReadSession session(&pool_, db::ReadSessionOptions(), system_clock::time_point::max());
    session.Cancel();
    absl::StatusOr<Identity> identity = Verify(session, *presented, system_clock::now());
    EXPECT_EQ(identity.status().code(), absl::StatusCode::kCancelled) << identity.status();
  }
  // A lookup blocked behind a lock ends at the deadline (the watchdog cancels it).
  pqxx::connection admin(db::TestConninfo(/*admin=*/true));
  pqxx::nontransaction lock(admin);
  lock.exec("BEGIN; LOCK TABLE api_token IN ACCESS EXCLUSIVE MODE");
  const auto start = std::chrono::steady_clock::now();
  {
    db::ReadSession session(&pool_, db::ReadSessionOptions(),
                            system_clock::now() + std::chrono::milliseconds(300));
    absl::StatusOr<Identity> identity = Verify(session, *presented, system_clock::now());
    EXPECT_EQ(identity.status().code(), absl::StatusCode::kDeadlineExceeded) << identity.status();
  }
  // Bounded: the watchdog's cancel ends it within about a second of the deadline.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  lock.exec("ROLLBACK");
  // The pool's connections are usable again.
  EXPECT_TRUE(VerifyToken(token).ok());
}

}  // namespace
}  // namespace dvexport::auth
