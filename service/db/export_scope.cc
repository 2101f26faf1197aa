#include "service/db/export_scope.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/period.h"

namespace dvexport::db {
namespace {

int64_t ToInt64(const PGresult* r, int row, int col) {
  return std::strtoll(PQgetvalue(r, row, col), nullptr, 10);
}

std::string ToString(const PGresult* r, int row, int col) {
  return std::string(PQgetvalue(r, row, col), PQgetlength(r, row, col));
}

void SortUnique(std::vector<int64_t>* ids) {
  std::sort(ids->begin(), ids->end());
  ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
}

// Looks up UIDs in "table" and returns uid -> internal id; NotFound names
// the first UID (in request order) that does not exist.
absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ResolveUids(
    PgConnection& conn, const std::vector<std::string>& uids, const char* table,
    const char* id_column, const char* field) {
  absl::flat_hash_map<std::string, int64_t> found;
  if (uids.empty()) return found;
  // Table and column names are constants of this file, never caller input.
  std::string sql = absl::StrCat("SELECT uid, ", id_column, " FROM ", table,
                                 " WHERE uid = ANY($1::text[])");
  absl::StatusOr<PgResult> result = conn.Query(sql, {ToTextArrayLiteral(uids)});
  if (!result.ok()) return result.status();
  for (int i = 0; i < PQntuples(result->get()); ++i) {
    found.emplace(ToString(result->get(), i, 0), ToInt64(result->get(), i, 1));
  }
  for (const std::string& uid : uids) {
    if (!found.contains(uid)) {
      return absl::NotFoundError(absl::StrCat(field, ": \"", uid, "\" does not exist"));
    }
  }
  return found;
}

// Fills scope->periods and scope->period_ids from rows of
// (periodid, periodtype name, start date as days since 1970-01-01).
absl::Status AddPeriods(const PGresult* r, ExportScope* scope) {
  for (int i = 0; i < PQntuples(r); ++i) {
    int64_t id = ToInt64(r, i, 0);
    std::string type_name = ToString(r, i, 1);
    std::optional<dhis2::PeriodType> type = dhis2::PeriodTypeFromName(type_name);
    if (!type) {
      return absl::FailedPreconditionError(
          absl::StrCat("period ", id, " has period type \"", type_name,
                       "\", which has no ISO identifier in DHIS2 2.42"));
    }
    std::chrono::sys_days start{std::chrono::days{ToInt64(r, i, 2)}};
    scope->periods.emplace(id, dhis2::FormatIsoPeriod(*type, start));
    scope->period_ids.push_back(id);
  }
  SortUnique(&scope->period_ids);
  return absl::OkStatus();
}

constexpr char kPeriodColumns[] =
    "SELECT p.periodid, pt.name, (p.startdate - DATE '1970-01-01') "
    "FROM period p JOIN periodtype pt ON pt.periodtypeid = p.periodtypeid ";

absl::Status ResolvePeriods(PgConnection& conn, const dhis2::ExportParams& params,
                            ExportScope* scope) {
  if (params.start_date && params.end_date) {
    absl::StatusOr<PgResult> result =
        conn.Query(absl::StrCat(kPeriodColumns, "WHERE p.startdate >= $1 AND p.enddate <= $2"),
                   {dhis2::FormatDate(*params.start_date), dhis2::FormatDate(*params.end_date)});
    if (!result.ok()) return result.status();
    return AddPeriods(result->get(), scope);
  }
  std::vector<std::string> names, starts, ends;
  for (const dhis2::Period& p : params.periods) {
    names.emplace_back(dhis2::PeriodTypeName(p.type));
    starts.push_back(dhis2::FormatDate(p.start));
    ends.push_back(dhis2::FormatDate(p.end));
  }
  // A valid period that is not in the period table has no data: it matches
  // nothing (DHIS2 would insert it; we never write).
  absl::StatusOr<PgResult> result = conn.Query(
      absl::StrCat(kPeriodColumns,
                   "JOIN unnest($1::text[], $2::date[], $3::date[]) AS q(name, s, e) "
                   "ON pt.name = q.name AND p.startdate = q.s AND p.enddate = q.e"),
      {ToTextArrayLiteral(names), ToTextArrayLiteral(starts), ToTextArrayLiteral(ends)});
  if (!result.ok()) return result.status();
  return AddPeriods(result->get(), scope);
}

absl::Status ResolveDataElements(PgConnection& conn, const dhis2::ExportParams& params,
                                 ExportScope* scope,
                                 absl::flat_hash_map<std::string, int64_t>* data_sets) {
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> sets =
      ResolveUids(conn, params.data_sets, "dataset", "datasetid", "data_set");
  if (!sets.ok()) return sets.status();
  *data_sets = *sets;
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> elements =
      ResolveUids(conn, params.data_elements, "dataelement", "dataelementid", "data_element");
  if (!elements.ok()) return elements.status();

  std::vector<int64_t> set_ids;
  for (const auto& [uid, id] : *sets) set_ids.push_back(id);
  for (const auto& [uid, id] : *elements) scope->data_element_ids.push_back(id);
  absl::StatusOr<PgResult> result = conn.Query(
      "SELECT de.dataelementid, de.uid FROM dataelement de WHERE de.dataelementid = ANY($1::bigint[]) "
      "OR de.dataelementid IN (SELECT dse.dataelementid FROM datasetelement dse "
      "WHERE dse.datasetid = ANY($2::bigint[]))",
      {ToArrayLiteral(scope->data_element_ids), ToArrayLiteral(set_ids)});
  if (!result.ok()) return result.status();
  scope->data_element_ids.clear();
  for (int i = 0; i < PQntuples(result->get()); ++i) {
    int64_t id = ToInt64(result->get(), i, 0);
    scope->data_element_ids.push_back(id);
    scope->data_elements.emplace(id, ToString(result->get(), i, 1));
  }
  SortUnique(&scope->data_element_ids);
  return absl::OkStatus();
}

absl::Status ResolveOrgUnits(PgConnection& conn, const dhis2::ExportParams& params,
                             ExportScope* scope, absl::flat_hash_map<std::string, int64_t>* roots) {
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> units =
      ResolveUids(conn, params.org_units, "organisationunit", "organisationunitid", "org_unit");
  if (!units.ok()) return units.status();
  *roots = *units;
  std::vector<int64_t> ids;
  for (const auto& [uid, id] : *units) ids.push_back(id);
  // With children, every unit whose path starts with a requested unit's path
  // (DHIS2: ou.path like '<path>%'); the paths come from the database.
  std::string sql =
      params.children
          ? "SELECT o.organisationunitid, o.uid FROM organisationunit o WHERE o.path LIKE ANY("
            "SELECT replace(replace(replace(r.path, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%' "
            "FROM organisationunit r WHERE r.organisationunitid = ANY($1::bigint[]))"
          : "SELECT o.organisationunitid, o.uid FROM organisationunit o "
            "WHERE o.organisationunitid = ANY($1::bigint[])";
  absl::StatusOr<PgResult> result = conn.Query(sql, {ToArrayLiteral(ids)});
  if (!result.ok()) return result.status();
  for (int i = 0; i < PQntuples(result->get()); ++i) {
    int64_t id = ToInt64(result->get(), i, 0);
    scope->org_unit_ids.push_back(id);
    scope->org_units.emplace(id, ToString(result->get(), i, 1));
  }
  SortUnique(&scope->org_unit_ids);
  return absl::OkStatus();
}

absl::Status ResolveCategoryOptionCombos(PgConnection& conn, ExportScope* scope) {
  absl::StatusOr<PgResult> result =
      conn.Query("SELECT categoryoptioncomboid, uid FROM categoryoptioncombo");
  if (!result.ok()) return result.status();
  scope->category_option_combos.reserve(PQntuples(result->get()));
  for (int i = 0; i < PQntuples(result->get()); ++i) {
    scope->category_option_combos.emplace(ToInt64(result->get(), i, 0),
                                          ToString(result->get(), i, 1));
  }
  return absl::OkStatus();
}

// DHIS2 2.42 writes the completion date of (data set, period, org unit,
// default attribute option combo), or null if there is none.
absl::Status ResolveHeader(PgConnection& conn, const dhis2::ExportParams& params,
                           int64_t data_set_id, int64_t org_unit_id, ExportScope* scope) {
  SingleDataValueSetHeader header;
  header.data_set = params.data_sets.front();
  header.org_unit = params.org_units.front();
  const dhis2::Period& period = params.periods.front();
  header.period = dhis2::FormatIsoPeriod(period.type, period.start);
  absl::StatusOr<PgResult> result = conn.Query(
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
  if (!result.ok()) return result.status();
  if (PQntuples(result->get()) > 0 && !PQgetisnull(result->get(), 0, 0)) {
    header.complete_date_micros = ToInt64(result->get(), 0, 0);
  }
  scope->header = std::move(header);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExportScope> ResolveExportScope(PgConnection& conn,
                                               const dhis2::ExportParams& params) {
  ExportScope scope;
  scope.include_deleted = params.include_deleted;
  scope.limit = params.limit;
  absl::flat_hash_map<std::string, int64_t> data_sets, roots;
  absl::Status status = ResolveDataElements(conn, params, &scope, &data_sets);
  if (status.ok()) status = ResolvePeriods(conn, params, &scope);
  if (status.ok()) status = ResolveOrgUnits(conn, params, &scope, &roots);
  if (status.ok()) status = ResolveCategoryOptionCombos(conn, &scope);
  if (status.ok() && params.IsSingleDataValueSet()) {
    status = ResolveHeader(conn, params, data_sets.at(params.data_sets.front()),
                           roots.at(params.org_units.front()), &scope);
  }
  if (!status.ok()) return status;
  return scope;
}

std::string BuildDataValueWhereSql(const ExportScope& scope) {
  std::string sql = absl::StrCat(
      "dv.dataelementid = ANY('", ToArrayLiteral(scope.data_element_ids),
      "'::bigint[]) AND dv.periodid = ANY('", ToArrayLiteral(scope.period_ids),
      "'::bigint[]) AND dv.sourceid = ANY('", ToArrayLiteral(scope.org_unit_ids), "'::bigint[])");
  if (!scope.include_deleted) sql += " AND dv.deleted IS FALSE";
  return sql;
}

std::string BuildDataValueCopySql(const ExportScope& scope) {
  std::string sql = absl::StrCat(
      "COPY (SELECT dv.dataelementid, dv.periodid, dv.sourceid, dv.categoryoptioncomboid, "
      "dv.attributeoptioncomboid, dv.value, dv.storedby, dv.created, dv.lastupdated, "
      "dv.comment, dv.followup, dv.deleted FROM datavalue dv WHERE ",
      BuildDataValueWhereSql(scope));
  if (scope.limit) absl::StrAppend(&sql, " LIMIT ", *scope.limit);
  sql += ") TO STDOUT (FORMAT binary)";
  return sql;
}

}  // namespace dvexport::db
