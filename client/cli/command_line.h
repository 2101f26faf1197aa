#ifndef DVEXPORT_CLIENT_CLI_COMMAND_LINE_H_
#define DVEXPORT_CLIENT_CLI_COMMAND_LINE_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dvexport/v1/export.pb.h"

namespace dvexport::cli {

// The output argument that means standard output.
inline constexpr absl::string_view kStandardOutput = "-";

// A parsed dvexport command line.
struct CommandLine {
  enum class Action {
    kShowHelp,        // dvexport --help
    kShowExportHelp,  // dvexport export --help
    kExport,          // dvexport export ...
  };
  Action action = Action::kShowHelp;

  // The rest is set for kExport only.
  std::string server;
  // A file path, or kStandardOutput.
  std::string output;
  // Filters, format and compression, complete: the format and compression
  // follow the flags, else the output file's extension.
  dvexport::v1::ExportFileRequest request;
  // Zero: no deadline.
  std::chrono::milliseconds timeout{0};
};

// Parses the arguments that follow the program name. A command line that
// makes no valid command is INVALID_ARGUMENT with a message for the user.
//
// Flags are "--name value" or "--name=value"; repeatable filters also take
// comma-separated lists; switches (--children, --include-deleted) take no
// value; -h or --help anywhere asks for help.
absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

// The text of "dvexport --help": the commands and every flag.
std::string Usage();

// The text of "dvexport export --help": every flag of the export command.
std::string ExportUsage();

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_COMMAND_LINE_H_
