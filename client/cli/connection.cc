#include "client/cli/connection.h"

#include <cstdio>
#include <string>

#include "client/cli/export_command.h"
#include "client/export_client.h"

namespace dvexport::cli {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const CommandLine& command) {
  return client::CreateChannel(command.server, command.channel);
}

int PrintError(const absl::Status& status) {
  std::fprintf(stderr, "dvexport: error: %s: %s\n", absl::StatusCodeToString(status.code()).c_str(),
               std::string(status.message()).c_str());
  return kExitExportFailed;
}

}  // namespace dvexport::cli
