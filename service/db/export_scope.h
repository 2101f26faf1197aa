#ifndef DVEXPORT_SERVICE_DB_EXPORT_SCOPE_H_
#define DVEXPORT_SERVICE_DB_EXPORT_SCOPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "service/db/pg_connection.h"
#include "service/dhis2/export_request_validator.h"

namespace dvexport::db {

// DHIS2's single data value set header, resolved.
struct SingleDataValueSetHeader {
  std::string data_set;
  std::optional<int64_t> complete_date_micros;  // completedatasetregistration.date
  std::string period;
  std::string org_unit;
};

// An export request resolved against the database: the internal ids to filter
// on and, for every id that can appear in a row, the identifier to write.
struct ExportScope {
  std::vector<int64_t> data_element_ids;  // sorted, unique
  std::vector<int64_t> period_ids;        // sorted, unique
  std::vector<int64_t> org_unit_ids;      // sorted, unique
  bool include_deleted = false;
  std::optional<int32_t> limit;

  absl::flat_hash_map<int64_t, std::string> data_elements;
  absl::flat_hash_map<int64_t, std::string> periods;
  absl::flat_hash_map<int64_t, std::string> org_units;
  absl::flat_hash_map<int64_t, std::string> category_option_combos;  // also the AOCs

  std::optional<SingleDataValueSetHeader> header;

  // True when a filter resolved to no ids, so that no value can match.
  bool MatchesNothing() const {
    return data_element_ids.empty() || period_ids.empty() || org_unit_ids.empty() ||
           (limit && *limit == 0);
  }
};

// Looks up every identifier of "params" with parameterized queries on
// "conn" (which should be inside the export's transaction). NotFound names an
// identifier that does not exist; FailedPrecondition a period type that
// DHIS2 2.42 cannot name.
absl::StatusOr<ExportScope> ResolveExportScope(PgConnection& conn,
                                               const dhis2::ExportParams& params);

// The WHERE condition (without "WHERE") on "datavalue dv" that selects the
// scope's values, ignoring the limit. Integers from "scope" only.
std::string BuildDataValueWhereSql(const ExportScope& scope);

// The COPY statement that streams the scope's data values in binary, columns
// as kDataValueColumns. Holds only integers taken from "scope", never text a
// caller sent. No ORDER BY: rows come as PostgreSQL reads them.
std::string BuildDataValueCopySql(const ExportScope& scope);

// The columns of the data value COPY, in order.
inline constexpr int kDataValueColumns = 12;

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_EXPORT_SCOPE_H_
