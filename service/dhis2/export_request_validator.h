// Validation of export requests, with DHIS2's rules and messages.

#ifndef DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_H_
#define DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/dhis2/period.h"

namespace dvexport::dhis2 {

// A validated, normalised dvexport::v1::ExportRequest. Identifiers are valid
// UIDs, not yet resolved against the database.
struct ExportParams {
  // Each de-duplicated, in the order first seen in the request.
  std::vector<std::string> data_sets;
  std::vector<std::string> data_elements;
  std::vector<std::string> org_units;
  // De-duplicated (2024-01-01 and 20240101 are one period), first-seen order.
  std::vector<Period> periods;
  // Both or neither; start_date <= end_date.
  std::optional<std::chrono::sys_days> start_date;
  std::optional<std::chrono::sys_days> end_date;
  bool children = false;
  bool include_deleted = false;
  // >= 0 when present.
  std::optional<int32_t> limit;

  // True for exactly one data set, one period and one org unit: the export
  // then has DHIS2's single data value set header
  // (DataExportParams.isSingleDataValueSet).
  bool IsSingleDataValueSet() const;
};

// Checks `request` and returns its normalised parameters, or InvalidArgument
// describing the first problem found:
// 1. Malformed values, field by field in proto order, naming the field and the
//    value: a data_set, data_element or org_unit that is not a UID
//    (`data_set: "abc" is not a valid UID (11 characters, a letter then letters
//    or digits)`), a period that ParseIsoPeriod rejects (`period: "2024X1" is
//    not a valid ISO period`), a start_date or end_date that ParseDate rejects
//    (`start_date: "2024-13-01" is not a valid date (yyyy-MM-dd)`), and
//    `start_date and end_date must be given together`. Empty strings in
//    repeated fields are malformed; an empty start_date or end_date is unset.
// 2. DHIS2's rules, in DHIS2's order, as "<code>: <message>" (see
//    export_error.h): E2001 no data_set or data_element; E2002 no period and no
//    start/end dates; E2003 both; E2004 start_date after end_date; E2006 no
//    org_unit; E2008 children without org_unit; E2009 negative limit. DHIS2
//    reports the last failing rule; dvexport reports the first.
absl::StatusOr<ExportParams> ValidateExportRequest(const dvexport::v1::ExportRequest& request);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_H_
