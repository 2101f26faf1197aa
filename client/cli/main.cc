// dvexport: the command-line client of the dvexport server.

#include <cstdio>
#include <string>
#include <vector>

#include "client/cli/command_line.h"
#include "client/cli/export_command.h"

int main(int argc, char** argv) {
  using dvexport::cli::CommandLine;
  const std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<CommandLine> command = dvexport::cli::ParseCommandLine(args);
  if (!command.ok()) {
    const bool in_export = !args.empty() && args[0] == "export";
    std::fprintf(stderr, "dvexport: %s\nRun 'dvexport %s--help' for %s.\n",
                 std::string(command.status().message()).c_str(), in_export ? "export " : "",
                 in_export ? "its flags" : "the commands and flags");
    return dvexport::cli::kExitUsage;
  }
  switch (command->action) {
    case CommandLine::Action::kShowHelp:
      std::fputs(dvexport::cli::Usage().c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kShowExportHelp:
      std::fputs(dvexport::cli::ExportUsage().c_str(), stdout);
      return dvexport::cli::kExitOk;
    case CommandLine::Action::kExport:
      return dvexport::cli::RunExport(*command);
  }
  return dvexport::cli::kExitUsage;
}
