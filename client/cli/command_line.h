#ifndef DVEXPORT_CLIENT_CLI_COMMAND_LINE_H_
#define DVEXPORT_CLIENT_CLI_COMMAND_LINE_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/export_client.h"
#include "dvexport/v1/export.pb.h"

namespace dvexport::cli {

// The output argument that means standard output.
inline constexpr absl::string_view kStandardOutput = "-";

// A parsed dvexport command line.
struct CommandLine {
  enum class Action {
    kShowHelp,         // dvexport --help
    kShowExportHelp,   // dvexport export --help
    kExport,           // dvexport export ...
    kShowStreamHelp,   // dvexport stream --help
    kStream,           // dvexport stream ...
    kShowCountHelp,    // dvexport count --help
    kCount,            // dvexport count ...
    kShowHealthHelp,   // dvexport health --help
    kHealth,           // dvexport health ...
    kShowSyncHelp,     // dvexport sync --help
    kSync,             // dvexport sync ...
    kShowStreamsHelp,  // dvexport streams --help, dvexport streams list|drop --help
    kStreamsList,      // dvexport streams list ...
    kStreamsDrop,      // dvexport streams drop ...
  };
  Action action = Action::kShowHelp;

  // The rest is set for kExport, kSync, kStream, kCount, kHealth, kStreamsList and kStreamsDrop
  // only.
  std::string server;
  // A file path, or kStandardOutput (kExport, kStream; kSync: a path).
  std::string output;
  // kSync: the file holding the last change token; kStreamsDrop: such a file, whose token names
  // the stream to drop.
  std::string state_file;
  // kSync: a first sync (no state file yet) asks for a change stream (--snapshot-token: no).
  bool start_change_stream = true;
  // kStreamsDrop: the stream to drop by change token (--change-token) or by name (--name); one of
  // these two and state_file is set.
  std::string change_token;
  std::string stream_name;
  // Filters, id schemes, format and compression, complete: the format and
  // compression follow the flags, else the output file's extension. kStream
  // and kCount use the query only.
  dvexport::v1::ExportFileRequest request;
  // kHealth: the service asked about; empty for the server as a whole.
  std::string health_service;
  // Zero: no deadline.
  std::chrono::milliseconds timeout{0};
  // TLS files (--tls-ca, --tls-cert, --tls-key; all empty: plaintext) and
  // max_attempts (--attempts, --no-retry), which kExport also applies to
  // whole exports (ExportOptions::max_attempts).
  client::ChannelOptions channel;
  // The DHIS2 identity as the command line names it (--token-file FILE,
  // --user NAME; at most one). The secrets themselves are never on the command
  // line: ResolveIdentity (identity.h) reads them into "credentials", from the
  // file, DVEXPORT_PASSWORD or a prompt, or DVEXPORT_TOKEN.
  std::string token_file;
  std::string user;
  client::CallCredentialsSpec credentials;
  // kExport, kSync, kStream into a regular file: its write-back range
  // (--writeback-mib; client::WriteLimits::write_back_bytes), 0 for none.
  int64_t write_back_bytes = client::kDefaultWriteBackBytes;
};

// The largest --writeback-mib.
inline constexpr int kMaxWriteBackMib = 1024;

// The command of the change streams, followed by its action: "streams list", "streams drop".
inline constexpr absl::string_view kStreamsCommand = "streams";

// The commands, as typed: "export", "sync", "stream", "count", "health", "streams".
inline constexpr absl::string_view kCommandNames[] = {"export", "sync",   "stream",
                                                      "count",  "health", kStreamsCommand};

// Parses the arguments that follow the program name. A command line that
// makes no valid command is INVALID_ARGUMENT with a message for the user.
//
// Flags are "--name value" or "--name=value"; repeatable filters also take
// comma-separated lists; switches (--children, --include-deleted) take no
// value; -h or --help anywhere asks for help with the command. Each command
// accepts only its own flags.
absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

// The text of "dvexport --help": the commands and every flag.
std::string Usage();

// The text of "dvexport export --help": every flag of the export command.
std::string ExportUsage();

// The text of "dvexport COMMAND --help" for any of kCommandNames ("streams":
// both of its actions); empty for an unknown command.
std::string CommandUsage(absl::string_view command);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_COMMAND_LINE_H_
