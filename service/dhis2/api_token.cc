#include "service/dhis2/api_token.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/crc32.h"

namespace dvexport::dhis2 {
namespace {

constexpr absl::string_view kBase62Alphabet =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// ApiTokenType's prefixes, compared case-sensitively as DHIS2 does.
constexpr absl::string_view kV1Prefix = "d2pat";
constexpr absl::string_view kV2Prefix = "d2p";

// The token characters of ApiTokenResolver's pattern, [a-z0-9-._~+/] under CASE_INSENSITIVE
// (ASCII only: the pattern has no UNICODE_CASE).
bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/';
}

absl::Status Malformed() { return absl::UnauthenticatedError("Api token is malformed"); }
absl::Status BadChecksum() { return absl::UnauthenticatedError("Checksum validation failed"); }

absl::string_view Prefix(ApiTokenType type) {
  return type == ApiTokenType::kV1 ? kV1Prefix : kV2Prefix;
}

}  // namespace

int ApiTokenCodeLength(ApiTokenType type) { return type == ApiTokenType::kV1 ? 32 : 44; }

bool IsApiTokenAuthorization(absl::string_view authorization) {
  return absl::StartsWithIgnoreCase(authorization, "apitoken");
}

absl::StatusOr<std::string> ParseApiTokenAuthorization(absl::string_view authorization) {
  // ^ApiToken (?<token>[a-z0-9-._~+/]+=*)$ with Matcher.matches(): the whole value.
  constexpr absl::string_view kScheme = "ApiToken ";
  if (authorization.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) {
    return Malformed();
  }
  const absl::string_view token = authorization.substr(kScheme.size());
  size_t end = 0;
  while (end < token.size() && IsTokenChar(token[end])) ++end;
  if (end == 0) return Malformed();
  while (end < token.size() && token[end] == '=') ++end;
  if (end != token.size()) return Malformed();
  return std::string(token);
}

uint32_t ApiTokenCrc32(absl::string_view code, ApiTokenType type) {
  // CRC32Utils hashes Charset.encode(code).array(): the whole backing array, which Java's UTF-8
  // encoder sizes as (int)(n * 1.1f) for n characters: 35 bytes for 32, 48 for 44, the tail
  // zero.
  static constexpr std::array<char, 4> kZeros = {0, 0, 0, 0};
  const uint32_t crc = common::Crc32(0, std::string_view(code.data(), code.size()));
  return common::Crc32(crc, std::string_view(kZeros.data(), type == ApiTokenType::kV1 ? 3 : 4));
}

std::string Base62(uint64_t value, int width) {
  std::string digits;
  do {
    digits.insert(digits.begin(), kBase62Alphabet[value % 62]);
    value /= 62;
  } while (value > 0);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

absl::StatusOr<ApiTokenType> CheckApiTokenChecksum(absl::string_view token) {
  // ApiKeyTokenGenerator.isValidTokenChecksum: any failure to take the token apart (no '_', an
  // unknown prefix, too short, a checksum that is not a number) is a failed checksum.
  const size_t underscore = token.find('_');
  if (underscore == absl::string_view::npos) return BadChecksum();
  const absl::string_view prefix = token.substr(0, underscore);
  ApiTokenType type;
  if (prefix == kV1Prefix) {
    type = ApiTokenType::kV1;
  } else if (prefix == kV2Prefix) {
    type = ApiTokenType::kV2;
  } else {
    return BadChecksum();
  }
  const absl::string_view rest = token.substr(underscore + 1);
  const size_t length = ApiTokenCodeLength(type);
  if (rest.size() < length) return BadChecksum();
  const absl::string_view code = rest.substr(0, length);
  const absl::string_view checksum = rest.substr(length);
  const uint32_t crc = ApiTokenCrc32(code, type);
  if (type == ApiTokenType::kV2) {
    if (checksum != Base62(crc, 6)) return BadChecksum();
    return type;
  }
  // V1: Long.parseLong(checksum) == crc. parseLong takes an optional sign ('+' or '-') and
  // decimal digits, so leading zeros are optional; anything else throws (a failed checksum).
  absl::string_view digits = checksum;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return BadChecksum();
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size()) return BadChecksum();
  // A negative number never equals a CRC (parseLong's -0 is 0, which can).
  if (negative && value != 0) return BadChecksum();
  if (value != crc) return BadChecksum();
  return type;
}

std::string Sha256Hex(absl::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest;
  unsigned int size = 0;
  // EVP_Digest fails only when OpenSSL cannot allocate; the key is then empty and matches no
  // api_token.key (a refusal, never a wrong identity).
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    return "";
  }
  // Lowercase hex, as Guava's HashCode.toString.
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), size));
}

absl::StatusOr<std::string> GenerateApiToken(absl::string_view code, ApiTokenType type) {
  if (static_cast<int>(code.size()) != ApiTokenCodeLength(type)) {
    return absl::InvalidArgumentError(absl::StrCat("code: a token of this type has ",
                                                   ApiTokenCodeLength(type), " characters, not ",
                                                   code.size()));
  }
  for (char c : code) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("code: only the characters 0-9, A-Z and a-z");
    }
  }
  const uint32_t crc = ApiTokenCrc32(code, type);
  std::string checksum;
  if (type == ApiTokenType::kV1) {
    checksum = std::to_string(crc);
    checksum.insert(0, 10 - checksum.size(), '0');
  } else {
    checksum = Base62(crc, 6);
  }
  return absl::StrCat(Prefix(type), "_", code, checksum);
}

std::string RandomApiTokenCode(ApiTokenType type) {
  const int length = ApiTokenCodeLength(type);
  std::string code;
  code.reserve(length);
  // Rejection sampling keeps every character equally likely: bytes of 248 and above (62 * 4) are
  // drawn again.
  std::array<unsigned char, 64> random;
  while (static_cast<int>(code.size()) < length) {
    if (RAND_bytes(random.data(), random.size()) != 1) continue;
    for (unsigned char byte : random) {
      if (byte >= 248 || static_cast<int>(code.size()) == length) continue;
      code.push_back(kBase62Alphabet[byte % 62]);
    }
  }
  return code;
}

BrokenTokenRule FindBrokenTokenRule(const TokenRules& rules, absl::string_view peer_ip,
                                    absl::string_view method,
                                    std::optional<absl::string_view> referrer) {
  auto contains = [](const std::vector<std::string>& list, absl::string_view value) {
    return std::find(list.begin(), list.end(), value) != list.end();
  };
  if (!rules.allowed_ips.empty() && !contains(rules.allowed_ips, peer_ip)) {
    return BrokenTokenRule::kIpAddress;
  }
  if (!rules.allowed_methods.empty() && !contains(rules.allowed_methods, method)) {
    return BrokenTokenRule::kMethod;
  }
  if (!rules.allowed_referrers.empty() &&
      (!referrer || !contains(rules.allowed_referrers, absl::AsciiStrToLower(*referrer)))) {
    return BrokenTokenRule::kReferrer;
  }
  return BrokenTokenRule::kNone;
}

absl::Status CheckTokenRules(const TokenRules& rules, absl::string_view peer_ip,
                             absl::string_view method, std::optional<absl::string_view> referrer) {
  switch (FindBrokenTokenRule(rules, peer_ip, method, referrer)) {
    case BrokenTokenRule::kNone:
      return absl::OkStatus();
    case BrokenTokenRule::kIpAddress:
      return absl::UnauthenticatedError(
          "Failed to authenticate API token, request ip address is not allowed.");
    case BrokenTokenRule::kMethod:
      return absl::UnauthenticatedError(
          "Failed to authenticate API token, request http method is not allowed.");
    case BrokenTokenRule::kReferrer:
      return absl::UnauthenticatedError(
          "Failed to authenticate API token, request http referrer is missing or not allowed.");
  }
  return absl::OkStatus();
}

}  // namespace dvexport::dhis2
