// DHIS2 2.42's personal access tokens: the authorization value as ApiTokenResolver parses it,
// the checksum with CRC32Utils' zero-byte quirk (DHIS2's own fixture; the V1 values were computed
// independently with Python's zlib.crc32 over the code plus three zero bytes), the SHA-256 key
// and the request rules of Dhis2ApiTokenFilter.

#include "service/dhis2/api_token.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

namespace dvexport::dhis2 {
namespace {

// ApiKeyTokenGeneratorTest's V2 token: its checksum 1QnPCi is the CRC over the code and four
// zero bytes; over the code alone it would be 2Cvbni.
constexpr const char* kV2Token = "d2p_lyt5j9WqXaVzJsUhvGJ1w0Ea5GL4jkszazPSWo5HWLFC1QnPCi";
constexpr const char* kV2Code = "lyt5j9WqXaVzJsUhvGJ1w0Ea5GL4jkszazPSWo5HWLFC";
// zlib.crc32(b"abcdefghijklmnopqrstuvwxyz012345" + bytes(3)) == 831801659 (nine digits, so the
// generated token has one leading zero); without the zero bytes 1649231692.
constexpr const char* kV1Code = "abcdefghijklmnopqrstuvwxyz012345";
constexpr const char* kV1Token = "d2pat_abcdefghijklmnopqrstuvwxyz0123450831801659";

void ExpectChecksumFails(const std::string& token) {
  absl::StatusOr<ApiTokenType> type = CheckApiTokenChecksum(token);
  ASSERT_FALSE(type.ok()) << token;
  EXPECT_EQ(type.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(type.status().message(), "Checksum validation failed");
}

TEST(ApiTokenChecksumTest, AcceptsDhis2sV2Fixture) {
  absl::StatusOr<ApiTokenType> type = CheckApiTokenChecksum(kV2Token);
  ASSERT_TRUE(type.ok()) << type.status();
  EXPECT_EQ(*type, ApiTokenType::kV2);
  EXPECT_EQ(Base62(ApiTokenCrc32(kV2Code, ApiTokenType::kV2), 6), "1QnPCi");
}

TEST(ApiTokenChecksumTest, UnpaddedCrcFails) {
  // The CRC a correct implementation of CRC32 over the code alone gives: DHIS2 refuses it.
  ExpectChecksumFails(std::string("d2p_") + kV2Code + "2Cvbni");
  ExpectChecksumFails(std::string("d2pat_") + kV1Code + "1649231692");
}

TEST(ApiTokenChecksumTest, V1LeadingZerosAreOptional) {
  EXPECT_EQ(ApiTokenCrc32(kV1Code, ApiTokenType::kV1), 831801659u);
  for (const std::string checksum : {"0831801659", "831801659", "00000831801659", "+831801659"}) {
    absl::StatusOr<ApiTokenType> type =
        CheckApiTokenChecksum(std::string("d2pat_") + kV1Code + checksum);
    ASSERT_TRUE(type.ok()) << checksum << ": " << type.status();
    EXPECT_EQ(*type, ApiTokenType::kV1);
  }
  ExpectChecksumFails(std::string("d2pat_") + kV1Code + "831801658");
  ExpectChecksumFails(std::string("d2pat_") + kV1Code + "-831801659");
  ExpectChecksumFails(std::string("d2pat_") + kV1Code + "83180165x");
  ExpectChecksumFails(std::string("d2pat_") + kV1Code);  // no checksum: parseLong("") throws
}

TEST(ApiTokenChecksumTest, RefusesWhatCannotBeTakenApart) {
  ExpectChecksumFails("");
  ExpectChecksumFails("d2p");  // no '_'
  ExpectChecksumFails("d2p_short");
  // The prefix is compared case-sensitively; V2's checksum must be the exact six characters.
  ExpectChecksumFails(std::string("D2P_") + kV2Code + "1QnPCi");
  ExpectChecksumFails(std::string("d2px_") + kV2Code + "1QnPCi");
  ExpectChecksumFails(std::string("d2p_") + kV2Code + "1QnPCi0");
  ExpectChecksumFails(std::string("d2p_") + kV2Code + "1qnpci");
  ExpectChecksumFails(std::string("d2p_") + kV2Code + "01QnPCi");
  // A V2 code under the V1 prefix reads the wrong characters as the code.
  ExpectChecksumFails(std::string("d2pat_") + kV2Code + "1QnPCi");
}

TEST(ApiTokenTest, GeneratesDhis2sFormat) {
  absl::StatusOr<std::string> v2 = GenerateApiToken(kV2Code, ApiTokenType::kV2);
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ(*v2, kV2Token);
  absl::StatusOr<std::string> v1 = GenerateApiToken(kV1Code, ApiTokenType::kV1);
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(*v1, kV1Token);
  EXPECT_EQ(GenerateApiToken("short", ApiTokenType::kV2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GenerateApiToken(std::string(32, '-'), ApiTokenType::kV1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ApiTokenTest, RandomCodesMakeValidDistinctTokens) {
  std::set<std::string> seen;
  for (ApiTokenType type : {ApiTokenType::kV1, ApiTokenType::kV2}) {
    for (int i = 0; i < 50; ++i) {
      const std::string code = RandomApiTokenCode(type);
      ASSERT_EQ(static_cast<int>(code.size()), ApiTokenCodeLength(type));
      absl::StatusOr<std::string> token = GenerateApiToken(code, type);
      ASSERT_TRUE(token.ok()) << token.status();
      absl::StatusOr<ApiTokenType> checked = CheckApiTokenChecksum(*token);
      ASSERT_TRUE(checked.ok()) << *token;
      EXPECT_EQ(*checked, type);
      EXPECT_TRUE(seen.insert(code).second);
    }
  }
}

TEST(ApiTokenTest, EveryChangedCodeCharacterFailsTheChecksum) {
  // CRC32 detects every error burst of up to 32 bits: one character of the code replaced by
  // another always fails, whatever the token.
  constexpr absl::string_view kAlphabet =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::mt19937 random(20);
  for (int i = 0; i < 2000; ++i) {
    const ApiTokenType type = i % 2 == 0 ? ApiTokenType::kV1 : ApiTokenType::kV2;
    absl::StatusOr<std::string> token = GenerateApiToken(RandomApiTokenCode(type), type);
    ASSERT_TRUE(token.ok());
    ASSERT_TRUE(CheckApiTokenChecksum(*token).ok()) << *token;
    const size_t start = type == ApiTokenType::kV1 ? 6 : 4;
    const size_t at = start + random() % ApiTokenCodeLength(type);
    char replacement;
    do {
      replacement = kAlphabet[random() % kAlphabet.size()];
    } while (replacement == (*token)[at]);
    std::string changed = *token;
    changed[at] = replacement;
    ExpectChecksumFails(changed);
  }
}

TEST(ApiTokenTest, KeyIsLowercaseHexSha256OfTheWholeToken) {
  // hashlib.sha256(token.encode()).hexdigest()
  EXPECT_EQ(ApiTokenKey(kV2Token),
            "87899831c01c13065e850823a922f6353a53a8812682f8b8bd44c1da461d0328");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(ApiTokenTest, Base62) {
  EXPECT_EQ(Base62(0, 6), "000000");
  EXPECT_EQ(Base62(61, 1), "z");
  EXPECT_EQ(Base62(62, 1), "10");
  EXPECT_EQ(Base62(4294967295u, 6), "4gfFC3");
}

TEST(ApiTokenAuthorizationTest, ParsesAsApiTokenResolver) {
  for (const std::string value : {"ApiToken abc", "apitoken abc", "APITOKEN abc",
                                  "ApiToken a-b.c_d~e+f/g==", "ApiToken ABCxyz019"}) {
    EXPECT_TRUE(IsApiTokenAuthorization(value)) << value;
    absl::StatusOr<std::string> token = ParseApiTokenAuthorization(value);
    ASSERT_TRUE(token.ok()) << value << ": " << token.status();
    EXPECT_EQ(*token, value.substr(9));
  }
}

TEST(ApiTokenAuthorizationTest, MalformedValues) {
  for (const std::string value :
       {"ApiToken", "ApiToken ", "ApiToken  abc", "ApiTokenabc", "ApiToken\tabc", "ApiToken abc ",
        "ApiToken abc=d", "ApiToken =abc", "ApiToken ab!c", "ApiToken abc\n", "apitokens abc",
        "ApiToken caf\xC3\xA9"}) {
    EXPECT_TRUE(IsApiTokenAuthorization(value)) << value;
    absl::StatusOr<std::string> token = ParseApiTokenAuthorization(value);
    ASSERT_FALSE(token.ok()) << value;
    EXPECT_EQ(token.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(token.status().message(), "Api token is malformed");
  }
  // Not claimed by the token filter at all: Basic (or nothing) gets them.
  for (const std::string value : {"Basic abc", " ApiToken abc", "Bearer abc", "apitoke"}) {
    EXPECT_FALSE(IsApiTokenAuthorization(value)) << value;
  }
}

TEST(TokenRulesTest, EmptyListsImposeNothing) {
  EXPECT_TRUE(CheckTokenRules(TokenRules(), "10.0.0.1", "GET", std::nullopt).ok());
}

TEST(TokenRulesTest, IpAddressesMatchExactly) {
  TokenRules rules;
  rules.allowed_ips = {"10.0.0.1", "::1"};
  EXPECT_TRUE(CheckTokenRules(rules, "10.0.0.1", "GET", std::nullopt).ok());
  EXPECT_TRUE(CheckTokenRules(rules, "::1", "GET", std::nullopt).ok());
  rules.allowed_ips = {"10.0.0.0/8", " 10.0.0.1"};  // no CIDR, no trimming
  absl::Status status = CheckTokenRules(rules, "10.0.0.1", "GET", std::nullopt);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(status.message(),
            "Failed to authenticate API token, request ip address is not allowed.");
  EXPECT_EQ(FindBrokenTokenRule(rules, "10.0.0.1", "GET", std::nullopt),
            BrokenTokenRule::kIpAddress);
}

TEST(TokenRulesTest, Methods) {
  TokenRules rules;
  rules.allowed_methods = {"POST"};
  absl::Status status = CheckTokenRules(rules, "10.0.0.1", "GET", std::nullopt);
  EXPECT_EQ(status.message(),
            "Failed to authenticate API token, request http method is not allowed.");
  rules.allowed_methods = {"POST", "GET"};
  EXPECT_TRUE(CheckTokenRules(rules, "10.0.0.1", "GET", std::nullopt).ok());
  rules.allowed_methods = {"get"};  // stored upper-case by DHIS2; compared as stored
  EXPECT_FALSE(CheckTokenRules(rules, "10.0.0.1", "GET", std::nullopt).ok());
}

TEST(TokenRulesTest, ReferrersNeedAReferer) {
  TokenRules rules;
  rules.allowed_referrers = {"https://x.org/app"};
  absl::Status status = CheckTokenRules(rules, "10.0.0.1", "GET", std::nullopt);
  EXPECT_EQ(status.message(),
            "Failed to authenticate API token, request http referrer is missing or not allowed.");
  EXPECT_TRUE(CheckTokenRules(rules, "10.0.0.1", "GET", "HTTPS://X.org/app").ok());
  EXPECT_FALSE(CheckTokenRules(rules, "10.0.0.1", "GET", "https://x.org/other").ok());
}

TEST(TokenRulesTest, FirstBrokenRuleInDhis2sOrder) {
  TokenRules rules;
  rules.allowed_ips = {"10.0.0.2"};
  rules.allowed_methods = {"POST"};
  rules.allowed_referrers = {"https://x.org"};
  EXPECT_EQ(CheckTokenRules(rules, "10.0.0.1", "GET", std::nullopt).message(),
            "Failed to authenticate API token, request ip address is not allowed.");
  EXPECT_EQ(CheckTokenRules(rules, "10.0.0.2", "GET", std::nullopt).message(),
            "Failed to authenticate API token, request http method is not allowed.");
  EXPECT_EQ(FindBrokenTokenRule(rules, "10.0.0.2", "POST", std::nullopt),
            BrokenTokenRule::kReferrer);
}

}  // namespace
}  // namespace dvexport::dhis2
