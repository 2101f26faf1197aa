#ifndef DVEXPORT_SERVICE_DB_EXPORT_SCOPE_INTERNAL_H_
#define DVEXPORT_SERVICE_DB_EXPORT_SCOPE_INTERNAL_H_

// What export_scope.cc (DHIS2 2.40 to 2.42) and export_scope_243.cc (DHIS2 2.43) share to resolve
// an export's scope. Only those two files include it.

#include <cstdint>
#include <optional>
#include <pqxx/result>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "service/db/export_scope.h"

namespace dvexport::db::scope_internal {

// A DHIS2 metadata table and its internal id column. Names are constants of
// this file, never caller input.
struct ObjectTable {
  const char* table;
  const char* id_column;
  const char* noun;  // for messages: "data set"
  // DHIS2 looks it up with the metadata-read sharing predicate for non-superusers (its schema
  // has a persisted "sharing"; org units and option combos have none).
  bool shareable;
};

inline constexpr ObjectTable kDataSets{"dataset", "datasetid", "data set", true};
inline constexpr ObjectTable kDataElementGroups{"dataelementgroup", "dataelementgroupid",
                                                "data element group", true};
inline constexpr ObjectTable kDataElements{"dataelement", "dataelementid", "data element", true};
inline constexpr ObjectTable kOrgUnits{"organisationunit", "organisationunitid",
                                       "organisation unit", false};
inline constexpr ObjectTable kOrgUnitGroups{"orgunitgroup", "orgunitgroupid",
                                            "organisation unit group", true};
inline constexpr ObjectTable kCategoryOptionCombos{"categoryoptioncombo", "categoryoptioncomboid",
                                                   "category option combo", false};
inline constexpr ObjectTable kCategoryCombos{"categorycombo", "categorycomboid", "category combo",
                                             true};
// The category options, in the table of the database's DHIS2 (ExportScope's name).
ObjectTable CategoryOptions(const ExportScope& scope);

using Params = std::vector<std::string>;

// Runs "sql" with text parameters $1..$n as an unnamed statement (PgBouncer in
// transaction pooling carries no named prepared statements).
pqxx::result Query(pqxx::transaction_base& tx, const std::string& sql, const Params& params = {});

int64_t ToInt64(const pqxx::result& r, int row, int col);
std::string ToString(const pqxx::result& r, int row, int col);
std::optional<std::string> ToOptionalString(const pqxx::result& r, int row, int col);
inline int Rows(const pqxx::result& r) { return static_cast<int>(r.size()); }
void SortUnique(std::vector<int64_t>* ids);

// Fills "*out" with the identifier in "scheme" of each object of "table"
// whose id is in "ids", or of every object if "ids" is null.
absl::Status LoadIdentifiers(pqxx::transaction_base& tx, const ObjectTable& table,
                             const dhis2::IdScheme& scheme, const std::vector<int64_t>* ids,
                             IdentifierMap* out);

}  // namespace dvexport::db::scope_internal

#endif  // DVEXPORT_SERVICE_DB_EXPORT_SCOPE_INTERNAL_H_
