// Quoting of caller-supplied values in error messages.

#ifndef DVEXPORT_SERVICE_DHIS2_QUOTE_H_
#define DVEXPORT_SERVICE_DHIS2_QUOTE_H_

#include <string>
#include <string_view>

namespace dvexport::dhis2 {

// Returns `value` in double quotes, C-escaped (absl::CHexEscape), for an error
// message: "2024X1". A value longer than 64 bytes is cut to its first 64 bytes
// and followed by its length, "aaaa..." (100000 bytes), so that a message stays
// well below gRPC's metadata size limit.
std::string QuoteForMessage(std::string_view value);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_QUOTE_H_
