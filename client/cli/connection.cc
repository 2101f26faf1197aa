#include "client/cli/connection.h"

#include <cstdio>
#include <string>

#include "client/cli/export_command.h"
#include "client/export_client.h"

namespace dvexport::cli {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const CommandLine& command) {
  return client::CreateChannel(command.server, command.channel);
}

int PrintError(const absl::Status& status, absl::string_view permission_hint) {
  std::fprintf(stderr, "dvexport: error: %s: %s\n", absl::StatusCodeToString(status.code()).c_str(),
               std::string(status.message()).c_str());
  switch (status.code()) {
    case absl::StatusCode::kUnauthenticated:
      std::fputs(
          "dvexport: the server did not accept the DHIS2 identity: give a valid personal access "
          "token (--token-file FILE or DVEXPORT_TOKEN) or --user NAME and its password\n",
          stderr);
      return kExitUnauthenticated;
    case absl::StatusCode::kPermissionDenied:
      if (!permission_hint.empty()) {
        std::fprintf(stderr, "dvexport: %s\n", std::string(permission_hint).c_str());
        return kExitPermissionDenied;
      }
      std::fputs(
          "dvexport: the DHIS2 user may not read what was asked for; the server's message names "
          "it\n",
          stderr);
      return kExitPermissionDenied;
    default:
      return kExitExportFailed;
  }
}

}  // namespace dvexport::cli
