#ifndef DVEXPORT_CLIENT_CLI_STREAM_COMMAND_H_
#define DVEXPORT_CLIENT_CLI_STREAM_COMMAND_H_

#include <string>

#include "client/cli/command_line.h"
#include "dvexport/v1/export.pb.h"

namespace dvexport::cli {

// Appends one line of "dvexport stream" to "*out": "value" as a JSON object
// with the protobuf JSON names (period first, as the one identifier always
// present, then dataElement, orgUnit, categoryOptionCombo,
// attributeOptionCombo, value, storedBy, created, lastUpdated, comment,
// followup, deleted), absent optional fields left out,
// Timestamps in RFC 3339 UTC as the protobuf JSON mapping writes them, then
// "\n".
void AppendDataValueJsonLine(const dvexport::v1::DataValue& value, std::string* out);

// Runs "dvexport stream": writes every value of the query as a JSON line to
// the output (a file is replaced only once the stream is complete), shows
// progress on a terminal stderr, prints the summary or the error on stderr
// and returns the exit status. Signals are handled as by RunExport, whose
// requirements it shares.
int RunStream(const CommandLine& command);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_STREAM_COMMAND_H_
