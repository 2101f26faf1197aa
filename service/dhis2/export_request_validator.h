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
#include "service/dhis2/change_token.h"
#include "service/dhis2/id_scheme.h"
#include "service/dhis2/period.h"

namespace dvexport::dhis2 {

// The identifiers of one request field, in the field's input id scheme.
struct Identifiers {
  IdScheme scheme;
  // De-duplicated, in the order first seen in the request.
  std::vector<std::string> values;

  bool empty() const { return values.empty(); }
  size_t size() const { return values.size(); }
};

// The output id scheme of each identifier in the export (DHIS2 IdSchemes:
// the specific scheme, else id_scheme, else UID).
struct OutputIdSchemes {
  IdScheme data_element;
  IdScheme org_unit;
  IdScheme category_option_combo;
  IdScheme attribute_option_combo;
  IdScheme data_set;  // the single data value set header only
};

// 2.43's `order` keys (DataExportParams.Order), each ascending.
enum class OrderKey { kDe, kOu, kPe, kCreated, kAoc };

// A validated, normalised dvexport::v1::ExportRequest. Identifiers are well
// formed in their input scheme, not yet resolved against the database.
struct ExportParams {
  // Input schemes: the specific input_*_id_scheme, else input_id_scheme, else
  // UID; org unit groups and attribute option combos use input_id_scheme.
  Identifiers data_sets;
  Identifiers data_element_groups;
  Identifiers data_elements;
  Identifiers org_units;
  Identifiers org_unit_groups;
  Identifiers attribute_option_combos;
  // DHIS2 attributeCombo + attributeOptions (UIDs), used only when
  // attribute_option_combos is empty; both set or both empty.
  std::string attribute_combo;
  std::vector<std::string> attribute_options;
  // De-duplicated (2024-01-01 and 20240101 are one period), first-seen order.
  std::vector<Period> periods;
  // Both or neither; start_date <= end_date.
  std::optional<std::chrono::sys_days> start_date;
  std::optional<std::chrono::sys_days> end_date;
  // last_updated as microseconds since 1970-01-01T00:00:00 UTC.
  std::optional<int64_t> last_updated_micros;
  // last_updated_duration in microseconds (>= 0); the export keeps values
  // updated at or after "now" minus this. Ignored when last_updated is set
  // (DHIS2 does the same).
  std::optional<int64_t> last_updated_duration_micros;
  bool children = false;
  bool include_deleted = false;
  // >= 0 when present.
  std::optional<int32_t> limit;
  // changes_since, decoded: export only what changed since that snapshot.
  // Never together with limit.
  std::optional<ChangeToken> changes_since;
  // start_change_stream: read the export in the snapshot of a new change stream's slot, and
  // give a stream token (where the database cannot, a snapshot token). Never together with
  // limit or changes_since.
  bool start_change_stream = false;
  OutputIdSchemes output;

  // The DHIS2 minor version whose rules made these parameters, and whose order and bytes the
  // export follows (42 for 2.40 to 2.42, whose exports are the same; 43).
  int dhis2 = 42;
  // 2.43 only (empty or unset before it). The export's order, complete: 2.43's default (PE,
  // CREATED, DE) when the request gave none; orderByPeriod applied.
  std::vector<OrderKey> order;
  // >= 0 when present (2.43 takes the absolute value).
  std::optional<int64_t> offset;
  // Only org units at this hierarchy level.
  std::optional<int32_t> level;
  // Category option combos, in input_id_scheme.
  Identifiers category_option_combos;
  // Identifiers that are not UIDs are also looked up by code (2.43 inputUseCodeFallback) where
  // the field's input scheme is UID by default.
  bool input_use_code_fallback = false;
  bool exclude_default_coc = false;
  bool exclude_default_aoc = false;

  // True for exactly one data set, one period and one org unit and no data
  // element group: the export then has DHIS2's single data value set header
  // (DataExportParams.isSingleDataValueSet).
  bool IsSingleDataValueSet() const;
};

// Which failing rule of DHIS2's (step 2 below) ValidateExportRequest reports.
enum class RuleOrder {
  // The first failing rule in DHIS2's order: dvexport's documented gRPC behaviour.
  kFirstFailure,
  // The last failing rule, as DHIS2 2.42 reports it (each check overwrites the previous one):
  // the HTTP door's behaviour, e.g. no parameters at all gives E2006, not E2001.
  kLastFailure,
};

// Checks `request` and returns its normalised parameters, or InvalidArgument
// describing the first problem found:
// 1. Malformed values, naming the field and the value: first the id schemes
//    (identifiers are checked in theirs), an id scheme that is not UID, CODE,
//    NAME or ATTRIBUTE:<uid> (`input_id_scheme: "ID" is not a valid id scheme
//    (...)`); then field by field in proto order: an identifier
//    that is not a UID under the UID scheme (`data_set: "abc" is not a valid
//    UID (11 characters, a letter then letters or digits)`), or that is empty,
//    holds a NUL byte or is not UTF-8 under any scheme; a period that
//    ParseIsoPeriod rejects (`period: "2024X1" is not a valid ISO period`), a
//    start_date, end_date or last_updated that ParseDate rejects (`start_date:
//    "2024-13-01" is not a valid date (yyyy-MM-dd)`), `start_date and end_date
//    must be given together`, and E2040 for attribute_combo without
//    attribute_options or the reverse, a changes_since that DecodeChangeToken
//    refuses (FailedPrecondition, as it returns, for a token of version 1),
//    and changes_since with limit. An empty string in a repeated
//    field is malformed; an empty scalar string is unset.
// 2. DHIS2's rules, in DHIS2's order, as "<code>: <message>" (see
//    export_error.h): E2001 no data_set, data_element or data_element_group;
//    E2002 no period, start/end dates, last_updated or last_updated_duration;
//    E2003 periods and dates; E2004 start_date after end_date; E2005
//    last_updated_duration not <digits><d|h|m|s>; E2006 no org_unit and no
//    org_unit_group; E2007 children with org_unit_group; E2008 children without
//    org_unit; E2009 negative limit. `order` says which failing rule is
//    reported: the first (default) or, as DHIS2 does, the last. Step 1 comes
//    first either way.
// "dhis2" is the minor version whose period types are known: a FinancialSep period (2.42's) is
// malformed for 2.40 and 2.41.
absl::StatusOr<ExportParams> ValidateExportRequest(const dvexport::v1::ExportRequest& request,
                                                   RuleOrder order = RuleOrder::kFirstFailure,
                                                   int dhis2 = 42);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_H_
