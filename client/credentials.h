#ifndef DVEXPORT_CLIENT_CREDENTIALS_H_
#define DVEXPORT_CLIENT_CREDENTIALS_H_

#include <grpcpp/client_context.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::client {

// The DHIS2 identity a call carries, in gRPC metadata as DHIS2 clients send
// it over HTTP: "authorization: ApiToken <token>" (a personal access token,
// d2p_... or d2pat_...) or "authorization: Basic <base64(username:password)>".
// Neither set: the call carries no identity (health checks need none, and a
// server run with --auth none asks for none).
//
// The secrets never appear in a message of this library: errors name the
// field and the position of a bad character, never its value.
struct CallCredentialsSpec {
  // A personal access token; excludes username and password.
  std::string token;
  // A DHIS2 username and its password, for HTTP Basic.
  std::string username;
  std::string password;

  static CallCredentialsSpec Token(std::string token);
  static CallCredentialsSpec Password(std::string username, std::string password);

  bool empty() const { return token.empty() && username.empty() && password.empty(); }
  // "token", "user <name>" or "none": for messages (the username is no secret).
  std::string Describe() const;
};

// The value of the "authorization" metadata for "spec"; InvalidArgument if the
// spec is incomplete (a username without a password, a token together with a
// username), if the username holds ':' (HTTP Basic cannot carry it), or if a
// token holds a character other than printable ASCII without space (gRPC
// metadata values cannot carry control characters; a token has none).
absl::StatusOr<std::string> AuthorizationValue(const CallCredentialsSpec& spec);

// Call credentials that send AuthorizationValue(spec) on every call made with
// them, on a TLS channel and on a plaintext one alike: gRPC 1.51's
// experimental MetadataCredentialsFromPlugin with GRPC_SECURITY_NONE as the
// minimum security level. (The plain MetadataCredentialsFromPlugin asks for
// GRPC_PRIVACY_AND_INTEGRITY, and gRPC then fails every call on a plaintext
// channel on the client's side, before sending it, as UNAUTHENTICATED
// "Established channel does not have a sufficient security level to transfer
// call credential.".) Over
// plaintext the secret crosses the network readable: use TLS beyond loopback
// or a trusted network (docs/DEPLOYMENT.md). Null for an empty spec.
absl::StatusOr<std::shared_ptr<grpc::CallCredentials>> MakeCallCredentials(
    const CallCredentialsSpec& spec);

// Sets MakeCallCredentials(spec) on "context"; does nothing for an empty spec.
absl::Status ApplyCallCredentials(const CallCredentialsSpec& spec, grpc::ClientContext* context);

// The token in "path": its first line, surrounding whitespace removed. The
// file must be a regular file (a FIFO is not waited on) that neither its group
// nor others may read or write (chmod 600 or 400), as ssh requires of a private
// key: a token readable by every account on the host is no one's secret.
// FailedPrecondition for a file that is not one, InvalidArgument for an empty
// first line or a character a token cannot hold; the messages name the path.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// The token in an environment variable's value "value" (DVEXPORT_TOKEN): its
// surrounding whitespace removed; InvalidArgument naming "variable" if it is
// empty or holds a character a token cannot hold.
absl::StatusOr<std::string> TokenFromVariable(absl::string_view variable, absl::string_view value);

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_CREDENTIALS_H_
