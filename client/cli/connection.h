#ifndef DVEXPORT_CLIENT_CLI_CONNECTION_H_
#define DVEXPORT_CLIENT_CLI_CONNECTION_H_

#include <grpcpp/channel.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cli/command_line.h"

namespace dvexport::cli {

// The channel to the command's server: TLS when --tls-ca, --tls-cert or
// --tls-key was given, plaintext otherwise. An error names an unreadable file.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const CommandLine& command);

// Prints "dvexport: error: CODE: message" on stderr and returns the exit code
// of a failed command: kExitUnauthenticated for UNAUTHENTICATED and
// kExitPermissionDenied for PERMISSION_DENIED, each with a line on what to
// do ("permission_hint" for PERMISSION_DENIED if not empty), else
// kExitExportFailed.
int PrintError(const absl::Status& status, absl::string_view permission_hint = {});

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_CONNECTION_H_
