#ifndef DVEXPORT_CLIENT_CLI_IDENTITY_H_
#define DVEXPORT_CLIENT_CLI_IDENTITY_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/cli/command_line.h"
#include "client/credentials.h"

namespace dvexport::cli {

// The environment variables the CLI reads its secrets from.
inline constexpr char kTokenVariable[] = "DVEXPORT_TOKEN";
inline constexpr char kPasswordVariable[] = "DVEXPORT_PASSWORD";

// Where ResolveIdentity finds what the command line does not hold.
struct IdentitySources {
  // The value of an environment variable; nullopt if it is not set.
  std::function<std::optional<std::string>(const char* name)> getenv;
  // Asks for a password with "prompt" on a terminal (PromptForPassword).
  std::function<absl::StatusOr<std::string>(const std::string& prompt)> prompt;
};

// The process's environment and its controlling terminal.
IdentitySources ProcessIdentitySources();

// The DHIS2 identity of "command", first found of:
//   1. --token-file FILE: the token in FILE (client::ReadTokenFile);
//   2. --user NAME: NAME, with the password in DVEXPORT_PASSWORD if it is set
//      (even empty: then refused), else typed at a prompt on the terminal;
//      without a terminal: FailedPrecondition saying what to set;
//   3. DVEXPORT_TOKEN, if set (empty: refused);
//   4. none: an empty spec (for a server run with --auth none).
// --token-file and --user exclude each other (ParseCommandLine refuses both).
// Errors name the flag or variable and never hold a secret.
absl::StatusOr<client::CallCredentialsSpec> ResolveIdentity(const CommandLine& command,
                                                            const IdentitySources& sources);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_IDENTITY_H_
