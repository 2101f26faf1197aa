#ifndef DVEXPORT_CLIENT_CLI_EXPORT_COMMAND_H_
#define DVEXPORT_CLIENT_CLI_EXPORT_COMMAND_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/cli/command_line.h"

namespace dvexport::cli {

// Exit statuses of the dvexport program.
inline constexpr int kExitOk = 0;
inline constexpr int kExitExportFailed = 1;
inline constexpr int kExitUsage = 2;
// The server refused the call's identity (UNAUTHENTICATED) or its rights
// (PERMISSION_DENIED); see PrintError.
inline constexpr int kExitUnauthenticated = 3;
inline constexpr int kExitPermissionDenied = 4;

// Runs "dvexport export": writes the export, reports progress on a terminal
// stderr and the summary or the error on stderr, and returns the exit status.
// Must be called before the process starts any thread: it blocks SIGINT,
// SIGTERM and SIGHUP in every thread to cancel the export on them (removing
// the temporary file), and then dies of the same signal. It ignores SIGPIPE
// and SIGXFSZ, so that a closed pipe or a file size limit fails the export
// with a message instead of killing the process.
//
// "dvexport sync" (kSync) is the same export with the query's changes_since
// read from the state file (none if the file does not exist); once the output
// is in place, the state file is replaced atomically with the export's change
// token. Any failure before leaves the state file as it was; when the server
// cannot judge its token (FAILED_PRECONDITION on changes_since: another
// database, a token of version 1), the message adds that removing the state
// file makes the next sync export everything.
int RunExport(const CommandLine& command);

// The token kept in a sync state file: its first line; empty if there is no file.
// FailedPrecondition naming --state and the path when it cannot be read or is not a regular
// file.
absl::StatusOr<std::string> ReadSyncState(const std::string& path);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_EXPORT_COMMAND_H_
