#ifndef DVEXPORT_CLIENT_CLI_STREAMS_COMMAND_H_
#define DVEXPORT_CLIENT_CLI_STREAMS_COMMAND_H_

#include "client/cli/command_line.h"

namespace dvexport::cli {

// Runs "dvexport streams list": one line per change stream on stdout,
//   NAME OWNER WAL_STATUS RETAINED_MIB IDLE_SECONDS ACTIVE
// (OWNER and WAL_STATUS "-" when empty, RETAINED_MIB with one decimal, ACTIVE yes or no), then
// "change tokens: stream" or "change tokens: snapshot; change streams unavailable: <reason>";
// or the error on stderr. Returns the exit status.
int RunStreamsList(const CommandLine& command);

// Runs "dvexport streams drop": drops the stream of --state FILE's token, of --change-token or of
// --name, prints "dropped NAME" on stdout, or the error on stderr. Returns the exit status.
int RunStreamsDrop(const CommandLine& command);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_STREAMS_COMMAND_H_
