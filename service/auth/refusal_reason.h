#ifndef DVEXPORT_SERVICE_AUTH_REFUSAL_REASON_H_
#define DVEXPORT_SERVICE_AUTH_REFUSAL_REASON_H_

// Why a credential was refused, carried on the refusal's Status: apart from verify.h so that
// what only reads a refusal (the HTTP door's statuses) needs nothing of authentication itself.

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace dvexport::auth {

// "status" with "reason" attached, for RefusalReason to read.
absl::Status WithRefusalReason(absl::Status status, std::string_view reason);

// Why Present, Verify or CheckPerCall (verify.h) refused, carried as a payload of their
// Unauthenticated Status (the message stays DHIS2's): for a metrics label, the call log and the
// HTTP door's status. One of "no_credentials", "several_credentials", "unsupported_scheme",
// "malformed_basic", "malformed_token", "token_malformed" (the same refused as DHIS2 2.40
// refuses it, with 401), "bad_checksum", "unknown_token", "token_expired",
// "token_without_owner", "token_owner_missing", "token_owner_" + dhis2::AccountRefusalName
// ("token_owner_disabled", ...), "wrong_password" (an unknown user too: the two are never told
// apart), "account_disabled" and the other refusals of a right password by their
// AccountRefusalName ("account_expired", "credentials_expired", "external_auth", ...),
// "unknown_certificate_user", "certificate_user_" + AccountRefusalName, "ip_not_allowed",
// "method_not_allowed", "referrer_required". Empty for a Status without it (a database failure,
// say).
std::string RefusalReason(const absl::Status& status);

}  // namespace dvexport::auth

#endif  // DVEXPORT_SERVICE_AUTH_REFUSAL_REASON_H_
