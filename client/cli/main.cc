// dvexport: the command-line client of the dvexport server.

#include <grpc/support/log.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "client/cli/command_line.h"
#include "client/cli/count_command.h"
#include "client/cli/export_command.h"
#include "client/cli/file_paths.h"
#include "client/cli/identity.h"
#include "client/cli/stream_command.h"
#include "client/cli/streams_command.h"

namespace {

// gRPC's own log lines (such as "E1201 ... Handshake failed" before the CLI's
// own "UNAVAILABLE" message) are not the CLI's messages: they are dropped,
// unless gRPC's GRPC_VERBOSITY is set (gRPC then passes lines of that
// severity and above), and then printed as "dvexport: grpc: ...".
void PrintGrpcLog(gpr_log_func_args* args) {
  const char* severity = args->severity == GPR_LOG_SEVERITY_ERROR  ? "error"
                         : args->severity == GPR_LOG_SEVERITY_INFO ? "info"
                                                                   : "debug";
  std::fprintf(stderr, "dvexport: grpc: %s: %s (%s:%d)\n", severity, args->message, args->file,
               args->line);
}

void DropGrpcLog(gpr_log_func_args*) {}

}  // namespace

int main(int argc, char** argv) {
  using dvexport::cli::CommandLine;
  const char* verbosity = std::getenv("GRPC_VERBOSITY");
  gpr_set_log_function(verbosity != nullptr && *verbosity != '\0' ? PrintGrpcLog : DropGrpcLog);
  const std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<CommandLine> command = dvexport::cli::ParseCommandLine(args);
  if (!command.ok()) {
    const bool in_command =
        !args.empty() &&
        std::find(std::begin(dvexport::cli::kCommandNames), std::end(dvexport::cli::kCommandNames),
                  args[0]) != std::end(dvexport::cli::kCommandNames);
    const std::string help = in_command ? args[0] + " " : "";
    std::fprintf(stderr, "dvexport: %s\nRun 'dvexport %s--help' for %s.\n",
                 std::string(command.status().message()).c_str(), help.c_str(),
                 in_command ? "its flags" : "the commands and flags");
    return dvexport::cli::kExitUsage;
  }
  const absl::Status paths = dvexport::cli::CheckFilePaths(*command);
  if (!paths.ok()) {
    std::fprintf(stderr, "dvexport: %s\n", std::string(paths.message()).c_str());
    return dvexport::cli::kExitUsage;
  }
  switch (command->action) {
    case CommandLine::Action::kExport:
    case CommandLine::Action::kSync:
    case CommandLine::Action::kStream:
    case CommandLine::Action::kCount:
    case CommandLine::Action::kStreamsList:
    case CommandLine::Action::kStreamsDrop: {
      // Before any thread starts: a password prompt must get the terminal's signals.
      absl::StatusOr<dvexport::client::CallCredentialsSpec> identity =
          dvexport::cli::ResolveIdentity(*command, dvexport::cli::ProcessIdentitySources());
      if (!identity.ok()) {
        std::fprintf(stderr, "dvexport: %s\n", std::string(identity.status().message()).c_str());
        return dvexport::cli::kExitUsage;
      }
      command->credentials = *std::move(identity);
      break;
    }
    default:
      break;
  }
  switch (command->action) {
    case CommandLine::Action::kShowHelp:
      std::fputs(dvexport::cli::Usage().c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kShowExportHelp:
      std::fputs(dvexport::cli::CommandUsage("export").c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kShowStreamHelp:
      std::fputs(dvexport::cli::CommandUsage("stream").c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kShowCountHelp:
      std::fputs(dvexport::cli::CommandUsage("count").c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kShowHealthHelp:
      std::fputs(dvexport::cli::CommandUsage("health").c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kShowSyncHelp:
      std::fputs(dvexport::cli::CommandUsage("sync").c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kShowStreamsHelp:
      std::fputs(dvexport::cli::CommandUsage(dvexport::cli::kStreamsCommand).c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kExport:
    case CommandLine::Action::kSync:
      return dvexport::cli::RunExport(*command);
    case CommandLine::Action::kStreamsList:
      return dvexport::cli::RunStreamsList(*command);
    case CommandLine::Action::kStreamsDrop:
      return dvexport::cli::RunStreamsDrop(*command);
    case CommandLine::Action::kStream:
      return dvexport::cli::RunStream(*command);
    case CommandLine::Action::kCount:
      return dvexport::cli::RunCount(*command);
    case CommandLine::Action::kHealth:
      return dvexport::cli::RunHealth(*command);
  }
  return dvexport::cli::kExitUsage;
}
