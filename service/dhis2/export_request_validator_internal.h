// Parts of export request validation that DHIS2 2.42's rules (export_request_validator.cc) and
// 2.43's (export_request_validator_243.cc) share. Not for other rooms.

#ifndef DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_INTERNAL_H_
#define DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_INTERNAL_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "dvexport/v1/export.pb.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/id_scheme.h"

namespace dvexport::dhis2::internal {

// OK if `value` is an identifier in `scheme`: a UID under UID, else not empty, UTF-8 and without
// NUL; InvalidArgument naming `field` otherwise.
absl::Status CheckIdentifier(std::string_view field, const IdScheme& scheme,
                             std::string_view value);

// A start_date or end_date (ParseDate); an empty `text` leaves `date` unset.
absl::Status ParseOptionalDate(std::string_view field, std::string_view text,
                               std::optional<std::chrono::sys_days>* date);

// DateUtils.getDuration: ^(\d+)(d|h|m|s)$, in microseconds; nullopt if malformed or beyond
// Long.MAX_VALUE; clamped to int64 microseconds.
std::optional<int64_t> ParseDuration(std::string_view text);

// The E2005 argument: the value itself when short and printable, else quoted.
std::string DurationArgument(std::string_view text);

// An integer as Java's MessageFormat writes a Number argument: -1,000.
std::string GroupedInteger(int64_t value);

// changes_since and start_change_stream, which exclude limit and each other (docs/SYNC.md).
absl::Status BindChangeTracking(const dvexport::v1::ExportRequest& request, ExportParams* params);

}  // namespace dvexport::dhis2::internal

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_INTERNAL_H_
