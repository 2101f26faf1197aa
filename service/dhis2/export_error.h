// DHIS2's data export request errors (2.42 feedback/ErrorCode.java, raised by
// DefaultDataValueSetService.validate and decideAccess), with their messages.

#ifndef DVEXPORT_SERVICE_DHIS2_EXPORT_ERROR_H_
#define DVEXPORT_SERVICE_DHIS2_EXPORT_ERROR_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace dvexport::dhis2 {

enum class ExportError {
  kE2000,  // parameters missing
  kE2001,  // no data element, data set or data element group
  kE2002,  // no period, start/end dates, last updated or duration
  kE2003,  // periods and start/end dates both given
  kE2004,  // start date after end date
  kE2005,  // last updated duration unparseable
  kE2006,  // no organisation unit or organisation unit group
  kE2007,  // children with organisation unit groups
  kE2008,  // children without organisation units
  kE2009,  // negative limit
  kE2010,  // data set not readable by the user
  kE2011,  // attribute option combo not readable by the user
  kE2012,  // organisation unit outside the user's hierarchy
};

struct ExportErrorInfo {
  ExportError error;
  // DHIS2's code, e.g. "E2001".
  std::string_view code;
  // DHIS2's message, verbatim; "{0}" stands for the argument.
  std::string_view message;
  // The gRPC status code dvexport reports it with.
  absl::StatusCode status_code;
};

// Indexed by ExportError.
inline constexpr std::array<ExportErrorInfo, 13> kExportErrors = {{
    {ExportError::kE2000, "E2000", "Query parameters cannot be null",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2001, "E2001",
     "At least one data element, data set or data element group must be specified",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2002, "E2002",
     "At least one period, start/end dates, last updated or last updated duration must be "
     "specified",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2003, "E2003", "Both periods and start/end date cannot be specified",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2004, "E2004", "Start date must be before end date",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2005, "E2005", "Duration is not valid: `{0}`",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2006, "E2006",
     "At least one organisation unit or organisation unit group must be specified",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2007, "E2007",
     "Organisation unit children cannot be included for organisation unit groups",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2008, "E2008",
     "At least one organisation unit must be specified when children are included",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2009, "E2009", "Limit cannot be less than zero: `{0}`",
     absl::StatusCode::kInvalidArgument},
    {ExportError::kE2010, "E2010", "User is not allowed to read data for data set: `{0}`",
     absl::StatusCode::kPermissionDenied},
    {ExportError::kE2011, "E2011",
     "User is not allowed to read data for attribute option combo: `{0}`",
     absl::StatusCode::kPermissionDenied},
    {ExportError::kE2012, "E2012", "User is not allowed to view org unit: `{0}`",
     absl::StatusCode::kPermissionDenied},
}};

constexpr const ExportErrorInfo& GetExportErrorInfo(ExportError error) {
  return kExportErrors[static_cast<std::size_t>(error)];
}

// Returns "<code>: <message>", with "{0}" in the message replaced by
// `argument`, e.g. "E2009: Limit cannot be less than zero: `-1`".
std::string ExportErrorMessage(ExportError error, std::string_view argument = {});

// Returns a status with the error's status code and ExportErrorMessage.
absl::Status ExportErrorStatus(ExportError error, std::string_view argument = {});

// DHIS2 2.43 answers a malformed parameter with a WebMessage that has no errorCode: 400 (500 for
// an input id scheme UUID) and an exception's text as the message, e.g. "UID must be an
// alphanumeric string of 11 characters starting with a letter, but was: abc". dvexport's status
// for it names the request's field for a gRPC caller, "data_set: UID must be ...", and carries
// DHIS2's HTTP status and exact text as a payload, which the HTTP door shows instead of the
// status's message.
struct Dhis2HttpRefusal {
  int http_status = 400;
  // DHIS2's text, verbatim (without the field).
  std::string message;
};

// A status of `code` (InvalidArgument for all of 2.43's) with the message "<field>: <message>"
// and the Dhis2HttpRefusal {http_status, message} as a payload.
absl::Status Dhis2HttpRefusalStatus(absl::StatusCode code, std::string_view field, int http_status,
                                    std::string_view message);

// The refusal a status carries, or nullopt (every status not made by Dhis2HttpRefusalStatus:
// 2.42's refusals, the E20xx conflicts, dvexport's own messages).
std::optional<Dhis2HttpRefusal> Dhis2HttpRefusalOf(const absl::Status& status);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_ERROR_H_
