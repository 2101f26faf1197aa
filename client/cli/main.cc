// dvexport: the command-line client of the dvexport server.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "client/cli/command_line.h"
#include "client/cli/count_command.h"
#include "client/cli/export_command.h"
#include "client/cli/stream_command.h"

int main(int argc, char** argv) {
  using dvexport::cli::CommandLine;
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
    case CommandLine::Action::kExport:
    case CommandLine::Action::kSync:
      return dvexport::cli::RunExport(*command);
    case CommandLine::Action::kStream:
      return dvexport::cli::RunStream(*command);
    case CommandLine::Action::kCount:
      return dvexport::cli::RunCount(*command);
    case CommandLine::Action::kHealth:
      return dvexport::cli::RunHealth(*command);
  }
  return dvexport::cli::kExitUsage;
}
