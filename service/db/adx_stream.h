#ifndef DVEXPORT_SERVICE_DB_ADX_STREAM_H_
#define DVEXPORT_SERVICE_DB_ADX_STREAM_H_

// The database side of an ADX export: the metadata DHIS2's AdxDataSetMetadata holds (each
// option combo's categories and options, checked as DHIS2 checks them) and the values in the
// order their groups need, read with one COPY. DHIS2 2.43's ADX (a scope with dhis2 == 43) has
// rules of its own (DefaultDataExportService.exportInGroups): adx_stream_243.cc.

#include <cstdint>
#include <optional>
#include <pqxx/transaction_base>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/db/export_scope.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/id_scheme.h"
#include "service/encode/adx_data_value_encoder.h"

namespace dvexport::db {

// DHIS2 2.43's ADX request, as ValidateExportRequest243 made it (ADX's defaults applied).
struct AdxRequest243 {
  // In the request's order, as decoded by the validator (input scheme, code fallback).
  dhis2::Identifiers data_sets;
  // data_set, data_element, org_unit, category and category_option are read.
  dhis2::OutputIdSchemes output;
  // The default attribute option combo's categories are left out of its groups.
  bool exclude_default_aoc = false;
};

struct AdxIdSchemes {
  dhis2::IdScheme data_set;
  // Categories and category options (DHIS2: idScheme, CODE unless the request says otherwise).
  dhis2::IdScheme category;
  // Set for an export of DHIS2 2.43 (scope.dhis2 >= 43), whose ADX reads these instead of the
  // schemes above.
  std::optional<AdxRequest243> dhis2_43;
};

// One data set of a DHIS2 2.43 ADX export: its values are read with a query of their own.
struct AdxDataSet243 {
  int64_t id = 0;
  std::string uid;
  std::optional<std::string> output_id;   // in the data set output scheme
  std::vector<int64_t> data_element_ids;  // its members, sorted
};

// What an ADX export writes besides the scope's identifiers.
struct AdxScope {
  IdentifierMap data_sets;  // the requested ones, in the data set output scheme
  // The categories of every option combo of the data sets' attribute category combos and of
  // their elements' category combos (datasetelement's, else the data element's), in the combo's
  // order; empty for the default combo's.
  absl::flat_hash_map<int64_t, std::vector<encode::AdxAttribute>> option_combos;
  // Every period of the scope as <start date>/<duration>.
  absl::flat_hash_map<int64_t, std::string> periods;
  // The data elements of the scope whose value type is numeric.
  absl::flat_hash_set<int64_t> numeric_data_elements;
  // UIDs, for messages: of the scope's data elements, and of every category option combo.
  absl::flat_hash_map<int64_t, std::string> data_element_uids;
  absl::flat_hash_map<int64_t, std::string> option_combo_uids;

  // DHIS2 2.43 only. The decoded data sets, in the request's order (one named twice, by its UID
  // and by its code, is there twice, as in DHIS2). option_combos then holds every option combo
  // whose categories and options all have an identifier, in its combo's order (the default
  // combo's too: default="default" under CODE); periods every period of the scope.
  std::vector<AdxDataSet243> ordered_data_sets;
  // 2.43: the option combos whose categories cannot be attributes (an identifier that is no XML
  // name, or one of ADX's own, or a category twice), with why.
  absl::flat_hash_map<int64_t, std::string> unwritable_option_combos;
  // 2.43 with exclude_default_aoc: the default option combo, whose groups have no categories.
  std::optional<int64_t> excluded_attribute_option_combo;
  // 2.43: the output ids of the data sets' elements and of the scope's org units (the scope's
  // own maps hold UIDs: AdxFileExport reads 2.43's scope with UID output schemes).
  IdentifierMap data_elements_243;
  IdentifierMap org_units_243;
};

// Reads the ADX metadata of "scope" in "tx" with parameterized queries; for a scope of DHIS2 2.43,
// ResolveAdxScope243 with schemes.dhis2_43. FailedPrecondition with
// DHIS2's message where a category's identifier is missing or not an XML name ("Category CODE
// for Sex is missing or invalid: null") or an option's is missing ("CategoryOption CODE for Male
// is missing"), checked for every option combo of the data sets' combos as DHIS2 does, with or
// without values ("ATTRIBUTE:<uid>" for the ATTRIBUTE scheme, as DHIS2's IdScheme.name()); also
// where a category's identifier would repeat one of ADX's own attributes or has a namespace
// prefix (':'), where an option combo has no option of one of its combo's categories ("attribute
// option combo <uid> has no category options", or "... has no category option of category
// <name>"; DHIS2 fails there with a NullPointerException), or a period type has no ADX
// duration. Database errors are libpqxx's exceptions.
absl::StatusOr<AdxScope> ResolveAdxScope(pqxx::transaction_base& tx, const ExportScope& scope,
                                         const AdxIdSchemes& schemes);

// DHIS2 2.43's ADX metadata (DefaultDataExportService.exportInGroups, StatelessIdCoder): the
// request's data sets decoded in its order, each with its members; every option combo's
// categories and options in the category and category option schemes (IC's query, in the
// combo's category order: 2.43's own order varies between runs); the periods; then 2.43's
// encoding checks, each for the first group (in the export's order) that fails it, before the
// first byte, as "<code>: <message>" (FailedPrecondition; the HTTP door's 409): E8200 "Export as
// CODE not possible as the property is undefined for data set: `<uid>`" for a data set without
// an identifier that has a value; in the group, E8201 for its data elements without one
// ("... for data element(s): `[uid1, uid2]`"), E8202 its org unit ("... for org unit(s):
// `[uid]`"), E8204 an option combo or its attribute option combo whose categories or options
// lack one (its message repeats the option scheme where 2.43's template has {1}: "... linked to
// category option combo(s): `CODE`"). The scheme is 2.43's IdProperty.Name: UID, CODE, NAME or
// ATTR. An option combo whose categories cannot be attributes (unwritable_option_combos) is
// FailedPrecondition naming it, where 2.43 would write XML that does not parse.
absl::StatusOr<AdxScope> ResolveAdxScope243(pqxx::transaction_base& tx, const ExportScope& scope,
                                            const AdxRequest243& request);

// The ordered query of an ADX export: one row per (requested data set holding the value's data
// element, value) for the attribute option combos of the data set's combo, ordered by data set
// (request order), then the internal ids of attribute option combo, org unit, period, data
// element and category option combo. Integers of "scope" only.
std::string BuildAdxSelectSql(const ExportScope& scope);

// One value of an ADX export; "new_group" when it starts a group (its data set, period, org
// unit or attribute option combo differ from the previous value's).
struct AdxRow {
  bool new_group = false;
  encode::AdxGroup group;
  encode::AdxValue value;
};

// Reads the values of BuildAdxSelectSql with one COPY and calls "row" for each, in order; "row"
// returning false stops it (Cancelled). On every failure "stop_copy" is called, as by
// StreamDataValues. Rows are valid only during the call. Internal for an id
// outside "scope" or "adx", FailedPrecondition naming the UIDs of a category option combo outside
// the data sets' combos and of its value's data element (DHIS2 fails on it too, with a
// NullPointerException).
absl::Status StreamAdxValues(pqxx::transaction_base& tx, const ExportScope& scope,
                             const AdxScope& adx, absl::FunctionRef<bool(const AdxRow&)> row,
                             absl::FunctionRef<void()> stop_copy);

// DHIS2 2.43's ADX values (StreamAdxValues calls it for a scope of 2.43): for each of
// adx.ordered_data_sets, one COPY of its members' values under every other filter of "scope" (no
// restriction to the data set's attribute combo), ORDER BY pe.startdate, pe.enddate, ou.path,
// aoc.uid (then the value's key), with the scope's limit and offset for each data set; a group
// starts at each data set and wherever period, org unit or attribute option combo change.
// Internal for a value ResolveAdxScope243 did not check.
absl::Status StreamAdxValues243(pqxx::transaction_base& tx, const ExportScope& scope,
                                const AdxScope& adx, absl::FunctionRef<bool(const AdxRow&)> row,
                                absl::FunctionRef<void()> stop_copy);

// The query of one data set of a 2.43 ADX export: "columns" of "datavalue dv" (joined to period
// pe, organisationunit ou and categoryoptioncombo aoc) in the export's order, with the scope's
// limit and offset. Integers of "scope" and "data_set" only.
std::string BuildAdxSelectSql243(const ExportScope& scope, const AdxDataSet243& data_set,
                                 std::string_view columns);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_ADX_STREAM_H_
