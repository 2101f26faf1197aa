#include "service/db/export_scope.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <pqxx/prepared_statement>
#include <pqxx/result>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/db/access_rules.h"
#include "service/db/array_literal.h"
#include "service/db/change_stream.h"
#include "service/db/export_scope_internal.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/period.h"
#include "service/dhis2/quote.h"

namespace dvexport::db {

namespace scope_internal {

ObjectTable CategoryOptions(const ExportScope& scope) {
  return {scope.category_option_table, "categoryoptionid", "category option", true};
}

pqxx::result Query(pqxx::transaction_base& tx, const std::string& sql, const Params& params) {
  return tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
}

int64_t ToInt64(const pqxx::result& r, int row, int col) {
  return std::strtoll(r[row][col].c_str(), nullptr, 10);
}

std::string ToString(const pqxx::result& r, int row, int col) {
  return std::string(r[row][col].c_str(), r[row][col].size());
}

std::optional<std::string> ToOptionalString(const pqxx::result& r, int row, int col) {
  if (r[row][col].is_null()) return std::nullopt;
  return ToString(r, row, col);
}

void SortUnique(std::vector<int64_t>* ids) {
  std::sort(ids->begin(), ids->end());
  ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
}

// Fills "*out" with the identifier in "scheme" of each object of "table"
// whose id is in "ids", or of every object if "ids" is null.
absl::Status LoadIdentifiers(pqxx::transaction_base& tx, const ObjectTable& table,
                             const dhis2::IdScheme& scheme, const std::vector<int64_t>* ids,
                             IdentifierMap* out) {
  Params params;
  if (ids != nullptr) params.push_back(ToArrayLiteral(*ids));
  const int attribute_param = static_cast<int>(params.size()) + 1;
  if (scheme.property == dhis2::IdScheme::Property::kAttribute) {
    params.push_back(scheme.attribute);
  }
  std::string sql =
      absl::StrCat("SELECT o.", table.id_column, ", ", SchemeExpression(scheme, attribute_param),
                   " FROM ", table.table, " o");
  if (ids != nullptr) absl::StrAppend(&sql, " WHERE o.", table.id_column, " = ANY($1::bigint[])");
  const pqxx::result result = Query(tx, sql, params);
  out->reserve(Rows(result));
  for (int i = 0; i < Rows(result); ++i) {
    out->emplace(ToInt64(result, i, 0), ToOptionalString(result, i, 1));
  }
  return absl::OkStatus();
}

}  // namespace scope_internal

namespace {

using dhis2::IdScheme;
using namespace scope_internal;  // NOLINT: this file's own helpers

// BuildDataValueWhereSql: above this many org units, a slice sorted here filters them.
constexpr size_t kOrgUnitsInIndexCondition = 32;

// 0001-01-01T00:00:00 in microseconds since 1970: the earliest last-updated
// bound written into SQL.
constexpr int64_t kEarliestMicros = -62135596800LL * 1000000;

// Looks up "ids" (in their input scheme) in "table" and returns the internal
// ids, in request order. NotFound names the first identifier that does not
// exist, or that a non-superuser "reader" may not read as metadata when the table is shareable
// (the same message: DHIS2 drops it as if it did not exist); InvalidArgument one that names
// several readable objects.
absl::StatusOr<std::vector<int64_t>> ResolveIdentifiers(pqxx::transaction_base& tx,
                                                        const ObjectTable& table,
                                                        const dhis2::Identifiers& ids,
                                                        const char* field,
                                                        const dhis2::Principal* reader) {
  std::vector<int64_t> resolved;
  if (ids.empty()) return resolved;
  const std::string key = SchemeExpression(ids.scheme, 2);
  Params params = {PgTextArray(ids.values)};
  if (ids.scheme.property == IdScheme::Property::kAttribute) params.push_back(ids.scheme.attribute);
  std::string sql = absl::StrCat("SELECT ", key, ", o.", table.id_column, " FROM ", table.table,
                                 " o WHERE ", key, " = ANY($1::text[])");
  if (table.shareable && reader != nullptr && !reader->superuser) {
    const int user_param = static_cast<int>(params.size()) + 1;
    params.push_back(reader->uid);
    params.push_back(PgTextArray(reader->group_uids));
    absl::StrAppend(&sql, " AND ", MetadataReadableSql("o", user_param, user_param + 1));
  }
  const pqxx::result result = Query(tx, sql, params);
  absl::flat_hash_map<std::string, std::vector<int64_t>> found;
  for (int i = 0; i < Rows(result); ++i) {
    found[ToString(result, i, 0)].push_back(ToInt64(result, i, 1));
  }
  const std::string scheme_note =
      ids.scheme.property == IdScheme::Property::kUid
          ? ""
          : absl::StrCat(" (id scheme ", dhis2::IdSchemeName(ids.scheme), ")");
  for (const std::string& value : ids.values) {
    auto it = found.find(value);
    if (it == found.end()) {
      return absl::NotFoundError(
          absl::StrCat(field, ": ", dhis2::QuoteForMessage(value), " does not exist", scheme_note));
    }
    if (it->second.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": ", dhis2::QuoteForMessage(value), " names ", it->second.size(), " ", table.noun,
          "s", scheme_note, "; use an id scheme that is unique, such as UID"));
    }
    resolved.push_back(it->second.front());
  }
  return resolved;
}

// Fills scope->periods and scope->period_ids from rows of (periodid,
// periodtype name, start date as days since 1970-01-01, iso or NULL). A period
// without an ISO id (TwoYearly in 2.42) is an error when requested; when every
// period is in scope it is left out instead, by filtering on the others (DHIS2
// 2.42 would fail on its values).
absl::Status AddPeriods(const pqxx::result& r, ExportScope* scope) {
  bool left_out = false;
  for (int i = 0; i < Rows(r); ++i) {
    int64_t id = ToInt64(r, i, 0);
    if (!r[i][3].is_null()) {
      scope->periods.emplace(id, ToString(r, i, 3));
    } else {
      std::string type_name = ToString(r, i, 1);
      std::optional<dhis2::PeriodType> type = dhis2::PeriodTypeFromName(type_name);
      if (!type && !scope->filter_periods) {
        left_out = true;
        continue;
      }
      if (!type) {
        return absl::FailedPreconditionError(
            absl::StrCat("period ", id, " has period type \"", type_name,
                         "\", which has no ISO identifier in DHIS2 2.42"));
      }
      std::chrono::sys_days start{std::chrono::days{ToInt64(r, i, 2)}};
      scope->periods.emplace(id, dhis2::FormatIsoPeriod(*type, start));
    }
    scope->period_ids.push_back(id);
  }
  SortUnique(&scope->period_ids);
  if (!scope->filter_periods) {
    scope->filter_periods = left_out;
    if (!left_out) scope->period_ids.clear();
  }
  return absl::OkStatus();
}

absl::Status ResolvePeriods(pqxx::transaction_base& tx, bool period_iso,
                            const dhis2::ExportParams& params, ExportScope* scope) {
  const std::string columns =
      absl::StrCat("SELECT p.periodid, pt.name, (p.startdate - DATE '1970-01-01'), ",
                   period_iso ? "p.iso::text" : "NULL::text",
                   " FROM period p JOIN periodtype pt ON pt.periodtypeid = p.periodtypeid ");
  pqxx::result result;
  if (params.start_date && params.end_date) {
    result = Query(tx, absl::StrCat(columns, "WHERE p.startdate >= $1 AND p.enddate <= $2"),
                   {dhis2::FormatDate(*params.start_date), dhis2::FormatDate(*params.end_date)});
  } else if (!params.periods.empty()) {
    std::vector<std::string> names, starts, ends;
    for (const dhis2::Period& p : params.periods) {
      names.emplace_back(dhis2::PeriodTypeName(p.type));
      starts.push_back(dhis2::FormatDate(p.start));
      ends.push_back(dhis2::FormatDate(p.end));
    }
    // A valid period that is not in the period table has no data: it matches
    // nothing (DHIS2 would insert it; we never write).
    result = Query(tx,
                   absl::StrCat(columns,
                                "JOIN unnest($1::text[], $2::date[], $3::date[]) AS q(name, s, e) "
                                "ON pt.name = q.name AND p.startdate = q.s AND p.enddate = q.e"),
                   {PgTextArray(names), PgTextArray(starts), PgTextArray(ends)});
  } else {
    // Only last_updated or its duration: any period (DHIS2 adds no period
    // condition), so every period may appear in a row.
    scope->filter_periods = false;
    result = Query(tx, columns);
  }
  return AddPeriods(result, scope);
}

absl::Status ResolveDataElements(pqxx::transaction_base& tx, const dhis2::ExportParams& params,
                                 const dhis2::Principal* reader, ExportScope* scope,
                                 std::vector<int64_t>* data_set_ids) {
  absl::StatusOr<std::vector<int64_t>> sets =
      ResolveIdentifiers(tx, kDataSets, params.data_sets, "data_set", reader);
  if (!sets.ok()) return sets.status();
  *data_set_ids = *sets;
  scope->data_set_ids = *sets;
  absl::StatusOr<std::vector<int64_t>> groups = ResolveIdentifiers(
      tx, kDataElementGroups, params.data_element_groups, "data_element_group", reader);
  if (!groups.ok()) return groups.status();
  absl::StatusOr<std::vector<int64_t>> elements =
      ResolveIdentifiers(tx, kDataElements, params.data_elements, "data_element", reader);
  if (!elements.ok()) return elements.status();

  // The union of the data elements, the data sets' elements and the groups'
  // members (DHIS2 2.42 uses only the groups when there are any).
  const pqxx::result result = Query(
      tx,
      "SELECT de.dataelementid FROM dataelement de WHERE de.dataelementid = ANY($1::bigint[]) "
      "OR de.dataelementid IN (SELECT dse.dataelementid FROM datasetelement dse "
      "WHERE dse.datasetid = ANY($2::bigint[])) "
      "OR de.dataelementid IN (SELECT degm.dataelementid FROM dataelementgroupmembers degm "
      "WHERE degm.dataelementgroupid = ANY($3::bigint[]))",
      {ToArrayLiteral(*elements), ToArrayLiteral(*sets), ToArrayLiteral(*groups)});
  for (int i = 0; i < Rows(result); ++i) {
    scope->data_element_ids.push_back(ToInt64(result, i, 0));
  }
  SortUnique(&scope->data_element_ids);
  return LoadIdentifiers(tx, kDataElements, params.output.data_element, &scope->data_element_ids,
                         &scope->data_elements);
}

absl::Status ResolveOrgUnits(pqxx::transaction_base& tx, const dhis2::ExportParams& params,
                             const dhis2::Principal* reader, ExportScope* scope,
                             std::vector<int64_t>* root_ids) {
  // Org units have no sharing: found whoever asks (E2012 decides later).
  absl::StatusOr<std::vector<int64_t>> units =
      ResolveIdentifiers(tx, kOrgUnits, params.org_units, "org_unit", reader);
  if (!units.ok()) return units.status();
  *root_ids = *units;
  scope->requested_org_unit_ids = *units;
  absl::StatusOr<std::vector<int64_t>> groups =
      ResolveIdentifiers(tx, kOrgUnitGroups, params.org_unit_groups, "org_unit_group", reader);
  if (!groups.ok()) return groups.status();
  pqxx::result result;
  if (params.children) {
    // Every unit whose path starts with a requested unit's path (DHIS2:
    // ou.path like '<path>%'); the paths come from the database. Groups are
    // excluded by E2007.
    result = Query(
        tx,
        "SELECT o.organisationunitid FROM organisationunit o WHERE o.path LIKE ANY("
        "SELECT replace(replace(replace(r.path, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' "
        "FROM organisationunit r WHERE r.organisationunitid = ANY($1::bigint[]))",
        {ToArrayLiteral(*units)});
  } else {
    // The units and the groups' members, each once (DHIS2's left join on
    // orgunitgroupmembers can repeat a value).
    result = Query(tx,
                   "SELECT o.organisationunitid FROM organisationunit o "
                   "WHERE o.organisationunitid = ANY($1::bigint[]) OR o.organisationunitid IN ("
                   "SELECT m.organisationunitid FROM orgunitgroupmembers m "
                   "WHERE m.orgunitgroupid = ANY($2::bigint[]))",
                   {ToArrayLiteral(*units), ToArrayLiteral(*groups)});
  }
  for (int i = 0; i < Rows(result); ++i) {
    scope->org_unit_ids.push_back(ToInt64(result, i, 0));
  }
  SortUnique(&scope->org_unit_ids);
  return LoadIdentifiers(tx, kOrgUnits, params.output.org_unit, &scope->org_unit_ids,
                         &scope->org_units);
}

// DHIS2 InputUtils.getAttributeOptionCombo: the option combo of the category
// combo whose options are exactly the given options.
// For a non-superuser "reader" the combo and the options are looked up with the metadata-read
// predicate (DHIS2: E1110 "Category combo not found or not accessible", E1111 for an option; the
// messages stay those of an unknown identifier).
absl::StatusOr<int64_t> ResolveAttributeCombo(pqxx::transaction_base& tx, const ExportScope& scope,
                                              const dhis2::ExportParams& params,
                                              const dhis2::Principal* reader) {
  dhis2::Identifiers combo{IdScheme::Uid(), {params.attribute_combo}};
  absl::StatusOr<std::vector<int64_t>> combo_id =
      ResolveIdentifiers(tx, kCategoryCombos, combo, "attribute_combo", reader);
  if (!combo_id.ok()) return combo_id.status();
  dhis2::Identifiers options{IdScheme::Uid(), params.attribute_options};
  absl::StatusOr<std::vector<int64_t>> option_ids =
      ResolveIdentifiers(tx, CategoryOptions(scope), options, "attribute_options", reader);
  if (!option_ids.ok()) return option_ids.status();
  SortUnique(&*option_ids);
  const pqxx::result result =
      Query(tx,
            "SELECT cc.categoryoptioncomboid FROM categorycombos_optioncombos cc "
            "WHERE cc.categorycomboid = $1 AND $2::bigint[] = ARRAY("
            "SELECT DISTINCT co.categoryoptionid FROM categoryoptioncombos_categoryoptions co "
            "WHERE co.categoryoptioncomboid = cc.categoryoptioncomboid ORDER BY 1) "
            "ORDER BY cc.categoryoptioncomboid LIMIT 1",
            {absl::StrCat(combo_id->front()), ToArrayLiteral(*option_ids)});
  if (Rows(result) == 0) {
    return absl::NotFoundError(
        "E2041: Attribute option combo does not exist for given category combo and category "
        "options");
  }
  return ToInt64(result, 0, 0);
}

absl::Status ResolveAttributeOptionCombos(pqxx::transaction_base& tx,
                                          const dhis2::ExportParams& params,
                                          const dhis2::Principal* reader, ExportScope* scope) {
  if (!params.attribute_option_combos.empty()) {
    // Option combos have no sharing: found whoever asks (E2011 decides later).
    absl::StatusOr<std::vector<int64_t>> ids =
        ResolveIdentifiers(tx, kCategoryOptionCombos, params.attribute_option_combos,
                           "attribute_option_combo", reader);
    if (!ids.ok()) return ids.status();
    scope->requested_attribute_option_combo_ids = *ids;
    SortUnique(&*ids);
    scope->attribute_option_combo_ids = *std::move(ids);
  } else if (!params.attribute_combo.empty()) {
    absl::StatusOr<int64_t> id = ResolveAttributeCombo(tx, *scope, params, reader);
    if (!id.ok()) return id.status();
    scope->requested_attribute_option_combo_ids = {*id};
    scope->attribute_option_combo_ids = std::vector<int64_t>{*id};
  }
  absl::Status status =
      LoadIdentifiers(tx, kCategoryOptionCombos, params.output.category_option_combo, nullptr,
                      &scope->category_option_combos);
  if (!status.ok()) return status;
  if (params.output.attribute_option_combo == params.output.category_option_combo) {
    scope->attribute_option_combos = scope->category_option_combos;
    return absl::OkStatus();
  }
  return LoadIdentifiers(tx, kCategoryOptionCombos, params.output.attribute_option_combo, nullptr,
                         &scope->attribute_option_combos);
}

// DHIS2 2.42 writes the completion date of (data set, period, org unit,
// default attribute option combo), or null if there is none.
absl::Status ResolveHeader(pqxx::transaction_base& tx, const dhis2::ExportParams& params,
                           int64_t data_set_id, int64_t org_unit_id, ExportScope* scope) {
  SingleDataValueSetHeader header;
  std::vector<int64_t> set_ids = {data_set_id};
  IdentifierMap data_set;
  absl::Status status = LoadIdentifiers(tx, kDataSets, params.output.data_set, &set_ids, &data_set);
  if (!status.ok()) return status;
  header.data_set = data_set[data_set_id];
  header.org_unit = scope->org_units[org_unit_id];
  const dhis2::Period& period = params.periods.front();
  header.period = dhis2::FormatIsoPeriod(period.type, period.start);
  const pqxx::result result =
      Query(tx,
            "SELECT (extract(epoch FROM r.date) * 1000000)::bigint "
            "FROM completedatasetregistration r "
            "JOIN period p ON p.periodid = r.periodid "
            "JOIN periodtype pt ON pt.periodtypeid = p.periodtypeid "
            "WHERE r.datasetid = $1 AND r.sourceid = $2 AND pt.name = $3 "
            "AND p.startdate = $4 AND p.enddate = $5 AND r.attributeoptioncomboid = "
            "(SELECT categoryoptioncomboid FROM categoryoptioncombo WHERE name = 'default' "
            "ORDER BY categoryoptioncomboid LIMIT 1)",
            {absl::StrCat(data_set_id), absl::StrCat(org_unit_id),
             std::string(dhis2::PeriodTypeName(period.type)), dhis2::FormatDate(period.start),
             dhis2::FormatDate(period.end)});
  if (Rows(result) > 0 && !result[0][0].is_null()) {
    header.complete_date_micros = ToInt64(result, 0, 0);
  }
  scope->header = std::move(header);
  return absl::OkStatus();
}

// The last-updated bound: last_updated itself, else now minus the duration.
std::optional<int64_t> LastUpdatedBound(const dhis2::ExportParams& params) {
  if (params.last_updated_micros) return std::max(*params.last_updated_micros, kEarliestMicros);
  if (!params.last_updated_duration_micros) return std::nullopt;
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t duration = *params.last_updated_duration_micros;
  return duration > now - kEarliestMicros ? kEarliestMicros : now - duration;
}

// For a non-superuser: leaves out the values of the attribute option combos with an option it
// cannot data-read (DHIS2 appends "and dv.attributeoptioncomboid not in (...)" to its query).
// A requested set of combos just loses them; otherwise the query gets the list as integers.
void ExcludeUnreadableCombos(pqxx::transaction_base& tx, const dhis2::Principal& reader,
                             ExportScope* scope) {
  std::vector<int64_t> excluded =
      UnreadableAttributeOptionCombos(tx, scope->category_option_table, reader);
  if (excluded.empty()) return;
  if (scope->attribute_option_combo_ids) {
    std::vector<int64_t>& ids = *scope->attribute_option_combo_ids;
    ids.erase(std::remove_if(ids.begin(), ids.end(),
                             [&](int64_t id) {
                               return std::binary_search(excluded.begin(), excluded.end(), id);
                             }),
              ids.end());
    return;
  }
  scope->excluded_attribute_option_combo_ids = std::move(excluded);
}

// The ids at positions part, part + parts, ... of "ids".
std::vector<int64_t> PartOf(const std::vector<int64_t>& ids, int part, int parts) {
  std::vector<int64_t> taken;
  taken.reserve(ids.size() / parts + 1);
  for (size_t i = static_cast<size_t>(part); i < ids.size(); i += parts) taken.push_back(ids[i]);
  return taken;
}

}  // namespace

std::string SchemeExpression(const IdScheme& scheme, int param) {
  switch (scheme.property) {
    case IdScheme::Property::kUid:
      return "o.uid";
    case IdScheme::Property::kCode:
      return "o.code";
    case IdScheme::Property::kName:
      return "o.name";
    case IdScheme::Property::kAttribute:
      return absl::StrCat("(o.attributevalues #>> ARRAY[$", param, "::text, 'value'])");
  }
  return "o.uid";
}

absl::StatusOr<ExportScope> ResolveExportScope(pqxx::transaction_base& tx,
                                               const Dhis2Schema& schema,
                                               const dhis2::ExportParams& params,
                                               const dhis2::Principal* reader) {
  if (params.dhis2 >= 43) return ResolveExportScope243(tx, schema, params, reader);
  ExportScope scope;
  scope.category_option_table = schema.category_option_table;
  scope.category_table = schema.category_table;
  scope.include_deleted = params.include_deleted;
  scope.limit = params.limit;
  scope.last_updated_min_micros = LastUpdatedBound(params);
  std::vector<int64_t> data_set_ids, root_ids;
  absl::Status status = ResolveDataElements(tx, params, reader, &scope, &data_set_ids);
  if (status.ok()) status = ResolvePeriods(tx, schema.period_iso, params, &scope);
  if (status.ok()) status = ResolveOrgUnits(tx, params, reader, &scope, &root_ids);
  if (status.ok()) status = ResolveAttributeOptionCombos(tx, params, reader, &scope);
  if (status.ok() && params.IsSingleDataValueSet()) {
    status = ResolveHeader(tx, params, data_set_ids.front(), root_ids.front(), &scope);
  }
  // DHIS2 decides access after resolving (and validating) everything.
  if (status.ok() && reader != nullptr) status = DecideDataReadAccess(tx, scope, *reader);
  if (!status.ok()) return status;
  if (reader != nullptr && !reader->superuser) ExcludeUnreadableCombos(tx, *reader, &scope);
  return scope;
}

std::string DataValueSourceSql(const ExportScope& scope) {
  return scope.changed_keys ? ChangedKeysSourceSql() : "datavalue dv";
}

std::string BuildDataValueWhereSql(const ExportScope& scope, const KeySlice* key_slice) {
  const bool sorted_here = key_slice != nullptr && key_slice->sort_here;
  const auto slice_on = [&](const char* column) {
    return sorted_here && std::string_view(key_slice->column) == column;
  };
  const std::vector<int64_t>& data_elements =
      slice_on(kDataElementColumn) ? key_slice->ids : scope.data_element_ids;
  std::string sql =
      absl::StrCat("dv.dataelementid = ANY('",
                   ToArrayLiteral(sorted_here && key_slice->parts > 1
                                      ? PartOf(data_elements, key_slice->part, key_slice->parts)
                                      : data_elements),
                   "'::bigint[])");
  if (slice_on(kPeriodColumn)) {
    absl::StrAppend(&sql, " AND dv.periodid = ANY('", ToArrayLiteral(key_slice->ids),
                    "'::bigint[])");
  } else if (scope.filter_periods) {
    absl::StrAppend(&sql, " AND dv.periodid = ANY('", ToArrayLiteral(scope.period_ids),
                    "'::bigint[])");
  }
  // A slice sorted here is read by the primary key's first two columns: with many org units,
  // "+ 0" keeps the third out of the index condition (one index descent per data element, period
  // and org unit would cost more than the filter, which PostgreSQL hashes).
  absl::StrAppend(&sql,
                  sorted_here && scope.org_unit_ids.size() > kOrgUnitsInIndexCondition
                      ? " AND dv.sourceid + 0 = ANY('"
                      : " AND dv.sourceid = ANY('",
                  ToArrayLiteral(scope.org_unit_ids), "'::bigint[])");
  if (scope.attribute_option_combo_ids) {
    absl::StrAppend(&sql, " AND dv.attributeoptioncomboid = ANY('",
                    ToArrayLiteral(*scope.attribute_option_combo_ids), "'::bigint[])");
  }
  if (scope.category_option_combo_ids) {
    absl::StrAppend(&sql, " AND dv.categoryoptioncomboid = ANY('",
                    ToArrayLiteral(*scope.category_option_combo_ids), "'::bigint[])");
  }
  if (!scope.excluded_attribute_option_combo_ids.empty()) {
    // A filter on each row, hashed by PostgreSQL 15+ for nine or more combos.
    absl::StrAppend(&sql, " AND dv.attributeoptioncomboid <> ALL('",
                    ToArrayLiteral(scope.excluded_attribute_option_combo_ids), "'::bigint[])");
  }
  if (scope.changed_keys) {
    // Every changed key is sent, deleted or not: a copy must learn of the deletion.
  } else if (scope.changes_only) {
    // A row version is new since the token's snapshot when its xmin (the transaction that wrote
    // it) is at or above the snapshot's xmin: age() counts back from this transaction's
    // reference xid modulo 2^32, so both sides are in the same 32-bit window (ReadSession
    // refuses tokens more than 2^31 - 2^27 transactions old). age() is 2^31 - 1 for frozen
    // permanent xids (always old); a row frozen more than 2^31 transactions ago can alias to
    // a negative or a small age and be sent again: a duplicate, never a miss. Deleted values
    // are always sent: a copy must learn of the deletion.
    absl::StrAppend(&sql, " AND age(dv.xmin) BETWEEN 0 AND (SELECT age(current_setting('",
                    kChangesSinceSetting, "')::xid))");
  } else if (!scope.include_deleted) {
    sql += " AND dv.deleted IS FALSE";
  }
  if (scope.last_updated_min_micros) {
    // Whole seconds and the rest, both integers of ours; the sum folds to a
    // constant, so in_datavalue_lastupdated stays usable.
    const int64_t micros = *scope.last_updated_min_micros;
    int64_t seconds = micros / 1000000;
    int64_t rest = micros % 1000000;
    if (rest < 0) {
      rest += 1000000;
      seconds -= 1;
    }
    absl::StrAppend(&sql, " AND dv.lastupdated >= (TIMESTAMP '1970-01-01' + (", seconds,
                    ") * INTERVAL '1 second' + ", rest, " * INTERVAL '1 microsecond')");
  }
  return sql;
}

std::string BuildDataValueSelectSql(const ExportScope& scope,
                                    const std::optional<BlockRange>& blocks,
                                    const KeySlice* key_slice) {
  const bool sorted_here = key_slice != nullptr && key_slice->sort_here;
  std::string sql = absl::StrCat(
      "SELECT dv.dataelementid, dv.periodid, dv.sourceid, dv.categoryoptioncomboid, "
      "dv.attributeoptioncomboid, dv.value, dv.storedby, dv.created, "
      "CASE WHEN dv.lastupdated = dv.created THEN '' ELSE dv.lastupdated::text END, "
      "dv.comment, dv.followup, dv.deleted FROM ",
      DataValueSourceSql(scope), sorted_here ? "" : OrderJoinsSql(scope.order), " WHERE ",
      BuildDataValueWhereSql(scope, key_slice));
  if (sorted_here) return sql;
  if (blocks) {
    // PostgreSQL 14+ reads such a slice with a TID Range Scan, only its own blocks.
    if (blocks->first_block > 0) {
      absl::StrAppend(&sql, " AND dv.ctid >= '(", blocks->first_block, ",0)'::tid");
    }
    if (blocks->end_block) {
      absl::StrAppend(&sql, " AND dv.ctid < '(", *blocks->end_block, ",0)'::tid");
    }
  }
  // -1: no limit.
  int64_t limit = scope.limit.has_value() ? int64_t{*scope.limit} : -1;
  int64_t offset = scope.offset.value_or(0);
  if (key_slice != nullptr) {
    if (key_slice->column != nullptr) {
      absl::StrAppend(&sql, " AND ", key_slice->column, " = ANY('", ToArrayLiteral(key_slice->ids),
                      "'::bigint[])");
    }
    limit = key_slice->limit.value_or(-1);
    offset = key_slice->offset;
  }
  absl::StrAppend(&sql, OrderBySql(scope.order));
  if (limit >= 0) absl::StrAppend(&sql, " LIMIT ", limit);
  if (offset > 0) absl::StrAppend(&sql, " OFFSET ", offset);
  return sql;
}

}  // namespace dvexport::db
