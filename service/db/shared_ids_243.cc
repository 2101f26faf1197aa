#include "service/db/shared_ids_243.h"

#include <cstdlib>
#include <optional>
#include <pqxx/result>
#include <string>

#include "absl/strings/str_cat.h"
#include "service/dhis2/uid.h"

namespace dvexport::db {
namespace {

// The first two distinct ids of "column" among the export's values, or the first two values'.
std::vector<int64_t> FirstIds(pqxx::transaction_base& tx, const ExportScope& scope,
                              const char* column, bool distinct) {
  std::vector<int64_t> ids;
  for (const pqxx::row& row :
       tx.exec(absl::StrCat("SELECT ", distinct ? "DISTINCT " : "", "x.", column, " FROM (",
                            ExportedIdsSql(scope, column), ") x LIMIT 2"))) {
    ids.push_back(std::strtoll(row[0].c_str(), nullptr, 10));
  }
  return ids;
}

// The text "ids" gives the only id, if there is exactly one and it has one.
std::optional<std::string> OnlyText(const std::vector<int64_t>& ids, const IdentifierMap& texts) {
  if (ids.size() != 1) return std::nullopt;
  const auto it = texts.find(ids.front());
  return it == texts.end() ? std::nullopt : it->second;
}

// Whether "id" is DHIS2's default category option combo's.
bool IsDefaultCombo(pqxx::transaction_base& tx, int64_t id) {
  return !tx.exec(absl::StrCat("SELECT 1 FROM categoryoptioncombo WHERE categoryoptioncomboid = ",
                               id, " AND uid = '", dhis2::kDefaultCategoryOptionComboUid, "'"))
              .empty();
}

}  // namespace

std::string ExportedIdsSql(const ExportScope& scope, const char* column) {
  if (scope.limit.has_value() || scope.offset.value_or(0) > 0) {
    return absl::StrCat("SELECT s.", column, " FROM (", BuildDataValueSelectSql(scope), ") s");
  }
  return absl::StrCat("SELECT dv.", column, " FROM ", DataValueSourceSql(scope), " WHERE ",
                      BuildDataValueWhereSql(scope));
}

void FindSharedHeaderIds243(pqxx::transaction_base& tx, const dhis2::ExportParams& params,
                            ExportScope* scope) {
  if (!scope->group_header.has_value() || scope->MatchesNothing()) return;
  GroupHeader& header = *scope->group_header;
  if (params.output.org_unit.property != dhis2::IdScheme::Property::kUid && !header.org_unit) {
    header.org_unit =
        OnlyText(FirstIds(tx, *scope, "sourceid", /*distinct=*/true), scope->org_units);
  }
  if (params.output.attribute_option_combo.property != dhis2::IdScheme::Property::kUid &&
      !header.attribute_option_combo) {
    // Not distinct (encodeGroup lists every value's combo): exactly one value.
    const std::vector<int64_t> ids =
        FirstIds(tx, *scope, "attributeoptioncomboid", /*distinct=*/false);
    const bool default_left_out =
        params.exclude_default_aoc && ids.size() == 1 && IsDefaultCombo(tx, ids.front());
    if (!default_left_out) {
      header.attribute_option_combo = OnlyText(ids, scope->attribute_option_combos);
    }
  }
}

}  // namespace dvexport::db
