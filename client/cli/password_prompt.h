#ifndef DVEXPORT_CLIENT_CLI_PASSWORD_PROMPT_H_
#define DVEXPORT_CLIENT_CLI_PASSWORD_PROMPT_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::cli {

// How long a prompt waits for its answer.
inline constexpr std::chrono::seconds kPasswordPromptTimeout{300};

// Writes "prompt" to the terminal "fd" and reads one line from it with echo
// off: the password, without its newline. Echo is turned back on before this
// returns, and also when SIGINT, SIGTERM, SIGHUP or SIGQUIT arrive meanwhile:
// their handler restores the terminal and the signal's default action, and
// the process then dies of the signal as it would have without the prompt.
// The handlers in place before are back on return. Must be called before the
// process starts threads (a signal must reach this thread).
//
// FailedPrecondition if "fd" is no terminal, DeadlineExceeded if no line came
// within "timeout", Cancelled at end of input (^D) before a newline.
absl::StatusOr<std::string> ReadPasswordFromTerminal(
    int fd, absl::string_view prompt, std::chrono::milliseconds timeout = kPasswordPromptTimeout);

// The same on the process's controlling terminal (/dev/tty, as ssh and psql
// ask), whatever stdin and stdout are; FailedPrecondition if there is none.
absl::StatusOr<std::string> PromptForPassword(absl::string_view prompt);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_PASSWORD_PROMPT_H_
