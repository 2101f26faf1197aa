#ifndef DVEXPORT_SERVICE_AUTH_PASSWORD_H_
#define DVEXPORT_SERVICE_AUTH_PASSWORD_H_

// DHIS2's password check, userinfo.password against what a Basic credential presents, as
// Spring Security 6.5.1's BCryptPasswordEncoder.matches (DHIS2 2.42.1 and later), verified by
// libxcrypt's crypt_rn (never a bcrypt of our own). CPU-heavy: tens of milliseconds at DHIS2's
// cost 10.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::auth {

// The longest password bcrypt reads; Spring Security 6.5.1 refuses longer ones outright.
inline constexpr size_t kMaxPasswordBytes = 72;

// True when "hash" has the form BCryptPasswordEncoder accepts,
// \A\$2(a|y|b)?\$(\d\d)\$[./0-9A-Za-z]{53} matched whole (NULL, empty or another format: false).
bool IsBcryptHash(absl::string_view hash);

// True when "password" (UTF-8 bytes) matches "hash": a well-formed hash (IsBcryptHash), at most
// kMaxPasswordBytes bytes and no NUL byte (crypt_rn reads a C string; DHIS2 would hash the NUL,
// so no password with one can be checked exactly: it never matches), and crypt_rn's result
// equal to "hash", compared in constant time. A hash that is not well-formed still costs one
// bcrypt of the same cost as DHIS2's (DummyPasswordCheck), so that the time taken does not tell
// such an account from others.
bool PasswordMatches(absl::string_view password, absl::string_view hash);

// One bcrypt at DHIS2's cost (10) whose result is thrown away: what a check of an unknown
// user's password costs, so that the time taken does not reveal which users exist.
void DummyPasswordCheck(absl::string_view password);

// A bcrypt hash of "password" by libxcrypt (crypt_gensalt_rn then crypt_rn) with "prefix"
// ("$2a$", "$2b$" or "$2y$") and "cost" (4..31), as DHIS2 stores them. For tests and the demo.
// InvalidArgument naming the argument libxcrypt refused.
absl::StatusOr<std::string> BcryptHash(absl::string_view password, absl::string_view prefix,
                                       int cost);

}  // namespace dvexport::auth

#endif  // DVEXPORT_SERVICE_AUTH_PASSWORD_H_
