#include "service/auth/verify.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/utf8_sequence.h"
#include "service/auth/password.h"
#include "service/db/identity.h"
#include "service/db/read_session.h"
#include "service/dhis2/account.h"

namespace dvexport::auth {
namespace {

// DHIS2's messages (ApiTokenAuthManager, FormLoginBasicAuthenticationEntryPoint).
constexpr absl::string_view kUnauthorized = "Unauthorized";
constexpr absl::string_view kTokenDoesNotExist = "The API token does not exists";
// 2.40's ApiTokenAuthManager says it with a full stop.
constexpr absl::string_view kTokenDoesNotExist240 = "The API token does not exists.";
constexpr absl::string_view kTokenExpired = "Failed to authenticate API token, token has expired.";
constexpr absl::string_view kTokenWithoutOwner = "The API token does not have any owner.";
constexpr absl::string_view kTokenOwnerMissing = "The API token owner does not exists.";
constexpr absl::string_view kTokenOwnerRefused =
    "The API token is disabled, locked or 2FA is enabled.";
constexpr absl::string_view kAccountDisabled = "Account disabled";

absl::Status Refused(absl::string_view message, absl::string_view reason) {
  return WithRefusalReason(absl::UnauthenticatedError(message),
                           std::string_view(reason.data(), reason.size()));
}

// "status" (Unauthenticated from service/dhis2) with "reason" attached.
absl::Status WithReason(absl::Status status, absl::string_view reason) {
  return WithRefusalReason(std::move(status), std::string_view(reason.data(), reason.size()));
}

// The cache key: HMAC-SHA-256, under a key drawn once per process, of the kind, the username's
// length, the username and the secret (the length keeps "ab" + "c" apart from "a" + "bc"). A
// plain hash would let whoever sees a key test guessed passwords at SHA-256's speed, not
// bcrypt's; the process key makes that impossible, and the cache needs no more than one
// process's keys.
std::string CacheKey(CredentialKind kind, absl::string_view username, absl::string_view secret) {
  static const std::array<unsigned char, 32>* const kProcessKey = [] {
    auto* key = new std::array<unsigned char, 32>();
    // Without randomness the key stays zero: still a correct cache key, only a plain hash.
    if (RAND_bytes(key->data(), key->size()) != 1) key->fill(0);
    return key;
  }();
  const char tag = kind == CredentialKind::kApiToken ? 't'
                   : kind == CredentialKind::kBasic  ? 'b'
                                                     : 'c';
  std::string material =
      absl::StrCat(absl::string_view(&tag, 1), username.size(), ":", username, secret);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac;
  unsigned int size = 0;
  HMAC(EVP_sha256(), kProcessKey->data(), kProcessKey->size(),
       reinterpret_cast<const unsigned char*>(material.data()), material.size(), mac.data(), &size);
  OPENSSL_cleanse(material.data(), material.size());
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(mac.data()), size));
}

// java.lang.String.trim: every character up to U+0020 off both ends.
absl::string_view JavaTrim(absl::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return text;
}

int Base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return c == '=' ? -2 : -1;
}

// java.util.Base64.getDecoder().decode: the standard alphabet, no line breaks, padding
// optional but correct when present, nothing after it; a single dangling character is an
// error. nullopt for what it rejects.
std::optional<std::string> JavaBase64Decode(absl::string_view text) {
  if (text.size() == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t bits = 0;
  int shift = 18;
  size_t i = 0;
  while (i < text.size()) {
    int value = Base64Value(static_cast<unsigned char>(text[i++]));
    if (value == -1) return std::nullopt;
    if (value == -2) {
      // "=" with nothing before it in the unit, or "xx=" not followed by a second "=".
      if ((shift == 6 && (i == text.size() || text[i++] != '=')) || shift == 18) {
        return std::nullopt;
      }
      break;
    }
    bits |= static_cast<uint32_t>(value) << shift;
    shift -= 6;
    if (shift < 0) {
      out.push_back(static_cast<char>(bits >> 16));
      out.push_back(static_cast<char>(bits >> 8));
      out.push_back(static_cast<char>(bits));
      shift = 18;
      bits = 0;
    }
  }
  if (shift == 6) {
    out.push_back(static_cast<char>(bits >> 16));
  } else if (shift == 0) {
    out.push_back(static_cast<char>(bits >> 16));
    out.push_back(static_cast<char>(bits >> 8));
  } else if (shift == 12) {
    return std::nullopt;  // one character of a unit: not enough bits for a byte
  }
  if (i < text.size()) return std::nullopt;  // something after the padding
  return out;
}

// new String(bytes, UTF_8): each ill-formed subpart becomes U+FFFD.
std::string JavaUtf8String(const std::string& bytes) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (common::WellFormedUtf8Prefix(data, bytes.size()) == bytes.size()) return bytes;
  std::string repaired(common::RepairedUtf8Size(data, bytes.size()), '\0');
  common::WriteRepairedUtf8(repaired.data(), data, bytes.size());
  return repaired;
}

// "Unauthorized", DHIS2's text, and over gRPC why (an HTTP client gets DHIS2's answer as it is).
std::string UnauthorizedBecause(Transport transport, absl::string_view why) {
  if (transport == Transport::kHttp) return std::string(kUnauthorized);
  return absl::StrCat(kUnauthorized, ": ", why);
}

absl::Status MalformedBasic(Transport transport, absl::string_view why) {
  return Refused(UnauthorizedBecause(transport, why), "malformed_basic");
}

// Spring Security's BasicAuthenticationConverter on a value that is not an API token. Over HTTP
// DHIS2 answers each refusal "Unauthorized" (FormLoginBasicAuthenticationEntryPoint; another
// scheme leaves the request anonymous, and an anonymous API request that is not a browser's
// gets "Unauthorized" from Http401LoginUrlAuthenticationEntryPoint).
absl::StatusOr<PresentedCredential> PresentBasic(absl::string_view authorization,
                                                 Transport transport) {
  const absl::string_view header = JavaTrim(authorization);
  if (!absl::StartsWithIgnoreCase(header, "Basic")) {
    return Refused(
        UnauthorizedBecause(transport, "the authorization scheme is neither ApiToken nor Basic"),
        "unsupported_scheme");
  }
  if (header.size() == 5) return MalformedBasic(transport, "the Basic credentials are empty");
  // substring(6): the scheme and the character after it, whatever it is.
  std::optional<std::string> decoded = JavaBase64Decode(header.substr(6));
  if (!decoded) return MalformedBasic(transport, "the Basic credentials are not valid base64");
  std::string token = JavaUtf8String(*decoded);
  OPENSSL_cleanse(decoded->data(), decoded->size());
  const size_t colon = token.find(':');
  if (colon == std::string::npos) {
    OPENSSL_cleanse(token.data(), token.size());
    return MalformedBasic(transport, "the Basic credentials are not username:password");
  }
  PresentedCredential credential;
  credential.kind = CredentialKind::kBasic;
  credential.username = token.substr(0, colon);
  credential.secret = token.substr(colon + 1);
  OPENSSL_cleanse(token.data(), token.size());
  credential.cache_key = CacheKey(credential.kind, credential.username, credential.secret);
  return credential;
}

dhis2::Principal MakePrincipal(const db::UserRow& user, dhis2::AuthMethod method) {
  dhis2::Principal principal;
  principal.user_id = user.user_id;
  principal.uid = user.uid;
  principal.username = user.username;
  principal.superuser = user.superuser;
  principal.group_uids = user.group_uids;
  principal.method = method;
  return principal;
}

int64_t ToMillis(std::chrono::system_clock::time_point now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
}

absl::StatusOr<Identity> VerifyToken(db::ReadSession& session,
                                     const PresentedCredential& credential, int64_t now_ms) {
  // ApiTokenAuthManager: the token by its key, its expiry, its owner, the owner's account.
  absl::StatusOr<db::ApiTokenLookup> lookup =
      db::LookUpApiToken(session, dhis2::ApiTokenKey(credential.secret));
  if (!lookup.ok()) return lookup.status();
  if (!lookup->token) {
    return Refused(credential.dhis2 <= 40 ? kTokenDoesNotExist240 : kTokenDoesNotExist,
                   "unknown_token");
  }
  const db::ApiTokenRow& token = *lookup->token;
  if (token.expire_ms && *token.expire_ms <= now_ms) {
    return Refused(kTokenExpired, "token_expired");
  }
  if (!token.owner_id) return Refused(kTokenWithoutOwner, "token_without_owner");
  if (!lookup->owner) return Refused(kTokenOwnerMissing, "token_owner_missing");
  const dhis2::AccountRefusal refusal = dhis2::CheckTokenOwnerAccount(
      lookup->owner->account, lookup->credentials_expires_months, now_ms);
  if (refusal != dhis2::AccountRefusal::kNone) {
    return Refused(kTokenOwnerRefused,
                   absl::StrCat("token_owner_", dhis2::AccountRefusalName(refusal)));
  }
  Identity identity;
  identity.principal = MakePrincipal(*lookup->owner, dhis2::AuthMethod::kApiToken);
  identity.principal.token_uid = token.uid;
  identity.token_expires_ms = token.expire_ms;
  identity.token_rules = token.rules;
  return identity;
}

absl::StatusOr<Identity> VerifyBasic(db::ReadSession& session,
                                     const PresentedCredential& credential, int64_t now_ms) {
  // PostgreSQL text holds no NUL: no such user exists (and libpq would cut the name there).
  std::optional<db::UserLookup> lookup;
  if (credential.username.find('\0') == std::string::npos) {
    absl::StatusOr<db::UserLookup> found = db::LookUpUser(session, credential.username);
    if (!found.ok()) return found.status();
    lookup = *std::move(found);
  }
  const db::UserRow* user = lookup && lookup->user ? &*lookup->user : nullptr;
  // The password first, and one bcrypt whether or not the user exists: DHIS2 says "Account
  // disabled" before it checks the password, which tells anyone which accounts are disabled.
  bool matches = false;
  if (user != nullptr && user->password_hash) {
    matches = PasswordMatches(credential.secret, *user->password_hash);
  } else {
    DummyPasswordCheck(credential.secret);
  }
  if (!matches) return Refused(kUnauthorized, "wrong_password");
  const dhis2::AccountRefusal refusal =
      dhis2::CheckPasswordAccount(user->account, lookup->credentials_expires_months, now_ms);
  if (refusal == dhis2::AccountRefusal::kDisabled) {
    return Refused(kAccountDisabled, "account_disabled");
  }
  if (refusal != dhis2::AccountRefusal::kNone) {
    return Refused(kUnauthorized, dhis2::AccountRefusalName(refusal));
  }
  Identity identity;
  identity.principal = MakePrincipal(*user, dhis2::AuthMethod::kPassword);
  return identity;
}

absl::StatusOr<Identity> VerifyCertificate(db::ReadSession& session,
                                           const PresentedCredential& credential, int64_t now_ms) {
  // No DHIS2 counterpart: the user a --client_identities entry names, with a token owner's
  // account checks (the certificate stands for a token; there is no password to check).
  if (credential.username.find('\0') != std::string::npos) {
    return Refused(absl::StrCat(kUnauthorized, ": the client certificate stands for no DHIS2 user"),
                   "unknown_certificate_user");
  }
  absl::StatusOr<db::UserLookup> lookup = db::LookUpUser(session, credential.username);
  if (!lookup.ok()) return lookup.status();
  if (!lookup->user) {
    return Refused(absl::StrCat(kUnauthorized, ": the client certificate stands for no DHIS2 user"),
                   "unknown_certificate_user");
  }
  const dhis2::AccountRefusal refusal = dhis2::CheckTokenOwnerAccount(
      lookup->user->account, lookup->credentials_expires_months, now_ms);
  if (refusal != dhis2::AccountRefusal::kNone) {
    return Refused(
        absl::StrCat(kUnauthorized,
                     ": the DHIS2 user of the client certificate is disabled, expired or has "
                     "two-factor login"),
        absl::StrCat("certificate_user_", dhis2::AccountRefusalName(refusal)));
  }
  Identity identity;
  identity.principal = MakePrincipal(*lookup->user, dhis2::AuthMethod::kCertificate);
  return identity;
}

}  // namespace

absl::StatusOr<PresentedCredential> Present(const Credentials& credentials, int dhis2) {
  // Over HTTP DHIS2's filters read request.getHeader("Authorization"): Tomcat's first value.
  if (credentials.authorization.size() > 1 && credentials.transport == Transport::kGrpc) {
    return Refused(
        absl::StrCat(kUnauthorized, ": the call carries ", credentials.authorization.size(),
                     " authorization values; send exactly one"),
        "several_credentials");
  }
  if (credentials.authorization.empty()) {
    // An explicit credential wins over the certificate: a caller with a certificate can still
    // act as another DHIS2 user by sending that user's token.
    if (credentials.certificate_user) {
      PresentedCredential credential;
      credential.kind = CredentialKind::kCertificate;
      credential.username = *credentials.certificate_user;
      credential.cache_key = CacheKey(credential.kind, credential.username, "");
      return credential;
    }
    return Refused(UnauthorizedBecause(credentials.transport,
                                       "send the metadata \"authorization: ApiToken <token>\" (a "
                                       "DHIS2 personal access token) or \"authorization: Basic "
                                       "<base64(username:password)>\""),
                   "no_credentials");
  }
  const std::string& authorization = credentials.authorization.front();
  // Dhis2ApiTokenFilter runs before Basic and claims every value starting with "apitoken".
  if (dhis2::IsApiTokenAuthorization(authorization)) {
    absl::StatusOr<std::string> token = dhis2::ParseApiTokenAuthorization(authorization);
    // 2.40's ApiTokenResolver answers ApiTokenErrors.invalidToken (401), later ones
    // invalidRequest (400); only 2.41 and later check the checksum (ApiKeyTokenGenerator).
    if (!token.ok()) {
      return WithReason(token.status(), dhis2 <= 40 ? "token_malformed" : "malformed_token");
    }
    if (dhis2 > 40) {
      absl::StatusOr<dhis2::ApiTokenType> type = dhis2::CheckApiTokenChecksum(*token);
      if (!type.ok()) return WithReason(type.status(), "bad_checksum");
    }
    PresentedCredential credential;
    credential.dhis2 = dhis2;
    credential.kind = CredentialKind::kApiToken;
    credential.secret = *std::move(token);
    credential.cache_key = CacheKey(credential.kind, "", credential.secret);
    return credential;
  }
  return PresentBasic(authorization, credentials.transport);
}

std::string PresentedUsername(const Credentials& credentials) {
  absl::StatusOr<PresentedCredential> presented = Present(credentials);
  if (!presented.ok()) return std::string();
  OPENSSL_cleanse(presented->secret.data(), presented->secret.size());
  return presented->kind == CredentialKind::kApiToken ? std::string()
                                                      : std::move(presented->username);
}

absl::StatusOr<Identity> Verify(db::ReadSession& session, const PresentedCredential& credential,
                                std::chrono::system_clock::time_point now) {
  const int64_t now_ms = ToMillis(now);
  switch (credential.kind) {
    case CredentialKind::kApiToken:
      return VerifyToken(session, credential, now_ms);
    case CredentialKind::kBasic:
      return VerifyBasic(session, credential, now_ms);
    case CredentialKind::kCertificate:
      return VerifyCertificate(session, credential, now_ms);
  }
  return absl::InternalError("credential.kind: unknown");
}

absl::Status CheckPerCall(const Identity& identity, std::string_view peer_ip_view,
                          std::chrono::system_clock::time_point now, std::string_view method_view,
                          std::optional<std::string_view> referrer_view, Transport transport) {
  if (identity.principal.method != dhis2::AuthMethod::kApiToken) return absl::OkStatus();
  const absl::string_view peer_ip(peer_ip_view.data(), peer_ip_view.size());
  // ApiTokenAuthManager rechecks the expiry on a cache hit; Dhis2ApiTokenFilter applies the
  // rules to every request.
  const absl::string_view method(method_view.data(), method_view.size());
  std::optional<absl::string_view> referrer;
  if (referrer_view) referrer = absl::string_view(referrer_view->data(), referrer_view->size());
  if (identity.token_expires_ms && *identity.token_expires_ms <= ToMillis(now)) {
    return Refused(kTokenExpired, "token_expired");
  }
  const dhis2::BrokenTokenRule broken =
      dhis2::FindBrokenTokenRule(identity.token_rules, peer_ip, method, referrer);
  absl::Status status = dhis2::CheckTokenRules(identity.token_rules, peer_ip, method, referrer);
  switch (broken) {
    case dhis2::BrokenTokenRule::kNone:
      return absl::OkStatus();
    case dhis2::BrokenTokenRule::kIpAddress:
      return WithReason(status, "ip_not_allowed");
    case dhis2::BrokenTokenRule::kMethod:
      return WithReason(status, "method_not_allowed");
    case dhis2::BrokenTokenRule::kReferrer:
      // Over HTTP the request could have carried one: DHIS2's message as it is.
      if (transport == Transport::kHttp) return WithReason(status, "referrer_required");
      break;
  }
  return Refused(absl::StrCat(status.message(),
                              " The token has a referrer list (RefererAllowedList): a gRPC call "
                              "carries no Referer, and DHIS2 refuses a request without one."),
                 "referrer_required");
}

}  // namespace dvexport::auth
