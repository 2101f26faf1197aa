#ifndef DVEXPORT_CLIENT_CLI_COUNT_COMMAND_H_
#define DVEXPORT_CLIENT_CLI_COUNT_COMMAND_H_

#include "client/cli/command_line.h"

namespace dvexport::cli {

// Runs "dvexport count": prints the number of values of the query on stdout,
// or the error on stderr, and returns the exit status.
int RunCount(const CommandLine& command);

// Runs "dvexport health": prints the serving status (SERVING, NOT_SERVING,
// ...) on stdout, or the error on stderr; exit status 0 only for SERVING.
int RunHealth(const CommandLine& command);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_COUNT_COMMAND_H_
