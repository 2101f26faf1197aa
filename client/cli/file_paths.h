#ifndef DVEXPORT_CLIENT_CLI_FILE_PATHS_H_
#define DVEXPORT_CLIENT_CLI_FILE_PATHS_H_

#include <string>

#include "absl/status/status.h"
#include "client/cli/command_line.h"

namespace dvexport::cli {

// Whether "a" and "b" name the same file: by device and inode when both
// exist (the same path, "./F" and "F", a hard link, a symbolic link, a
// symbolic link to a directory on the way); when neither exists yet, by where
// each would be created (its directory resolved, a dangling symbolic link
// followed to its target). A path that exists is never the same file as one
// that does not.
bool SameFile(const std::string& a, const std::string& b);

// Refuses a command line that writes a file over another file it names: -o
// (export, sync, stream; not "-") or sync's --state being the same file as
// another of -o, --state, --tls-ca, --tls-cert and --tls-key. INVALID_ARGUMENT
// naming both flags and paths; meant to run before anything is written or any
// call is made (the CLI exits 2).
absl::Status CheckFilePaths(const CommandLine& command);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_FILE_PATHS_H_
