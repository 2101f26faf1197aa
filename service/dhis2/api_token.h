#ifndef DVEXPORT_SERVICE_DHIS2_API_TOKEN_H_
#define DVEXPORT_SERVICE_DHIS2_API_TOKEN_H_

// DHIS2 2.42's personal access tokens, without I/O: the `authorization: ApiToken <token>` value
// as its ApiTokenResolver parses it, the checksum as ApiKeyTokenGenerator checks it (with the
// CRC32Utils zero-byte quirk), the key api_token.key stores, and the request rules of
// api_token.attributes as Dhis2ApiTokenFilter applies them. docs/SECURITY.md, "Authentication".

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::dhis2 {

// api_token.type: PERSONAL_ACCESS_TOKEN_V1 ("d2pat_", 32-char code, CRC32 in decimal) or
// PERSONAL_ACCESS_TOKEN_V2 ("d2p_", 44-char code, CRC32 in base62, 6 characters).
enum class ApiTokenType { kV1, kV2 };

// The length of the random code of a token of "type" (32 or 44).
int ApiTokenCodeLength(ApiTokenType type);

// True when "authorization" starts with "apitoken" in any case: DHIS2 then treats it as a token
// (and refuses it if malformed) instead of passing it on to Basic.
bool IsApiTokenAuthorization(absl::string_view authorization);

// The token of an authorization value that IsApiTokenAuthorization: it must match
// `^ApiToken (?<token>[a-z0-9-._~+/]+=*)$` case-insensitively (exactly one space), else
// Unauthenticated "Api token is malformed".
absl::StatusOr<std::string> ParseApiTokenAuthorization(absl::string_view authorization);

// The type of "token" when its checksum is valid as DHIS2 checks it: the text before the first
// '_' is exactly "d2pat" or "d2p", the code is the next ApiTokenCodeLength characters, the
// checksum all the rest (V1: a decimal number equal to the CRC, leading zeros optional; V2:
// exactly the 6-character base62 CRC). Unauthenticated "Checksum validation failed" otherwise.
absl::StatusOr<ApiTokenType> CheckApiTokenChecksum(absl::string_view token);

// DHIS2's checksum of "code": CRC32 (zlib) over the code's bytes followed by 3 zero bytes (V1)
// or 4 (V2), the slack of the buffer Java's UTF-8 encoder returns, which DHIS2 hashes whole.
uint32_t ApiTokenCrc32(absl::string_view code, ApiTokenType type);

// "value" in base62 (0-9A-Za-z, most significant first), left-padded with '0' to "width".
std::string Base62(uint64_t value, int width);

// Lowercase hex SHA-256 of "bytes" (64 characters).
std::string Sha256Hex(absl::string_view bytes);

// api_token.key of "token": the lowercase hex SHA-256 of the whole token's UTF-8 bytes.
inline std::string ApiTokenKey(absl::string_view token) { return Sha256Hex(token); }

// A token in DHIS2's format for "code" (ApiTokenCodeLength characters of [0-9A-Za-z], else
// InvalidArgument naming code): prefix, '_', code, checksum (V1 zero-padded to 10 digits, as
// DHIS2 generates it). For tests and the demo.
absl::StatusOr<std::string> GenerateApiToken(absl::string_view code, ApiTokenType type);

// A random code for GenerateApiToken from a cryptographic source (OpenSSL RAND_bytes), as
// DHIS2's CodeGenerator.generateSecureRandomCode makes it.
std::string RandomApiTokenCode(ApiTokenType type);

// The request rules of a token (api_token.attributes: IpAllowedList, MethodAllowedList,
// RefererAllowedList). An empty list imposes nothing.
struct TokenRules {
  std::vector<std::string> allowed_ips;        // exact string match, no CIDR
  std::vector<std::string> allowed_methods;    // upper-case
  std::vector<std::string> allowed_referrers;  // lower-case

  friend bool operator==(const TokenRules&, const TokenRules&) = default;
};

// The first rule of "rules" a request breaks, in Dhis2ApiTokenFilter's order; kNone if none.
enum class BrokenTokenRule { kNone, kIpAddress, kMethod, kReferrer };
BrokenTokenRule FindBrokenTokenRule(const TokenRules& rules, absl::string_view peer_ip,
                                    absl::string_view method,
                                    std::optional<absl::string_view> referrer);

// Dhis2ApiTokenFilter.validateRequestRules for one request: the first rule broken, in DHIS2's
// order, as Unauthenticated with DHIS2's texts: "Failed to authenticate API token, " followed by
// "request ip address is not allowed." (peer_ip not in a non-empty allowed_ips), "request http
// method is not allowed." (method not in a non-empty allowed_methods) or "request http referrer
// is missing or not allowed." (referrer absent, or its lower-cased value not in a non-empty
// allowed_referrers).
absl::Status CheckTokenRules(const TokenRules& rules, absl::string_view peer_ip,
                             absl::string_view method, std::optional<absl::string_view> referrer);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_API_TOKEN_H_
