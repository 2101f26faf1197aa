#ifndef DVEXPORT_SERVICE_AUTH_CLIENT_IDENTITIES_H_
#define DVEXPORT_SERVICE_AUTH_CLIENT_IDENTITIES_H_

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::auth {

// --client_identities: which verified client certificate stands for which DHIS2 username. One
// entry per line, "<subject DN or URI SAN> <whitespace> <username>"; the username is the last
// field (DHIS2 usernames hold no whitespace), the subject everything before it, so that a DN may
// contain spaces. Blank lines and lines starting with '#' are ignored. The subject DN is written
// as gRPC reports it (RFC 2253, most specific first: "CN=warehouse,O=Ministry"); a URI SAN as it
// appears in the certificate ("spiffe://example.org/warehouse"). Matching is exact.
class ClientIdentities {
 public:
  // "source" names the file in errors ("--client_identities <path>").
  static absl::StatusOr<ClientIdentities> Parse(absl::string_view text, absl::string_view source);
  // Reads and parses the file at "path"; InvalidArgument naming --client_identities otherwise.
  static absl::StatusOr<ClientIdentities> Load(const std::string& path);

  // The username of a certificate with "subject" and "uri_sans": the subject's entry if listed,
  // else the first listed URI SAN's; nullopt when none is listed.
  std::optional<std::string> Find(absl::string_view subject,
                                  const std::vector<std::string>& uri_sans) const;

  size_t size() const { return users_.size(); }

 private:
  std::unordered_map<std::string, std::string> users_;
};

}  // namespace dvexport::auth

#endif  // DVEXPORT_SERVICE_AUTH_CLIENT_IDENTITIES_H_
