#include "service/db/access_rules.h"

#include <cstdlib>
#include <optional>
#include <pqxx/prepared_statement>
#include <pqxx/result>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "service/db/array_literal.h"
#include "service/db/export_scope.h"
#include "service/dhis2/export_error.h"
#include "service/dhis2/sharing.h"

namespace dvexport::db {
namespace {

using Params = std::vector<std::string>;

pqxx::result Query(pqxx::transaction_base& tx, const std::string& sql, const Params& params) {
  return tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
}

int64_t ToInt64(const pqxx::field& field) { return std::strtoll(field.c_str(), nullptr, 10); }

std::optional<std::string> ToOptional(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return std::string(field.c_str(), field.size());
}

// The sharing predicate common to both rules: the user's own entry and its groups' entries,
// looked up by key as DHIS2's jsonb_has_user_id / jsonb_check_user_access /
// jsonb_has_user_group_ids / jsonb_check_user_groups_access do. The group test walks the user's
// groups rather than jsonb_each(userGroups), which is the same for an object and does not fail
// where userGroups is not one (DHIS2's query then fails instead).
std::string EntryTerms(const char* alias, int user_param, int groups_param, const char* pattern) {
  return absl::StrCat("(", alias, ".sharing->'users' ? $", user_param, " AND ", alias,
                      ".sharing->'users'->$", user_param, "->>'access' LIKE '", pattern, "') OR (",
                      alias, ".sharing->'userGroups' ?| $", groups_param,
                      "::text[] AND EXISTS (SELECT 1 FROM unnest($", groups_param,
                      "::text[]) g(uid) WHERE ", alias,
                      ".sharing->'userGroups'->g.uid->>'access' LIKE '", pattern, "'))");
}

// Which table a sharing read concerns. Names are constants of this file.
struct SharingTable {
  const char* table;
  const char* id_column;
};

constexpr SharingTable kDataSetSharing{"dataset", "datasetid"};

// The Java view of each object's sharing (public access string, users' and groups' entries with
// their "id" and "access" fields), for the objects "ids" of "table". Objects without a row are
// absent; a NULL column, absent keys and JSON nulls give empty parts.
absl::flat_hash_map<int64_t, dhis2::Sharing> ReadSharing(pqxx::transaction_base& tx,
                                                         const SharingTable& table,
                                                         const std::vector<int64_t>& ids) {
  absl::flat_hash_map<int64_t, dhis2::Sharing> out;
  if (ids.empty()) return out;
  auto entries = [&](const char* kind, const char* key) {
    return absl::StrCat(" UNION ALL SELECT o.", table.id_column, ", '", kind,
                        "', e.value->>'id', e.value->>'access' FROM ", table.table,
                        " o CROSS JOIN LATERAL jsonb_each(CASE jsonb_typeof(o.sharing->'", key,
                        "') WHEN 'object' THEN o.sharing->'", key,
                        "' ELSE '{}'::jsonb END) e WHERE o.", table.id_column,
                        " = ANY($1::bigint[])");
  };
  const pqxx::result result =
      Query(tx,
            absl::StrCat("SELECT o.", table.id_column, ", 'p', o.sharing->>'public', ",
                         "o.sharing->>'owner' FROM ", table.table, " o WHERE o.", table.id_column,
                         " = ANY($1::bigint[])", entries("u", "users"), entries("g", "userGroups")),
            {ToArrayLiteral(ids)});
  for (const pqxx::row& row : result) {
    dhis2::Sharing& sharing = out[ToInt64(row[0])];
    const std::string_view kind(row[1].c_str());
    if (kind == "p") {
      sharing.public_access = ToOptional(row[2]);
      sharing.owner = ToOptional(row[3]);
    } else {
      dhis2::SharingEntry entry{ToOptional(row[2]), ToOptional(row[3])};
      (kind == "u" ? sharing.users : sharing.user_groups).push_back(std::move(entry));
    }
  }
  return out;
}

absl::Status DecideDataSets(pqxx::transaction_base& tx, const ExportScope& scope,
                            const dhis2::Principal& reader) {
  if (reader.superuser || scope.data_set_ids.empty()) return absl::OkStatus();
  const absl::flat_hash_map<int64_t, dhis2::Sharing> sharing =
      ReadSharing(tx, kDataSetSharing, scope.data_set_ids);
  const pqxx::result uids =
      Query(tx, "SELECT datasetid, uid FROM dataset WHERE datasetid = ANY($1::bigint[])",
            {ToArrayLiteral(scope.data_set_ids)});
  absl::flat_hash_map<int64_t, std::string> uid_of;
  for (const pqxx::row& row : uids) uid_of[ToInt64(row[0])] = row[1].c_str();
  const dhis2::Sharing none{};  // a data set without a row has none (it was just resolved)
  for (int64_t id : scope.data_set_ids) {
    auto it = sharing.find(id);
    if (!dhis2::CanDataReadDataSet(reader, it == sharing.end() ? none : it->second)) {
      return dhis2::ExportErrorStatus(dhis2::ExportError::kE2010, uid_of[id]);
    }
  }
  return absl::OkStatus();
}

absl::Status DecideAttributeOptionCombos(pqxx::transaction_base& tx, const ExportScope& scope,
                                         const dhis2::Principal& reader) {
  const std::vector<int64_t>& combos = scope.requested_attribute_option_combo_ids;
  if (reader.superuser || combos.empty()) return absl::OkStatus();
  const pqxx::result names = Query(tx,
                                   "SELECT categoryoptioncomboid, uid, name = 'default' "
                                   "FROM categoryoptioncombo "
                                   "WHERE categoryoptioncomboid = ANY($1::bigint[])",
                                   {ToArrayLiteral(combos)});
  absl::flat_hash_map<int64_t, std::pair<std::string, bool>> combo_info;
  for (const pqxx::row& row : names) {
    combo_info[ToInt64(row[0])] = {row[1].c_str(), !row[2].is_null() && row[2].c_str()[0] == 't'};
  }
  // CategoryOptionCombo.getCategoryOptions() is a set: each option once.
  const pqxx::result members =
      Query(tx,
            "SELECT DISTINCT categoryoptioncomboid, categoryoptionid "
            "FROM categoryoptioncombos_categoryoptions "
            "WHERE categoryoptioncomboid = ANY($1::bigint[]) AND categoryoptionid IS NOT NULL",
            {ToArrayLiteral(combos)});
  absl::flat_hash_map<int64_t, std::vector<int64_t>> options_of;
  std::vector<int64_t> option_ids;
  for (const pqxx::row& row : members) {
    options_of[ToInt64(row[0])].push_back(ToInt64(row[1]));
    option_ids.push_back(ToInt64(row[1]));
  }
  const absl::flat_hash_map<int64_t, dhis2::Sharing> sharing =
      ReadSharing(tx, SharingTable{scope.category_option_table, "categoryoptionid"}, option_ids);
  for (int64_t id : combos) {
    std::vector<dhis2::Sharing> options;
    for (int64_t option : options_of[id]) {
      auto it = sharing.find(option);
      options.push_back(it == sharing.end() ? dhis2::Sharing() : it->second);
    }
    const auto& [uid, is_default] = combo_info[id];
    if (!dhis2::CanDataReadOptionCombo(reader, is_default, options)) {
      return dhis2::ExportErrorStatus(dhis2::ExportError::kE2011, uid);
    }
  }
  return absl::OkStatus();
}

absl::Status DecideOrgUnits(pqxx::transaction_base& tx, const ExportScope& scope,
                            const dhis2::Principal& reader) {
  const std::vector<int64_t>& units = scope.requested_org_unit_ids;
  if (units.empty()) return absl::OkStatus();
  // User.getDataViewOrganisationUnitsWithFallback: the data view units if there are any, else
  // the data capture units; read now, as DHIS2 reloads the User for this check.
  const pqxx::result view = Query(
      tx,
      "WITH dv AS (SELECT organisationunitid FROM userdatavieworgunits WHERE userinfoid = $1) "
      "SELECT a.uid FROM organisationunit a WHERE a.organisationunitid IN ("
      "SELECT organisationunitid FROM dv UNION ALL SELECT organisationunitid FROM usermembership "
      "WHERE userinfoid = $1 AND NOT EXISTS (SELECT 1 FROM dv))",
      {absl::StrCat(reader.user_id)});
  std::vector<std::string> view_uids;
  for (const pqxx::row& row : view) view_uids.emplace_back(row[0].c_str());
  const pqxx::result paths = Query(tx,
                                   "SELECT organisationunitid, uid, coalesce(path, '') "
                                   "FROM organisationunit "
                                   "WHERE organisationunitid = ANY($1::bigint[])",
                                   {ToArrayLiteral(units)});
  absl::flat_hash_map<int64_t, std::pair<std::string, std::string>> unit_info;
  for (const pqxx::row& row : paths) unit_info[ToInt64(row[0])] = {row[1].c_str(), row[2].c_str()};
  for (int64_t id : units) {
    const auto& [uid, path] = unit_info[id];
    if (!dhis2::InDataViewHierarchy(path, view_uids)) {
      return dhis2::ExportErrorStatus(dhis2::ExportError::kE2012, uid);
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string PgTextArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string MetadataReadableSql(const char* alias, int user_param, int groups_param) {
  return absl::StrCat("(", alias, ".sharing->>'public' LIKE 'r%' OR ", alias,
                      ".sharing->>'public' = 'null' OR ", alias, ".sharing->>'public' IS NULL OR ",
                      alias, ".sharing->>'owner' IS NULL OR ", alias,
                      ".sharing->>'owner' = 'null' OR ", alias, ".sharing->>'owner' = $",
                      user_param, " OR ", EntryTerms(alias, user_param, groups_param, "r%"), ")");
}

std::string DataReadableSql(const char* alias, int user_param, int groups_param) {
  return absl::StrCat("(", alias, ".sharing->>'owner' IS NULL OR ", alias, ".sharing->>'owner' = $",
                      user_param, " OR ", alias, ".sharing->>'public' LIKE '__r_____' OR ", alias,
                      ".sharing->>'public' IS NULL OR ",
                      EntryTerms(alias, user_param, groups_param, "__r_____"), ")");
}

std::string CategoryOptionDataReadableSql(int user_param, int groups_param) {
  return DataReadableSql("co", user_param, groups_param);
}

std::vector<int64_t> UnreadableAttributeOptionCombos(pqxx::transaction_base& tx,
                                                     const char* category_option_table,
                                                     const dhis2::Principal& reader) {
  const pqxx::result result =
      Query(tx,
            absl::StrCat("SELECT DISTINCT cocco.categoryoptioncomboid "
                         "FROM categoryoptioncombos_categoryoptions cocco "
                         "WHERE cocco.categoryoptionid NOT IN (SELECT co.categoryoptionid "
                         "FROM ",
                         category_option_table, " co WHERE ", CategoryOptionDataReadableSql(1, 2),
                         ") ORDER BY 1"),
            {reader.uid, PgTextArray(reader.group_uids)});
  std::vector<int64_t> ids;
  ids.reserve(result.size());
  for (const pqxx::row& row : result) ids.push_back(ToInt64(row[0]));
  return ids;
}

absl::Status DecideDataReadAccess(pqxx::transaction_base& tx, const ExportScope& scope,
                                  const dhis2::Principal& reader) {
  absl::Status status = DecideDataSets(tx, scope, reader);
  if (status.ok()) status = DecideAttributeOptionCombos(tx, scope, reader);
  if (status.ok()) status = DecideOrgUnits(tx, scope, reader);
  return status;
}

}  // namespace dvexport::db
