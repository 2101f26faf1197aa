#ifndef DVEXPORT_SERVICE_DB_ADX_STREAM_H_
#define DVEXPORT_SERVICE_DB_ADX_STREAM_H_

// The database side of an ADX export: the metadata DHIS2's AdxDataSetMetadata holds (each
// option combo's categories and options, checked as DHIS2 checks them) and the values in the
// order their groups need, read with one COPY.

#include <cstdint>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/db/export_scope.h"
#include "service/dhis2/id_scheme.h"
#include "service/encode/adx_data_value_encoder.h"

namespace dvexport::db {

struct AdxIdSchemes {
  dhis2::IdScheme data_set;
  // Categories and category options (DHIS2: idScheme, CODE unless the request says otherwise).
  dhis2::IdScheme category;
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
};

// Reads the ADX metadata of "scope" in "tx" with parameterized queries. FailedPrecondition with
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

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_ADX_STREAM_H_
