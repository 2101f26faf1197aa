#ifndef DVEXPORT_SERVICE_DHIS2_PRINCIPAL_H_
#define DVEXPORT_SERVICE_DHIS2_PRINCIPAL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dvexport::dhis2 {

// How a caller proved who it is.
enum class AuthMethod {
  kApiToken,     // authorization: ApiToken d2p_... (a personal access token)
  kPassword,     // authorization: Basic base64(username:password)
  kCertificate,  // a verified client certificate listed in --client_identities
};

// A DHIS2 user as authentication found it: what DHIS2 2.42's read rules need about the caller
// (its UserDetails). Built by authentication, cached for a short time, read by authorization.
struct Principal {
  int64_t user_id = 0;   // userinfo.userinfoid
  std::string uid;       // userinfo.uid
  std::string username;  // userinfo.username
  // A role of the user has the authority "ALL".
  bool superuser = false;
  // The UIDs of the user's groups (usergroupmembers), sorted, unique.
  std::vector<std::string> group_uids;
  AuthMethod method = AuthMethod::kApiToken;
  // api_token.uid for kApiToken (never the token itself); empty otherwise.
  std::string token_uid;
};

// "api_token", "password", "certificate": for the call log.
inline const char* AuthMethodName(AuthMethod method) {
  switch (method) {
    case AuthMethod::kApiToken:
      return "api_token";
    case AuthMethod::kPassword:
      return "password";
    case AuthMethod::kCertificate:
      return "certificate";
  }
  return "unknown";
}

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_PRINCIPAL_H_
