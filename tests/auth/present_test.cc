// Present: a call's authorization metadata parsed without I/O, as DHIS2 2.42's filter chain
// reads an Authorization header (Dhis2ApiTokenFilter first, then Spring Security's
// BasicAuthenticationConverter), and the certificate user when no value is sent.

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "service/auth/verify.h"

namespace dvexport::auth {
namespace {

constexpr const char* kV2Token = "d2p_lyt5j9WqXaVzJsUhvGJ1w0Ea5GL4jkszazPSWo5HWLFC1QnPCi";

Credentials Authorization(const std::string& value) {
  Credentials credentials;
  credentials.authorization.push_back(value);
  return credentials;
}

std::string Basic(const std::string& user_colon_password) {
  return "Basic " + absl::Base64Escape(user_colon_password);
}

void ExpectRefused(const Credentials& credentials, const std::string& message_start,
                   const std::string& reason) {
  absl::StatusOr<PresentedCredential> presented = Present(credentials);
  ASSERT_FALSE(presented.ok());
  EXPECT_EQ(presented.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(presented.status().message().substr(0, message_start.size()), message_start)
      << presented.status();
  EXPECT_EQ(RefusalReason(presented.status()), reason);
}

TEST(PresentTest, NothingSentSaysWhatToSend) {
  absl::StatusOr<PresentedCredential> presented = Present(Credentials());
  ASSERT_FALSE(presented.ok());
  EXPECT_EQ(presented.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(presented.status().message().substr(0, 12), "Unauthorized");
  EXPECT_NE(presented.status().message().find("ApiToken"), absl::string_view::npos);
  EXPECT_NE(presented.status().message().find("Basic"), absl::string_view::npos);
  EXPECT_EQ(RefusalReason(presented.status()), "no_credentials");
}

TEST(PresentTest, SeveralValuesAreRefused) {
  Credentials credentials = Authorization(std::string("ApiToken ") + kV2Token);
  credentials.authorization.push_back(Basic("a:b"));
  ExpectRefused(credentials, "Unauthorized: the call carries 2 authorization values",
                "several_credentials");
}

TEST(PresentTest, ApiToken) {
  for (const std::string scheme : {"ApiToken ", "apitoken ", "APITOKEN "}) {
    absl::StatusOr<PresentedCredential> presented = Present(Authorization(scheme + kV2Token));
    ASSERT_TRUE(presented.ok()) << presented.status();
    EXPECT_EQ(presented->kind, CredentialKind::kApiToken);
    EXPECT_EQ(presented->secret, kV2Token);
    EXPECT_TRUE(presented->username.empty());
    EXPECT_EQ(presented->cache_key.size(), 64u);
    EXPECT_EQ(presented->cache_key.find_first_not_of("0123456789abcdef"), std::string::npos);
  }
}

TEST(PresentTest, MalformedTokenAndBadChecksum) {
  ExpectRefused(Authorization(std::string("ApiToken  ") + kV2Token), "Api token is malformed",
                "malformed_token");
  ExpectRefused(Authorization("ApiTokenx"), "Api token is malformed", "malformed_token");
  std::string wrong = kV2Token;
  wrong.back() = 'j';
  ExpectRefused(Authorization("ApiToken " + wrong), "Checksum validation failed", "bad_checksum");
  ExpectRefused(Authorization("ApiToken abc"), "Checksum validation failed", "bad_checksum");
}

// DHIS2 2.40's ApiTokenResolver: a malformed value is its invalidToken (401, a token refusal),
// and no checksum is checked: any well-formed token is looked up by its key.
TEST(PresentTest, Dhis2240ChecksNoChecksumAndRefusesMalformedTokensAs401) {
  absl::StatusOr<PresentedCredential> malformed =
      Present(Authorization(std::string("ApiToken  ") + kV2Token), 40);
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().message(), "Api token is malformed");
  EXPECT_EQ(RefusalReason(malformed.status()), "token_malformed");
  std::string wrong = kV2Token;
  wrong.back() = 'j';
  for (const std::string& token : {wrong, std::string("abc"), std::string(kV2Token)}) {
    absl::StatusOr<PresentedCredential> presented = Present(Authorization("ApiToken " + token), 40);
    ASSERT_TRUE(presented.ok()) << token << ": " << presented.status();
    EXPECT_EQ(presented->secret, token);
    EXPECT_EQ(presented->dhis2, 40);
  }
  // 2.41 checks it as 2.42 does.
  EXPECT_EQ(RefusalReason(Present(Authorization("ApiToken " + wrong), 41).status()),
            "bad_checksum");
}

TEST(PresentTest, BasicAsSpringReadsIt) {
  struct Case {
    std::string value;
    std::string username;
    std::string password;
  };
  const Case cases[] = {
      {Basic("alice:secret"), "alice", "secret"},
      {Basic("alice:pa:ss:"), "alice", "pa:ss:"},  // split at the first ':'
      {Basic(":"), "", ""},
      {"basic " + absl::Base64Escape("bob:x"), "bob", "x"},              // scheme in any case
      {"  \tBASIC " + absl::Base64Escape("bob:x") + " \r", "bob", "x"},  // trimmed
      {"Basic Ym9iOnh5", "bob", "xy"},                                   // unpadded
      {"Basic Ym9iOnh5eg==", "bob", "xyz"},
      {"Basic Ym9iOnh5eg", "bob", "xyz"},
      // The character after "Basic" is skipped whatever it is (substring(6)).
      {"BasicXYm9iOnh5", "bob", "xy"},
      // Invalid UTF-8 becomes U+FFFD, as new String(bytes, UTF_8).
      {"Basic " + absl::Base64Escape("b\xFFob:p\xC3"), "b\xEF\xBF\xBDob", "p\xEF\xBF\xBD"},
      {Basic("caf\xC3\xA9:m\xC3\xB8t"), "caf\xC3\xA9", "m\xC3\xB8t"},
  };
  std::set<std::string> keys;
  for (const Case& c : cases) {
    absl::StatusOr<PresentedCredential> presented = Present(Authorization(c.value));
    ASSERT_TRUE(presented.ok()) << c.value << ": " << presented.status();
    EXPECT_EQ(presented->kind, CredentialKind::kBasic);
    EXPECT_EQ(presented->username, c.username) << c.value;
    EXPECT_EQ(presented->secret, c.password) << c.value;
    keys.insert(presented->cache_key);
  }
  EXPECT_EQ(keys.size(), 8u);  // bob:x twice, bob:xy twice, bob:xyz twice
}

TEST(PresentTest, BasicRoundTripsRandomUtf8Pairs) {
  // Random UTF-8 usernames without ':' and passwords with anything: Present gives them back
  // whatever the base64 padding.
  const std::vector<std::string> pieces = {
      "a", "Z", "0", ":",   " ", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
      "=", "+", "/", "\x01"};
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    std::string username, password;
    for (int n = random() % 12; n > 0; --n) {
      const std::string& piece = pieces[random() % pieces.size()];
      if (piece != ":") username += piece;
    }
    for (int n = random() % 12; n > 0; --n) password += pieces[random() % pieces.size()];
    std::string encoded = absl::Base64Escape(username + ":" + password);
    if (i % 2 == 1) encoded = encoded.substr(0, encoded.find('='));  // unpadded
    absl::StatusOr<PresentedCredential> presented = Present(Authorization("Basic " + encoded));
    ASSERT_TRUE(presented.ok()) << encoded << ": " << presented.status();
    EXPECT_EQ(presented->username, username);
    EXPECT_EQ(presented->secret, password);
  }
}

TEST(PresentTest, MalformedBasic) {
  for (const std::string& value :
       {std::string("Basic"), std::string("Basic "), std::string("Basic Ym9i"),  // no ':'
        std::string("Basic Ym9iOnh5e"),                                          // dangling
        std::string("Basic Ym9iOnh5eg="),    // "xx=" without its second '='
        std::string("Basic Ym9iOnh5eg==x"),  // after the padding
        std::string("Basic Ym9i Onh5"),      // inner space
        std::string("Basic  Ym9iOnh5"),      // two spaces: the second is not base64
        std::string("Basic Ym9iOnh5-_"),     // URL alphabet
        std::string("Basic =Ym9i")}) {
    ExpectRefused(Authorization(value), "Unauthorized", "malformed_basic");
  }
}

TEST(PresentTest, OtherSchemes) {
  ExpectRefused(Authorization("Bearer abc"), "Unauthorized", "unsupported_scheme");
  // Not claimed by the token filter (it does not trim), and not Basic.
  ExpectRefused(Authorization(std::string(" ApiToken ") + kV2Token), "Unauthorized",
                "unsupported_scheme");
}

TEST(PresentTest, CertificateOnlyWithoutAuthorization) {
  Credentials credentials;
  credentials.certificate_user = "sibling";
  absl::StatusOr<PresentedCredential> presented = Present(credentials);
  ASSERT_TRUE(presented.ok()) << presented.status();
  EXPECT_EQ(presented->kind, CredentialKind::kCertificate);
  EXPECT_EQ(presented->username, "sibling");
  EXPECT_TRUE(presented->secret.empty());
  // An explicit credential wins.
  credentials.authorization.push_back(Basic("alice:secret"));
  presented = Present(credentials);
  ASSERT_TRUE(presented.ok()) << presented.status();
  EXPECT_EQ(presented->kind, CredentialKind::kBasic);
  EXPECT_EQ(presented->username, "alice");
  // ... even a broken one: the certificate is not a fallback.
  credentials.authorization = {"Bearer x"};
  EXPECT_FALSE(Present(credentials).ok());
}

TEST(PresentTest, CacheKeysSeparateKindsAndSplits) {
  std::set<std::string> keys;
  for (const std::string pair : {"ab:c", "a:bc", "a:b:c", "a:b"}) {
    absl::StatusOr<PresentedCredential> presented = Present(Authorization(Basic(pair)));
    ASSERT_TRUE(presented.ok());
    keys.insert(presented->cache_key);
  }
  Credentials certificate;
  certificate.certificate_user = "a";
  absl::StatusOr<PresentedCredential> presented = Present(certificate);
  ASSERT_TRUE(presented.ok());
  keys.insert(presented->cache_key);
  presented = Present(Authorization(Basic("a:")));  // same user, no password
  ASSERT_TRUE(presented.ok());
  keys.insert(presented->cache_key);
  EXPECT_EQ(keys.size(), 6u);
}

// Over HTTP (DHIS2's URL) what DHIS2 does: its filters read request.getHeader("Authorization"),
// Tomcat's first value, and ignore the others.
TEST(PresentOverHttpTest, TheFirstAuthorizationValueCounts) {
  Credentials credentials;
  credentials.transport = Transport::kHttp;
  credentials.authorization = {Basic("alice:secret"), std::string("ApiToken ") + kV2Token};
  absl::StatusOr<PresentedCredential> presented = Present(credentials);
  ASSERT_TRUE(presented.ok()) << presented.status();
  EXPECT_EQ(presented->kind, CredentialKind::kBasic);
  EXPECT_EQ(presented->username, "alice");

  credentials.authorization = {std::string("ApiToken ") + kV2Token, Basic("alice:secret")};
  presented = Present(credentials);
  ASSERT_TRUE(presented.ok()) << presented.status();
  EXPECT_EQ(presented->kind, CredentialKind::kApiToken);
  EXPECT_EQ(presented->secret, kV2Token);

  // A broken first value is refused as it is, whatever follows.
  credentials.authorization = {"ApiToken  x", Basic("alice:secret")};
  presented = Present(credentials);
  ASSERT_FALSE(presented.ok());
  EXPECT_EQ(presented.status().message(), "Api token is malformed");
  EXPECT_EQ(RefusalReason(presented.status()), "malformed_token");

  // gRPC keeps refusing several values.
  credentials.transport = Transport::kGrpc;
  ExpectRefused(credentials, "Unauthorized: the call carries 2 authorization values",
                "several_credentials");
}

// DHIS2's texts over HTTP: "Unauthorized" for no credentials, another scheme and a malformed
// Basic value (gRPC's sentences name the metadata, which an HTTP client has no use for); the
// token filter's own texts.
TEST(PresentOverHttpTest, RefusalsAreDhis2sTexts) {
  struct Case {
    std::vector<std::string> authorization;
    std::string message;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {{}, "Unauthorized", "no_credentials"},
      {{"Bearer abc"}, "Unauthorized", "unsupported_scheme"},
      {{"Basic"}, "Unauthorized", "malformed_basic"},
      {{"Basic !!!"}, "Unauthorized", "malformed_basic"},
      {{Basic("no-colon")}, "Unauthorized", "malformed_basic"},
      {{"ApiToken d2p_x y"}, "Api token is malformed", "malformed_token"},
      {{"ApiToken abc"}, "Checksum validation failed", "bad_checksum"},
  };
  for (const Case& c : cases) {
    Credentials credentials;
    credentials.transport = Transport::kHttp;
    credentials.authorization = c.authorization;
    absl::StatusOr<PresentedCredential> presented = Present(credentials);
    ASSERT_FALSE(presented.ok()) << c.message;
    EXPECT_EQ(presented.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(presented.status().message(), c.message) << c.reason;
    EXPECT_EQ(RefusalReason(presented.status()), c.reason);
  }
}

// A token with a referrer list: over HTTP DHIS2's rule on the Referer header and DHIS2's text;
// over gRPC, which has no Referer, always refused, saying why.
TEST(CheckPerCallTest, ReferrerListOverHttpAndGrpc) {
  Identity identity;
  identity.principal.method = dhis2::AuthMethod::kApiToken;
  identity.token_rules.allowed_referrers = {"https://apps.example.org/app"};
  const auto now = std::chrono::system_clock::now();
  constexpr absl::string_view kDhis2Text =
      "Failed to authenticate API token, request http referrer is missing or not allowed.";

  EXPECT_TRUE(CheckPerCall(identity, "10.0.0.1", now, "GET", "HTTPS://apps.example.org/app",
                           Transport::kHttp)
                  .ok());
  for (const std::optional<std::string_view> referrer :
       {std::optional<std::string_view>(), std::optional<std::string_view>("https://evil.org/")}) {
    absl::Status status =
        CheckPerCall(identity, "10.0.0.1", now, "GET", referrer, Transport::kHttp);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(status.message(), kDhis2Text);
    EXPECT_EQ(RefusalReason(status), "referrer_required");
  }

  absl::Status status =
      CheckPerCall(identity, "10.0.0.1", now, "GET", std::nullopt, Transport::kGrpc);
  EXPECT_EQ(status.message().substr(0, kDhis2Text.size()), kDhis2Text);
  EXPECT_NE(status.message().find("a gRPC call carries no Referer"), absl::string_view::npos);
  EXPECT_EQ(RefusalReason(status), "referrer_required");
}

// For the call log of a refused call: the username tried, never the password or a token.
TEST(PresentedUsernameTest, BasicAndCertificateUsersNotTokens) {
  EXPECT_EQ(PresentedUsername(Authorization(Basic("alice:s3cret:more"))), "alice");
  EXPECT_EQ(PresentedUsername(Authorization(Basic("nobody-at-all:x"))), "nobody-at-all");
  EXPECT_EQ(PresentedUsername(Authorization(std::string("ApiToken ") + kV2Token)), "");
  EXPECT_EQ(PresentedUsername(Authorization("Basic !!!")), "");
  Credentials certificate;
  certificate.certificate_user = "sibling-service";
  EXPECT_EQ(PresentedUsername(certificate), "sibling-service");
  EXPECT_EQ(PresentedUsername(Credentials()), "");
}

}  // namespace
}  // namespace dvexport::auth
