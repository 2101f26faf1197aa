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
  // 2.43's inputUseCodeFallback applies to this field (the request asked for it and gave the
  // field no input scheme; scheme is then UID). Values are not checked as UIDs: DHIS2 2.43 keeps
  // the UIDs among them and, when any value is not a UID, also looks every value up by code
  // (DefaultDataExportService.decodeIds).
  bool code_fallback = false;

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
  // DHIS2 2.43's categoryIdScheme and categoryOptionIdScheme: id_scheme, else UID. dvexport
  // writes no category or option ids (unfoldOptionCombos is refused); 2.43 names the schemes in
  // its header.
  IdScheme category = IdScheme::Uid();
  IdScheme category_option = IdScheme::Uid();
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
  // attribute_option_combos is empty; both set or both empty. 2.43: set whenever
  // attribute_options is given, attribute_combo possibly empty (2.43 then takes the default
  // category combo); used only when attribute_option_combos decodes to nothing, and options that
  // make no attribute option combo filter nothing.
  std::string attribute_combo;
  std::vector<std::string> attribute_options;
  // De-duplicated (2024-01-01 and 20240101 are one period), first-seen order.
  std::vector<Period> periods;
  // Both or neither; start_date <= end_date. 2.43: each on its own (a period's start on or after
  // start_date, its end on or before end_date), start_date <= end_date when both are given.
  std::optional<std::chrono::sys_days> start_date;
  std::optional<std::chrono::sys_days> end_date;
  // last_updated as microseconds since 1970-01-01T00:00:00 UTC.
  std::optional<int64_t> last_updated_micros;
  // 2.43 compares lastUpdated by date only (Hibernate binds it as a java.sql.Date): the database
  // layer truncates the bound, last_updated_micros or now minus last_updated_duration_micros, to
  // midnight UTC of its day before comparing (values updated earlier that day are exported too).
  // The micros above stay as parsed. False before 2.43 (the full timestamp is compared).
  bool last_updated_date_only = false;
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
  // The request pinned the version (ExportRequest.dhis2_version) rather than taking the
  // database's: the session then does not check it against the database's (only that it is
  // not newer).
  bool dhis2_pinned = false;
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
  // the field's input scheme is UID by default: true when the request asked for it and gave no
  // input_id_scheme; each field's Identifiers::code_fallback says whether it applies there.
  bool input_use_code_fallback = false;
  // 2.43: how many different period strings the request gave. 2.43's data value set names its
  // period only when this is 1 (202401 and 2024-01 are one period but two strings).
  std::size_t period_texts = 0;
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
// malformed for 2.40 and 2.41. Before 2.43, a 2.43 parameter (offset, order, order_by_period,
// level, category_option_combo, input_use_code_fallback, exclude_default_coc,
// exclude_default_aoc) is refused first: `offset: a DHIS2 2.43 parameter; this export answers as
// DHIS2 2.42`. From 43 on: ValidateExportRequest243 ("order" is not used: 2.43 reports the first
// failure).
absl::StatusOr<ExportParams> ValidateExportRequest(const dvexport::v1::ExportRequest& request,
                                                   RuleOrder order = RuleOrder::kFirstFailure,
                                                   int dhis2 = 42);

// DHIS2 2.43.2's decoding and validation (DataValueSetController's binding, then
// DefaultDataExportService.decodeParams and validateFilters), params.dhis2 = 43. The first
// failure wins, in this order:
// 1. Binding, in the order Spring binds the parameters (alphabetical by DHIS2's name):
//    attributeCombo, attributeOptionComboIdScheme, attributeOptions,
//    categoryOptionComboIdScheme, dataElementIdScheme, dataSetIdScheme, endDate, idScheme,
//    inputDataElementGroupIdScheme, inputDataElementIdScheme, inputDataSetIdScheme,
//    inputIdScheme, inputOrgUnitIdScheme, lastUpdated, order, orgUnitIdScheme, startDate. HTTP
//    400s with Spring's text (see Dhis2HttpRefusalStatus in export_error.h), e.g.
//    "Value 'x' is not valid for parameter attributeCombo. UID must be an alphanumeric string of
//    11 characters starting with a letter, but was: x", "Value 'x' is not valid for parameter
//    inputIdScheme. Valid values are: [ID, UID, UUID, NAME, CODE, ATTRIBUTE]" (input schemes are
//    names only: ATTRIBUTE:<uid> is refused), "Value 'x' is not valid for parameter idScheme.
//    Invalid ID scheme: x\n\tUse UID, CODE, NAME, ATTRIBUTE:<uid>" (ID means UID). Dates and
//    order keys (EXPORT_ORDER_UNSPECIFIED) are refused with dvexport's messages, as for 2.42.
// 2. Decoding, field by field: data_set, data_element_group, data_element, org_unit,
//    org_unit_group, category_option_combo, attribute_option_combo (2.43.2's order; 2.43.1
//    decoded attribute_option_combo first), then period, then last_updated_duration.
//    An identifier field that is not empty with input scheme ATTRIBUTE: 400 "Attribute must be
//    used with the attribute ID"; UUID: 500 "UUID is not supported for this operation"; UID or
//    ID: every value must be a UID, else 400 "UID must be an alphanumeric string of 11
//    characters starting with a letter, but was: x"; CODE, NAME and the code fallback: not
//    empty, UTF-8 and without NUL (dvexport's message, as for 2.42). Well-formed unknown ids
//    are kept (they match nothing). A period ParseIsoPeriod243 refuses: 400 with its text; one
//    outside the years 1 to 9999: dvexport's message. A last_updated_duration that is not blank
//    and not <digits><d|h|m|s>: E2005 (2.43.2).
// 3. validateFilters: CheckExportRules243.
// changes_since and start_change_stream are checked as for 2.42, and refuse a non-zero offset as
// they refuse limit. offset is taken as its absolute value; order maps to OrderKey, first
// occurrence kept, order_by_period puts kPe first unless present, empty gives kPe, kCreated,
// kDe; level is kept as given (0 or less matches nothing).
absl::StatusOr<ExportParams> ValidateExportRequest243(const dvexport::v1::ExportRequest& request);

// DHIS2 2.43.2's validateFilters on decoded parameters, the first failure as "<code>: <message>":
// E2001 no data_set, data_element or data_element_group; E2002 no period and not both dates, and
// no last_updated or last_updated_duration; E2006 no org_unit or org_unit_group; E2003 periods
// and both dates; E2004 start_date after end_date; E2007 children with org_unit_group; E2009 a
// negative limit (its value shown, as 2.42 shows it, where 2.43 shows a literal {0}). 2.43 has
// no E2008. ValidateExportRequest243 calls it with the identifiers as given; the database layer,
// which drops codes and names that match nothing, may call it again with what decoding kept
// (2.43 checks E2001 and E2006 after decoding).
absl::Status CheckExportRules243(const ExportParams& params);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_REQUEST_VALIDATOR_H_
