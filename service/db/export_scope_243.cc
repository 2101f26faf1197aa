// DHIS2 2.43's export scope: HibernateDataExportStore.createExportQuery and
// DefaultDataExportService's decoding, checks and group header, resolved into integer ids.

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/db/access_rules.h"
#include "service/db/array_literal.h"
#include "service/db/export_scope.h"
#include "service/db/export_scope_internal.h"
#include "service/db/shared_ids_243.h"
#include "service/dhis2/adx.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_error.h"
#include "service/dhis2/period.h"
#include "service/dhis2/uid.h"

namespace dvexport::db {
namespace {

using dhis2::IdScheme;
using namespace scope_internal;  // NOLINT: the scope's shared helpers

std::string SchemeName(const IdScheme& scheme);
// IdProperty.name() as 2.43's E8200-E8203 messages print it: UID, CODE, NAME, ATTR.
std::string MessageSchemeName(const IdScheme& scheme) {
  return scheme.property == IdScheme::Property::kAttribute ? "ATTR" : SchemeName(scheme);
}
std::string UidList(const pqxx::result& result);

// 0001-01-01T00:00:00 in microseconds since 1970.
constexpr int64_t kEarliestMicros = -62135596800LL * 1000000;
constexpr int64_t kDayMicros = int64_t{86400} * 1000000;

// What 2.43's decodeIds made of one request field: the UIDs it passes on to the query (unknown
// ones included) and the internal ids of the objects those name.
struct Decoded {
  std::vector<std::string> uids;
  std::vector<int64_t> ids;  // sorted, unique
};

// DefaultDataExportService.decodeIds, then the query's "<table>.uid = ANY(:uids)": under UID
// every value is passed on as it is; with the code fallback the values that are UIDs, then the
// UIDs of the objects whose code is one of the values (a value can count twice, as in DHIS2);
// under CODE, NAME or ATTRIBUTE the UIDs of every object that has one of the values.
Decoded Decode(pqxx::transaction_base& tx, const ObjectTable& table,
               const dhis2::Identifiers& ids) {
  Decoded decoded;
  if (ids.empty()) return decoded;
  const bool by_uid = ids.scheme.property == IdScheme::Property::kUid;
  std::vector<std::string> uids;
  if (by_uid) {
    for (const std::string& value : ids.values) {
      if (!ids.code_fallback || dhis2::IsValidUid(value)) uids.push_back(value);
    }
  }
  decoded.uids = uids;
  // All UIDs: nothing is looked up by code.
  const bool by_code = !by_uid || (ids.code_fallback && uids.size() < ids.values.size());
  Params params = {PgTextArray(uids)};
  std::string sql = absl::StrCat("SELECT o.", table.id_column, ", o.uid, o.uid = ANY($1::text[])",
                                 " FROM ", table.table, " o WHERE o.uid = ANY($1::text[])");
  if (by_code) {
    params.push_back(PgTextArray(ids.values));
    if (ids.scheme.property == IdScheme::Property::kAttribute) {
      params.push_back(ids.scheme.attribute);
    }
    const IdScheme scheme = by_uid ? IdScheme{IdScheme::Property::kCode, ""} : ids.scheme;
    absl::StrAppend(&sql, " OR ", SchemeExpression(scheme, 3), " = ANY($2::text[])");
  }
  const pqxx::result result = Query(tx, sql, params);
  for (int i = 0; i < Rows(result); ++i) {
    decoded.ids.push_back(ToInt64(result, i, 0));
    // An object found by its code (or name, or attribute) adds its UID.
    if (by_code && !(by_uid && result[i][2].as<bool>())) {
      decoded.uids.push_back(ToString(result, i, 1));
    }
  }
  SortUnique(&decoded.ids);
  return decoded;
}

// The internal ids of "uids" in "table" (unknown ones dropped), sorted and unique.
std::vector<int64_t> IdsOfUids(pqxx::transaction_base& tx, const ObjectTable& table,
                               const std::vector<std::string>& uids) {
  std::vector<int64_t> ids;
  if (uids.empty()) return ids;
  const pqxx::result result =
      Query(tx,
            absl::StrCat("SELECT o.", table.id_column, " FROM ", table.table, " o ",
                         "WHERE o.uid = ANY($1::text[])"),
            {PgTextArray(uids)});
  for (int i = 0; i < Rows(result); ++i) ids.push_back(ToInt64(result, i, 0));
  SortUnique(&ids);
  return ids;
}

// The request's fields decoded, in DHIS2's order.
struct DecodedRequest {
  Decoded attribute_option_combos, data_sets, data_element_groups, data_elements, org_units,
      org_unit_groups, category_option_combos;
};

// 2.43's getAttributeOptionCombo: the first option combo (any: no order) of the attribute combo
// (the combo named "default" without one) that has all the options; none: no filter.
std::vector<std::string> AttributeComboOptionCombo(pqxx::transaction_base& tx,
                                                   const ExportScope& scope,
                                                   const dhis2::ExportParams& params) {
  const std::string combo_condition =
      params.attribute_combo.empty() ? "cc.name = 'default'" : "cc.uid = $2";
  Params query_params = {PgTextArray(params.attribute_options)};
  if (!params.attribute_combo.empty()) query_params.push_back(params.attribute_combo);
  const pqxx::result result =
      Query(tx,
            absl::StrCat("SELECT coc.uid FROM categoryoptioncombo coc "
                         "JOIN categorycombos_optioncombos c_coc "
                         "ON c_coc.categoryoptioncomboid = coc.categoryoptioncomboid "
                         "JOIN categorycombo cc ON cc.categorycomboid = c_coc.categorycomboid "
                         "JOIN categoryoptioncombos_categoryoptions coc_co "
                         "ON coc_co.categoryoptioncomboid = coc.categoryoptioncomboid "
                         "JOIN ",
                         scope.category_option_table,
                         " co ON co.categoryoptionid = coc_co.categoryoptionid "
                         "WHERE ",
                         combo_condition,
                         " AND co.uid = ANY($1::text[]) GROUP BY coc.uid "
                         "HAVING count(DISTINCT co.uid) = cardinality($1::text[]) LIMIT 1"),
            query_params);
  if (Rows(result) == 0) return {};
  return {ToString(result, 0, 0)};
}

DecodedRequest DecodeRequest(pqxx::transaction_base& tx, const ExportScope& scope,
                             const dhis2::ExportParams& params) {
  DecodedRequest d;
  d.attribute_option_combos = Decode(tx, kCategoryOptionCombos, params.attribute_option_combos);
  if (d.attribute_option_combos.uids.empty() && !params.attribute_options.empty()) {
    d.attribute_option_combos.uids = AttributeComboOptionCombo(tx, scope, params);
    d.attribute_option_combos.ids =
        IdsOfUids(tx, kCategoryOptionCombos, d.attribute_option_combos.uids);
  }
  d.data_sets = Decode(tx, kDataSets, params.data_sets);
  d.data_element_groups = Decode(tx, kDataElementGroups, params.data_element_groups);
  d.data_elements = Decode(tx, kDataElements, params.data_elements);
  d.org_units = Decode(tx, kOrgUnits, params.org_units);
  // DHIS2 2.43.1 names this table "organisationunitgroup", which does not exist, so that a
  // group by code fails there; dvexport reads the table DHIS2 meant.
  d.org_unit_groups = Decode(tx, kOrgUnitGroups, params.org_unit_groups);
  d.category_option_combos = Decode(tx, kCategoryOptionCombos, params.category_option_combos);
  return d;
}

// E2001 and E2006 as 2.43 checks them, on the decoded request (a code that names nothing is
// gone by then); the other rules were checked on the request.
absl::Status CheckDecoded(const DecodedRequest& d, const dhis2::ExportParams& params) {
  if (d.data_sets.uids.empty() && d.data_elements.uids.empty() &&
      d.data_element_groups.uids.empty()) {
    return dhis2::ExportErrorStatus(dhis2::ExportError::kE2001);
  }
  const bool period_filters =
      !params.periods.empty() || (params.start_date.has_value() && params.end_date.has_value());
  if (!period_filters && !params.last_updated_micros &&
      !params.last_updated_duration_micros.has_value()) {
    return dhis2::ExportErrorStatus(dhis2::ExportError::kE2002);
  }
  if (d.org_units.uids.empty() && d.org_unit_groups.uids.empty()) {
    return dhis2::ExportErrorStatus(dhis2::ExportError::kE2006);
  }
  return absl::OkStatus();
}

// de_ids: the union of the data elements, the data sets' members and the groups' members.
void ResolveDataElements(pqxx::transaction_base& tx, const DecodedRequest& d, ExportScope* scope) {
  const pqxx::result result =
      Query(tx,
            "SELECT dataelementid FROM dataelement WHERE dataelementid = ANY($1::bigint[]) "
            "UNION SELECT dataelementid FROM datasetelement WHERE datasetid = ANY($2::bigint[]) "
            "UNION SELECT dataelementid FROM dataelementgroupmembers "
            "WHERE dataelementgroupid = ANY($3::bigint[])",
            {ToArrayLiteral(d.data_elements.ids), ToArrayLiteral(d.data_sets.ids),
             ToArrayLiteral(d.data_element_groups.ids)});
  for (int i = 0; i < Rows(result); ++i) scope->data_element_ids.push_back(ToInt64(result, i, 0));
  SortUnique(&scope->data_element_ids);
  scope->data_set_ids = d.data_sets.ids;
}

// pe_ids, joined only when the request has period filters (periods, or both dates): the
// periods with one of the ISO ids, starting on or after the start date, ending on or before the
// end date, each condition only when given. The ISO ids as period.iso holds them.
void ResolvePeriods(pqxx::transaction_base& tx, const dhis2::ExportParams& params,
                    ExportScope* scope) {
  scope->filter_periods =
      !params.periods.empty() || (params.start_date.has_value() && params.end_date.has_value());
  std::vector<std::string> isos;
  for (const dhis2::Period& p : params.periods) {
    isos.push_back(dhis2::FormatIsoPeriod(p.type, p.start));
  }
  std::string sql = "SELECT p.periodid, p.iso::text FROM period p";
  Params query_params;
  if (scope->filter_periods) {
    sql +=
        " WHERE (cardinality($1::text[]) = 0 OR p.iso = ANY($1::text[])) "
        "AND (NULLIF($2, '')::date IS NULL OR p.startdate >= NULLIF($2, '')::date) "
        "AND (NULLIF($3, '')::date IS NULL OR p.enddate <= NULLIF($3, '')::date)";
    query_params = {PgTextArray(isos),
                    params.start_date ? dhis2::FormatDate(*params.start_date) : "",
                    params.end_date ? dhis2::FormatDate(*params.end_date) : ""};
  }
  const pqxx::result result = Query(tx, sql, query_params);
  for (int i = 0; i < Rows(result); ++i) {
    const int64_t id = ToInt64(result, i, 0);
    scope->periods.emplace(id, ToString(result, i, 1));
    if (scope->filter_periods) scope->period_ids.push_back(id);
  }
  SortUnique(&scope->period_ids);
}

// ou_ids (the org units and the groups' members; for a non-superuser only the members that are
// its capture units), or ou_with_descendants_ids with children; then the level.
void ResolveOrgUnits(pqxx::transaction_base& tx, const DecodedRequest& d,
                     const dhis2::ExportParams& params, const dhis2::Principal* reader,
                     ExportScope* scope) {
  const bool limited = reader != nullptr && !reader->superuser;
  std::string sql = absl::StrCat(
      "WITH ou_ids AS (SELECT organisationunitid FROM organisationunit "
      "WHERE organisationunitid = ANY($1::bigint[]) "
      "UNION SELECT m.organisationunitid FROM orgunitgroupmembers m "
      "WHERE m.orgunitgroupid = ANY($2::bigint[])",
      limited ? " AND m.organisationunitid IN (SELECT organisationunitid FROM usermembership "
                "WHERE userinfoid = $3::bigint)"
              : " AND $3 = ''",
      ") ");
  if (params.children) {
    sql +=
        "SELECT DISTINCT o.organisationunitid FROM ou_ids "
        "JOIN organisationunit root USING (organisationunitid) "
        "JOIN organisationunit o ON o.path LIKE root.path || '%'";
  } else {
    sql +=
        "SELECT o.organisationunitid FROM ou_ids JOIN organisationunit o USING "
        "(organisationunitid)";
  }
  sql += " WHERE (NULLIF($4, '')::int IS NULL OR o.hierarchylevel = NULLIF($4, '')::int)";
  const pqxx::result result =
      Query(tx, sql,
            {ToArrayLiteral(d.org_units.ids), ToArrayLiteral(d.org_unit_groups.ids),
             limited ? absl::StrCat(reader->user_id) : "",
             params.level ? absl::StrCat(*params.level) : ""});
  for (int i = 0; i < Rows(result); ++i) scope->org_unit_ids.push_back(ToInt64(result, i, 0));
  SortUnique(&scope->org_unit_ids);
  scope->requested_org_unit_ids = d.org_units.ids;
}

// The category and attribute option combo filters, and every option combo's output ids; the
// default combo's id left out (null) where excludeDefaultCoc / excludeDefaultAoc say so.
absl::Status ResolveOptionCombos(pqxx::transaction_base& tx, const DecodedRequest& d,
                                 const dhis2::ExportParams& params, ExportScope* scope) {
  if (!d.category_option_combos.uids.empty()) {
    scope->category_option_combo_ids = d.category_option_combos.ids;
  }
  if (!d.attribute_option_combos.uids.empty()) {
    scope->attribute_option_combo_ids = d.attribute_option_combos.ids;
  }
  absl::Status status =
      LoadIdentifiers(tx, kCategoryOptionCombos, params.output.category_option_combo, nullptr,
                      &scope->category_option_combos);
  if (!status.ok()) return status;
  if (params.output.attribute_option_combo == params.output.category_option_combo) {
    scope->attribute_option_combos = scope->category_option_combos;
  } else {
    status = LoadIdentifiers(tx, kCategoryOptionCombos, params.output.attribute_option_combo,
                             nullptr, &scope->attribute_option_combos);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// excludeDefaultCoc / excludeDefaultAoc: the default combo's id left out of the values.
void ExcludeDefaultCombos(pqxx::transaction_base& tx, const dhis2::ExportParams& params,
                          ExportScope* scope) {
  if (!params.exclude_default_coc && !params.exclude_default_aoc) return;
  for (const int64_t id :
       IdsOfUids(tx, kCategoryOptionCombos, {dhis2::kDefaultCategoryOptionComboUid})) {
    if (params.exclude_default_coc) scope->category_option_combos[id] = std::nullopt;
    if (params.exclude_default_aoc) scope->attribute_option_combos[id] = std::nullopt;
  }
}

// DefaultDataExportService.encodeGroup's check of a non-UID output scheme: the objects of
// "column" in the export that have no id in it (nullopt in "ids") make the export a 409
// before its first byte, listing their UIDs ("code" E8201 data elements, E8202 org units, E8203
// option combos). Reads only when such an object exists, then one scan of the export's rows
// for them (the page's, as encodeGroup checks the values it read).
absl::Status CheckEncodable(pqxx::transaction_base& tx, const ExportScope& scope,
                            const IdentifierMap& ids, const IdScheme& scheme, const char* column,
                            const char* code, const char* noun) {
  if (scheme.property == IdScheme::Property::kUid || scope.MatchesNothing()) {
    return absl::OkStatus();
  }
  std::vector<int64_t> missing;
  for (const auto& [id, text] : ids) {
    if (!text.has_value()) missing.push_back(id);
  }
  if (missing.empty()) return absl::OkStatus();
  SortUnique(&missing);
  const ObjectTable& table = std::string_view(column) == "dataelementid" ? kDataElements
                             : std::string_view(column) == "sourceid"    ? kOrgUnits
                                                                         : kCategoryOptionCombos;
  // The values encodeGroup encodes: the page's, when a limit or offset cuts the export.
  const pqxx::result result =
      Query(tx, absl::StrCat("SELECT o.uid FROM ", table.table, " o WHERE o.", table.id_column,
                             " IN (SELECT x.", column, " FROM (", ExportedIdsSql(scope, column),
                             ") x WHERE x.", column, " = ANY('", ToArrayLiteral(missing),
                             "'::bigint[])) ORDER BY o.uid"));
  if (Rows(result) == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      code, ": Export as ", MessageSchemeName(scheme),
      " not possible as the property is undefined for ", noun, ": `", UidList(result), "`"));
}

// E8201, E8202 and E8203 in 2.43's order, before excludeDefaultCoc/Aoc leave ids out.
absl::Status CheckEncodableIds(pqxx::transaction_base& tx, const ExportScope& scope,
                               const dhis2::OutputIdSchemes& out) {
  absl::Status status = CheckEncodable(tx, scope, scope.data_elements, out.data_element,
                                       "dataelementid", "E8201", "data element(s)");
  if (status.ok()) {
    status = CheckEncodable(tx, scope, scope.org_units, out.org_unit, "sourceid", "E8202",
                            "org unit(s)");
  }
  if (status.ok()) {
    status = CheckEncodable(tx, scope, scope.category_option_combos, out.category_option_combo,
                            "categoryoptioncomboid", "E8203", "category option combo(s)");
  }
  if (status.ok()) {
    status = CheckEncodable(tx, scope, scope.attribute_option_combos, out.attribute_option_combo,
                            "attributeoptioncomboid", "E8203", "category option combo(s)");
  }
  return status;
}

// The output id of the object "uid" names in "scheme": the UID itself under UID (whether or not
// it exists, as DHIS2 writes what it decoded), else its property, nullopt when it has none.
std::optional<std::string> OutputId(pqxx::transaction_base& tx, const ObjectTable& table,
                                    const IdScheme& scheme, const std::string& uid) {
  if (scheme.property == IdScheme::Property::kUid) return uid;
  Params params = {uid};
  if (scheme.property == IdScheme::Property::kAttribute) params.push_back(scheme.attribute);
  const pqxx::result result = Query(tx,
                                    absl::StrCat("SELECT ", SchemeExpression(scheme, 2), " FROM ",
                                                 table.table, " o WHERE o.uid = $1"),
                                    params);
  if (Rows(result) == 0 || result[0][0].is_null()) return std::nullopt;
  return ToString(result, 0, 0);
}

// 2.43's id scheme names: CODE, NAME, ATTRIBUTE:<uid> (IdProperty.toString).
std::string SchemeName(const IdScheme& scheme) {
  switch (scheme.property) {
    case IdScheme::Property::kUid:
      return "UID";
    case IdScheme::Property::kCode:
      return "CODE";
    case IdScheme::Property::kName:
      return "NAME";
    case IdScheme::Property::kAttribute:
      return absl::StrCat("ATTRIBUTE:", scheme.attribute);
  }
  return "UID";
}

// DataExportGroup's members: the data set when exactly one was decoded (E8200 when it has no id
// in the data set scheme), the period when exactly one was given, the org unit when exactly one
// was decoded without children or groups, the attribute option combo when exactly one was
// decoded or resolved (unless excludeDefaultAoc leaves the default out), and the schemes.
absl::Status ResolveGroupHeader(pqxx::transaction_base& tx, const DecodedRequest& d,
                                const dhis2::ExportParams& params, ExportScope* scope) {
  GroupHeader header;
  const dhis2::OutputIdSchemes& out = params.output;
  if (d.data_sets.uids.size() == 1) {
    header.data_set = OutputId(tx, kDataSets, out.data_set, d.data_sets.uids.front());
    if (!header.data_set) {
      return absl::FailedPreconditionError(
          absl::StrCat("E8200: Export as ", MessageSchemeName(out.data_set),
                       " not possible as the property is undefined for data set: `",
                       d.data_sets.uids.front(), "`"));
    }
  }
  if (params.period_texts == 1 && params.periods.size() == 1) {
    const dhis2::Period& period = params.periods.front();
    header.period = dhis2::FormatIsoPeriod(period.type, period.start);
    const std::optional<std::string_view> duration =
        dhis2::AdxPeriodDuration(dhis2::PeriodTypeName(period.type));
    header.period_adx =
        absl::StrCat(dhis2::FormatDate(period.start), "/", std::string(duration.value_or("")));
  }
  if (d.org_units.uids.size() == 1 && !params.children && d.org_unit_groups.uids.empty()) {
    header.org_unit = OutputId(tx, kOrgUnits, out.org_unit, d.org_units.uids.front());
  }
  if (d.attribute_option_combos.uids.size() == 1 &&
      !(params.exclude_default_aoc &&
        d.attribute_option_combos.uids.front() == dhis2::kDefaultCategoryOptionComboUid)) {
    header.attribute_option_combo = OutputId(tx, kCategoryOptionCombos, out.attribute_option_combo,
                                             d.attribute_option_combos.uids.front());
  }
  const std::pair<const char*, const IdScheme*> schemes[] = {
      {"dataSetIdScheme", &out.data_set},
      {"dataElementIdScheme", &out.data_element},
      {"orgUnitIdScheme", &out.org_unit},
      {"categoryOptionComboIdScheme", &out.category_option_combo},
      {"attributeOptionComboIdScheme", &out.attribute_option_combo},
      {"categoryIdScheme", &out.category},
      {"categoryOptionIdScheme", &out.category_option},
  };
  for (const auto& [name, scheme] : schemes) {
    if (scheme->property != IdScheme::Property::kUid) {
      header.id_schemes.emplace_back(name, SchemeName(*scheme));
    }
  }
  scope->group_header = std::move(header);
  return absl::OkStatus();
}

// The UIDs a query of "sql" returns, as Java's List.toString writes them: "[a, b]".
std::string UidList(const pqxx::result& result) {
  std::vector<std::string> uids;
  for (int i = 0; i < Rows(result); ++i) uids.push_back(ToString(result, i, 0));
  return absl::StrCat("[", absl::StrJoin(uids, ", "), "]");
}

// DefaultDataExportService.validateAccess for a non-superuser: E2010 for the requested data
// sets it cannot data-read, E2011 for the attribute option combos with an option it cannot
// data-read, E2012 for the org units outside its capture units, each listing every one.
absl::Status DecideAccess243(pqxx::transaction_base& tx, const DecodedRequest& d,
                             const ExportScope& scope, const dhis2::Principal& reader) {
  const std::string groups = PgTextArray(reader.group_uids);
  if (!d.data_sets.uids.empty()) {
    const pqxx::result r =
        Query(tx,
              absl::StrCat("SELECT ds.uid FROM dataset ds WHERE ds.uid = ANY($3::text[]) AND NOT ",
                           DataReadableSql("ds", 1, 2)),
              {reader.uid, groups, PgTextArray(d.data_sets.uids)});
    if (Rows(r) > 0) {
      return absl::PermissionDeniedError(absl::StrCat(
          "E2010: User is not allowed to read data for data set(s): `", UidList(r), "`"));
    }
  }
  if (!d.attribute_option_combos.uids.empty()) {
    const pqxx::result r = Query(
        tx,
        absl::StrCat("SELECT coc.uid FROM categoryoptioncombo coc WHERE coc.uid = ANY($3::text[]) "
                     "AND EXISTS (SELECT 1 FROM categoryoptioncombos_categoryoptions aoc_co "
                     "JOIN ",
                     scope.category_option_table,
                     " co ON aoc_co.categoryoptionid = co.categoryoptionid "
                     "WHERE coc.categoryoptioncomboid = aoc_co.categoryoptioncomboid AND NOT ",
                     DataReadableSql("co", 1, 2), ")"),
        {reader.uid, groups, PgTextArray(d.attribute_option_combos.uids)});
    if (Rows(r) > 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("E2011: User is not allowed to read data for attribute option combo(s): `",
                       UidList(r), "`"));
    }
  }
  if (!d.org_units.uids.empty()) {
    const pqxx::result r =
        Query(tx,
              "SELECT ou.uid FROM organisationunit ou WHERE ou.uid = ANY($1::text[]) "
              "AND NOT EXISTS (SELECT 1 FROM organisationunit parent "
              "WHERE parent.organisationunitid IN (SELECT organisationunitid FROM usermembership "
              "WHERE userinfoid = $2::bigint) "
              "AND (ou.path = parent.path OR ou.path LIKE parent.path || '/%'))",
              {PgTextArray(d.org_units.uids), absl::StrCat(reader.user_id)});
    if (Rows(r) > 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("E2012: User is not allowed to view org unit(s): `", UidList(r), "`"));
    }
  }
  return absl::OkStatus();
}

// JpaQueryUtils: a user with the authority Test_skipSharingCheck passes every sharing check.
bool SkipsSharingCheck(pqxx::transaction_base& tx, const dhis2::Principal& reader) {
  const pqxx::result r =
      Query(tx,
            "SELECT 1 FROM userrolemembers m JOIN userroleauthorities a USING (userroleid) "
            "WHERE m.userid = $1::bigint AND a.authority = 'Test_skipSharingCheck' LIMIT 1",
            {absl::StrCat(reader.user_id)});
  return Rows(r) > 0;
}

// The last-updated bound, by date as 2.43 binds it (a java.sql.Date: midnight of the day).
std::optional<int64_t> LastUpdatedDay(const dhis2::ExportParams& params) {
  std::optional<int64_t> micros = params.last_updated_micros;
  if (!micros && params.last_updated_duration_micros) {
    const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const int64_t duration = *params.last_updated_duration_micros;
    micros = duration > now - kEarliestMicros ? kEarliestMicros : now - duration;
  }
  if (!micros) return std::nullopt;
  int64_t day = *micros / kDayMicros;
  if (*micros % kDayMicros < 0) --day;
  return std::max(day * kDayMicros, kEarliestMicros);
}

}  // namespace

absl::StatusOr<ExportScope> ResolveExportScope243(pqxx::transaction_base& tx,
                                                  const Dhis2Schema& schema,
                                                  const dhis2::ExportParams& params,
                                                  const dhis2::Principal* reader) {
  ExportScope scope;
  scope.dhis2 = 43;
  scope.category_option_table = schema.category_option_table;
  scope.category_table = schema.category_table;
  scope.include_deleted = params.include_deleted;
  scope.limit = params.limit;
  scope.offset = params.offset;
  scope.order = params.order;
  scope.last_updated_min_micros = LastUpdatedDay(params);
  const DecodedRequest d = DecodeRequest(tx, scope, params);
  absl::Status status = CheckDecoded(d, params);
  if (!status.ok()) return status;
  const bool checks_sharing =
      reader != nullptr && !reader->superuser && !SkipsSharingCheck(tx, *reader);
  if (checks_sharing) {
    status = DecideAccess243(tx, d, scope, *reader);
    if (!status.ok()) return status;
  }
  ResolveDataElements(tx, d, &scope);
  status = LoadIdentifiers(tx, kDataElements, params.output.data_element, &scope.data_element_ids,
                           &scope.data_elements);
  if (!status.ok()) return status;
  ResolvePeriods(tx, params, &scope);
  ResolveOrgUnits(tx, d, params, checks_sharing ? reader : nullptr, &scope);
  status =
      LoadIdentifiers(tx, kOrgUnits, params.output.org_unit, &scope.org_unit_ids, &scope.org_units);
  if (!status.ok()) return status;
  status = ResolveOptionCombos(tx, d, params, &scope);
  if (!status.ok()) return status;
  status = ResolveGroupHeader(tx, d, params, &scope);
  if (!status.ok()) return status;
  // aoc_access: without explicit attribute option combos, a non-superuser's export leaves out
  // the combos with an option it cannot data-read.
  if (checks_sharing && d.attribute_option_combos.uids.empty()) {
    scope.excluded_attribute_option_combo_ids =
        UnreadableAttributeOptionCombos(tx, scope.category_option_table, *reader);
  }
  status = CheckEncodableIds(tx, scope, params.output);
  if (!status.ok()) return status;
  FindSharedHeaderIds243(tx, params, &scope);
  ExcludeDefaultCombos(tx, params, &scope);
  return scope;
}

}  // namespace dvexport::db
