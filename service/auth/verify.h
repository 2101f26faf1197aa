#ifndef DVEXPORT_SERVICE_AUTH_VERIFY_H_
#define DVEXPORT_SERVICE_AUTH_VERIFY_H_

// The synchronous core of authentication: a call's credentials parsed (no I/O) and verified
// against DHIS2 2.42's tables, with DHIS2's checks in DHIS2's order and DHIS2's messages.
// docs/SECURITY.md, "Authentication", lists each rule, its test and every difference from DHIS2.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/auth/refusal_reason.h"
#include "service/dhis2/api_token.h"
#include "service/dhis2/dhis2_version.h"
#include "service/dhis2/principal.h"

namespace dvexport::db {
class ReadSession;
}  // namespace dvexport::db

namespace dvexport::auth {

// The door a call came through, set by each door.
enum class Transport {
  // gRPC: several authorization values are refused, and refusals name the metadata to send.
  kGrpc,
  // HTTP (DHIS2's URL): the first Authorization header counts (Tomcat's getHeader, which DHIS2's
  // filters read), and refusals are DHIS2's own texts ("Unauthorized", the token rules' texts).
  kHttp,
};

// What one call presents.
struct Credentials {
  // Every `authorization` metadata value (Authorization header over HTTP), in order.
  std::vector<std::string> authorization;
  // The username a verified client certificate maps to (--client_identities).
  std::optional<std::string> certificate_user;
  // What a token's request rules see of the request (dhis2::CheckTokenRules): its HTTP method
  // (an export over gRPC counts as a GET) and its Referer header (a gRPC call carries none).
  std::string method = "GET";
  std::optional<std::string> referrer;
  Transport transport = Transport::kGrpc;
};

enum class CredentialKind { kApiToken, kBasic, kCertificate };

// A call's credential, parsed, no I/O.
struct PresentedCredential {
  CredentialKind kind = CredentialKind::kApiToken;
  std::string username;  // Basic and certificate; empty for a token
  std::string secret;    // the token, or the password (never logged)
  // The DHIS2 version (its minor, 40 to 43) whose rules Present applied; Verify follows it too.
  int dhis2 = dhis2::kNewestServed;
  // The identity cache's key: lowercase hex HMAC-SHA-256 over the kind, the username and the
  // secret (length-prefixed, so that no two credentials share it), under a random key drawn once
  // per process: equal for equal credentials within a process, and useless for testing guessed
  // passwords offline.
  std::string cache_key;
};

// Parses without I/O, as DHIS2 "dhis2" (its minor version) does. Unauthenticated with DHIS2's
// message: no credentials ("Unauthorized"; over gRPC with a sentence saying what to send),
// several authorization values (gRPC only: over HTTP the first counts), "Api token is malformed"
// (reason malformed_token, a 400 over HTTP; on 2.40 token_malformed, a 401), "Checksum
// validation failed" (2.41 and later: 2.40 checks no checksum and looks any token up by its
// key), a malformed Basic value or another scheme ("Unauthorized"; over gRPC with why). A
// certificate user counts only when no authorization value is present: an explicit credential
// wins.
absl::StatusOr<PresentedCredential> Present(const Credentials& credentials,
                                            int dhis2 = dhis2::kNewestServed);

// The username "credentials" name, for the call log of a refused call: Basic's (as Present reads
// it, whether or not the user exists) or the certificate's user; empty for a token and for what
// Present refuses before a username is read. Never the password.
std::string PresentedUsername(const Credentials& credentials);

struct Identity {
  dhis2::Principal principal;
  std::optional<int64_t> token_expires_ms;  // api_token.expire; nullopt: never
  dhis2::TokenRules token_rules;            // IP / method / referrer lists (empty: none)
};

// Verifies against DHIS2's tables in one read-only transaction of "session"
// (ReadSession::Lookup), DHIS2's checks in DHIS2's order, Unauthenticated with DHIS2's
// messages; database failures as ReadSession reports them (Unavailable, DeadlineExceeded,
// Cancelled, ...). CPU-heavy for passwords (bcrypt, also for an unknown user): the caller runs
// it on a worker thread. "now" for the expiry checks.
absl::StatusOr<Identity> Verify(db::ReadSession& session, const PresentedCredential& credential,
                                std::chrono::system_clock::time_point now);

// What DHIS2 checks again on every request, cached identity or not: the token's expiry, and its
// request rules ("peer_ip" the caller's address, "method" and "referrer" the request's: GET and
// none for a gRPC call). OK for a password or certificate identity. A referrer list refuses with
// DHIS2's text over HTTP; over gRPC, which has no Referer, the text says so.
absl::Status CheckPerCall(const Identity& identity, std::string_view peer_ip,
                          std::chrono::system_clock::time_point now,
                          std::string_view method = "GET",
                          std::optional<std::string_view> referrer = std::nullopt,
                          Transport transport = Transport::kGrpc);

}  // namespace dvexport::auth

#endif  // DVEXPORT_SERVICE_AUTH_VERIFY_H_
