// DHIS2 2.43's ADX export: DefaultDataExportService.exportInGroups and encodeGroup, the
// categories of StatelessIdCoder.mapEncodedOptionCombosAsCategoryAndOption, read as integers.

#include <algorithm>
#include <pqxx/result>
#include <pqxx/stream_from>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/db/access_rules.h"
#include "service/db/adx_stream.h"
#include "service/db/adx_stream_internal.h"
#include "service/db/array_literal.h"
#include "service/dhis2/adx.h"
#include "service/dhis2/uid.h"

namespace dvexport::db {
namespace {

using dhis2::IdScheme;
using namespace adx_internal;  // NOLINT: the ADX files' shared helpers

// UID.isDefaultOptionCombo: 2.43 compares with this constant.

// exportInGroups' order (PE, OU, AOC), then the value's key: a group's values are together
// whatever two groups' dates, paths and UIDs share.
constexpr char kGroupOrder[] =
    "pe.startdate, pe.enddate, ou.path, aoc.uid, dv.periodid, dv.sourceid, "
    "dv.attributeoptioncomboid, dv.dataelementid, dv.categoryoptioncomboid";

// 2.43's IdProperty.name(), which its E820x messages show: UID, CODE, NAME or ATTR.
const char* PropertyName(const IdScheme& scheme) {
  switch (scheme.property) {
    case IdScheme::Property::kCode:
      return "CODE";
    case IdScheme::Property::kName:
      return "NAME";
    case IdScheme::Property::kAttribute:
      return "ATTR";
    case IdScheme::Property::kUid:
      break;
  }
  return "UID";
}

// The data sets whose "match" identifier is one of "values", each with its output id, in the
// order of "values" (then of their ids, for a name two data sets share).
void LookUpDataSets(pqxx::transaction_base& tx, const std::vector<std::string>& values,
                    const IdScheme& match, const IdScheme& output,
                    std::vector<AdxDataSet243>* sets) {
  if (values.empty()) return;
  Params params = {PgTextArray(values)};
  if (output.property == IdScheme::Property::kAttribute) params.push_back(output.attribute);
  const pqxx::result result =
      Query(tx,
            absl::StrCat("SELECT o.datasetid, o.uid, ", SchemeExpression(output, 2),
                         " FROM unnest($1::text[]) WITH ORDINALITY v(id, n) JOIN dataset o ON ",
                         SchemeExpression(match, 3), " = v.id ORDER BY v.n, o.datasetid"),
            params);
  for (const pqxx::row& r : result) {
    sets->push_back(AdxDataSet243{ToInt64(r[0]), r[1].c_str(), ToOptionalString(r[2]), {}});
  }
}

// decodeIds for the data sets, in the request's order: under UID the values as UIDs (unknown
// ones name nothing); with the code fallback the values that are UIDs, then, when one is not,
// the data sets whose code is one of the values; under CODE or NAME the data sets that have one.
// Then each one's members.
std::vector<AdxDataSet243> DecodeDataSets(pqxx::transaction_base& tx,
                                          const AdxRequest243& request) {
  const dhis2::Identifiers& ids = request.data_sets;
  std::vector<AdxDataSet243> sets;
  if (ids.empty()) return sets;
  const IdScheme uid = IdScheme::Uid();
  if (ids.scheme.property != IdScheme::Property::kUid) {
    LookUpDataSets(tx, ids.values, ids.scheme, request.output.data_set, &sets);
  } else {
    std::vector<std::string> uids;
    for (const std::string& value : ids.values) {
      if (!ids.code_fallback || dhis2::IsValidUid(value)) uids.push_back(value);
    }
    LookUpDataSets(tx, uids, uid, request.output.data_set, &sets);
    if (uids.size() < ids.values.size()) {
      LookUpDataSets(tx, ids.values, IdScheme{IdScheme::Property::kCode, ""},
                     request.output.data_set, &sets);
    }
  }
  std::vector<int64_t> set_ids;
  for (const AdxDataSet243& set : sets) set_ids.push_back(set.id);
  const pqxx::result members = Query(tx,
                                     "SELECT datasetid, dataelementid FROM datasetelement "
                                     "WHERE datasetid = ANY($1::bigint[]) ORDER BY dataelementid",
                                     {IdArray(set_ids)});
  for (const pqxx::row& r : members) {
    for (AdxDataSet243& set : sets) {
      if (set.id == ToInt64(r[0])) set.data_element_ids.push_back(ToInt64(r[1]));
    }
  }
  return sets;
}

// The identifier in "scheme" of each object of "table" whose "id_column" is one of "ids".
void LoadOutputIds(pqxx::transaction_base& tx, const char* table, const char* id_column,
                   const IdScheme& scheme, const std::vector<int64_t>& ids, IdentifierMap* out) {
  Params params = {IdArray(ids)};
  if (scheme.property == IdScheme::Property::kAttribute) params.push_back(scheme.attribute);
  const pqxx::result result =
      Query(tx,
            absl::StrCat("SELECT o.", id_column, ", ", SchemeExpression(scheme, 2), " FROM ", table,
                         " o WHERE o.", id_column, " = ANY($1::bigint[])"),
            params);
  out->reserve(result.size());
  for (const pqxx::row& r : result) out->emplace(ToInt64(r[0]), ToOptionalString(r[1]));
}

// Why "category" cannot name an attribute of an ADX element; empty if it can.
std::string UnwritableCategory(const std::string& category,
                               const std::vector<encode::AdxAttribute>& before) {
  if (!dhis2::IsXmlName(category) || category.find(':') != std::string::npos ||
      IsAdxAttributeName(category)) {
    return absl::StrCat("category identifier \"", category, "\" cannot be an ADX attribute name");
  }
  for (const encode::AdxAttribute& attribute : before) {
    if (attribute.name == category) {
      return absl::StrCat("category identifier \"", category, "\" would be written twice");
    }
  }
  return "";
}

// IC's query for every option combo: each category of its combo with its option of that
// category, in the category and option schemes. An option combo with a category or option
// without an identifier is left out (E8204), as one without any row.
absl::Status LoadOptionCombos(pqxx::transaction_base& tx, const ExportScope& scope,
                              const AdxRequest243& request, AdxScope* adx) {
  const IdScheme& category = request.output.category;
  const IdScheme& option = request.output.category_option;
  Params params = {category.attribute, option.attribute};
  const pqxx::result result = Query(
      tx,
      absl::StrCat(
          "SELECT coc.categoryoptioncomboid, coc.uid, (SELECT ", SchemeExpression(category, 1),
          " FROM ", scope.category_table, " o WHERE o.categoryid = c.categoryid), (SELECT ",
          SchemeExpression(option, 2), " FROM ", scope.category_option_table,
          " o WHERE o.categoryoptionid = co.categoryoptionid) "
          "FROM categoryoptioncombo coc "
          "JOIN categorycombos_optioncombos cc_coc "
          "ON cc_coc.categoryoptioncomboid = coc.categoryoptioncomboid "
          "JOIN categorycombos_categories cc_c ON cc_c.categorycomboid = cc_coc.categorycomboid "
          "JOIN ",
          scope.category_table,
          " c ON c.categoryid = cc_c.categoryid "
          "JOIN categoryoptioncombos_categoryoptions coc_co "
          "ON coc_co.categoryoptioncomboid = coc.categoryoptioncomboid "
          "JOIN ",
          scope.category_option_table,
          " co ON co.categoryoptionid = coc_co.categoryoptionid "
          "JOIN categories_categoryoptions c_co ON c_co.categoryoptionid = co.categoryoptionid "
          "AND c_co.categoryid = c.categoryid "
          // $1 and $2 are used only under ATTRIBUTE.
          "WHERE $1::text IS NOT NULL AND $2::text IS NOT NULL "
          "ORDER BY coc.categoryoptioncomboid, cc_coc.categorycomboid, cc_c.sort_order, "
          "co.categoryoptionid"),
      params);
  absl::flat_hash_set<int64_t> incomplete;
  for (const pqxx::row& r : result) {
    const int64_t id = ToInt64(r[0]);
    if (r[2].is_null() || r[3].is_null()) incomplete.insert(id);
    if (incomplete.contains(id) || adx->unwritable_option_combos.contains(id)) continue;
    std::vector<encode::AdxAttribute>& attributes = adx->option_combos[id];
    std::string why = UnwritableCategory(r[2].c_str(), attributes);
    if (!why.empty()) {
      adx->unwritable_option_combos.emplace(
          id, absl::StrCat("category option combo ", r[1].c_str(), ": ", why));
      continue;
    }
    attributes.push_back(encode::AdxAttribute{r[2].c_str(), r[3].c_str()});
  }
  for (const int64_t id : incomplete) {
    adx->option_combos.erase(id);
    adx->unwritable_option_combos.erase(id);
  }
  for (const auto& [id, why] : adx->unwritable_option_combos) adx->option_combos.erase(id);
  return absl::OkStatus();
}

// The scope's filters with the data set's members as its data elements.
ExportScope DataSetFilters(const ExportScope& scope, const AdxDataSet243& data_set) {
  ExportScope filters;
  filters.data_element_ids = data_set.data_element_ids;
  filters.filter_periods = scope.filter_periods;
  filters.period_ids = scope.period_ids;
  filters.org_unit_ids = scope.org_unit_ids;
  filters.attribute_option_combo_ids = scope.attribute_option_combo_ids;
  filters.excluded_attribute_option_combo_ids = scope.excluded_attribute_option_combo_ids;
  filters.category_option_combo_ids = scope.category_option_combo_ids;
  filters.last_updated_min_micros = scope.last_updated_min_micros;
  filters.include_deleted = scope.include_deleted;
  filters.limit = scope.limit;
  filters.changes_only = scope.changes_only;
  filters.changed_keys = scope.changed_keys;
  filters.changed_key_count = scope.changed_key_count;
  return filters;
}

// The ids of "map" (the scope's output ids) that have no identifier.
std::vector<int64_t> WithoutIdentifier(const IdentifierMap& map, const std::vector<int64_t>& ids) {
  std::vector<int64_t> missing;
  for (const int64_t id : ids) {
    const auto found = map.find(id);
    if (found == map.end() || !found->second) missing.push_back(id);
  }
  return missing;
}

// What makes a group fail 2.43's encoding checks: data elements and org units without an
// identifier, option combos without categories.
struct Unencodable {
  std::vector<int64_t> data_elements, org_units, option_combos;

  bool empty() const { return data_elements.empty() && org_units.empty() && option_combos.empty(); }
  // The SQL condition on a row "<alias>" of the data set's values.
  std::string Condition(const char* alias) const {
    const std::string combos = IdArray(option_combos);
    return absl::StrCat("(", alias, ".dataelementid = ANY('", IdArray(data_elements),
                        "'::bigint[]) OR ", alias, ".sourceid = ANY('", IdArray(org_units),
                        "'::bigint[]) OR ", alias, ".categoryoptioncomboid = ANY('", combos,
                        "'::bigint[]) OR ", alias, ".attributeoptioncomboid = ANY('", combos,
                        "'::bigint[]))");
  }
};

// The rows of the data set's query, numbered in its order ("n"), as subquery "q".
std::string NumberedRowsSql(const ExportScope& scope, const AdxDataSet243& data_set) {
  return absl::StrCat(
      "(",
      BuildAdxSelectSql243(scope, data_set,
                           absl::StrCat("dv.periodid, dv.sourceid, dv.attributeoptioncomboid, "
                                        "dv.dataelementid, dv.categoryoptioncomboid, "
                                        "row_number() OVER (ORDER BY ",
                                        kGroupOrder, ") AS n")),
      ") q");
}

// encodeGroup's checks on the group of "key" (period, org unit, attribute option combo) of the
// data set: E8201, E8202, then E8204 (or the option combo that cannot be written).
absl::Status CheckGroup(pqxx::transaction_base& tx, const ExportScope& scope,
                        const AdxRequest243& request, const AdxScope& adx,
                        const AdxDataSet243& data_set, const Unencodable& bad,
                        const pqxx::row& key) {
  const pqxx::result rows =
      Query(tx,
            absl::StrCat("SELECT q.dataelementid, de.uid, q.categoryoptioncomboid, ou.uid FROM ",
                         NumberedRowsSql(scope, data_set),
                         " JOIN dataelement de ON de.dataelementid = q.dataelementid "
                         "JOIN organisationunit ou ON ou.organisationunitid = q.sourceid "
                         "WHERE q.periodid = $1::bigint AND q.sourceid = $2::bigint "
                         "AND q.attributeoptioncomboid = $3::bigint ORDER BY q.n"),
            {key[0].c_str(), key[1].c_str(), key[2].c_str()});
  std::vector<std::string> elements;
  std::vector<int64_t> combos;
  for (const pqxx::row& r : rows) {
    const int64_t element = ToInt64(r[0]);
    if (std::binary_search(bad.data_elements.begin(), bad.data_elements.end(), element) &&
        std::find(elements.begin(), elements.end(), r[1].c_str()) == elements.end()) {
      elements.push_back(r[1].c_str());
    }
    combos.push_back(ToInt64(r[2]));
  }
  if (!elements.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("E8201: Export as ", PropertyName(request.output.data_element),
                     " not possible as the property is undefined for data element(s): `[",
                     absl::StrJoin(elements, ", "), "]`"));
  }
  if (!rows.empty() &&
      std::binary_search(bad.org_units.begin(), bad.org_units.end(), ToInt64(key[1]))) {
    return absl::FailedPreconditionError(
        absl::StrCat("E8202: Export as ", PropertyName(request.output.org_unit),
                     " not possible as the property is undefined for org unit(s): `[",
                     rows[0][3].c_str(), "]`"));
  }
  combos.push_back(ToInt64(key[2]));
  for (const int64_t combo : combos) {
    if (adx.option_combos.contains(combo) || adx.unwritable_option_combos.contains(combo)) {
      continue;
    }
    const char* option = PropertyName(request.output.category_option);
    return absl::FailedPreconditionError(absl::StrCat(
        "E8204: Export as category ", PropertyName(request.output.category),
        " and category options ", option,
        " not possible as the property is undefined for at least one of them linked to category "
        "option combo(s): `",
        option, "`"));
  }
  for (const int64_t combo : combos) {
    const auto unwritable = adx.unwritable_option_combos.find(combo);
    if (unwritable != adx.unwritable_option_combos.end()) {
      return absl::FailedPreconditionError(unwritable->second);
    }
  }
  return absl::InternalError("ADX: a group failed no check it was found to fail");
}

// 2.43 encodes every group before it writes a byte: the first group (data sets in order, then
// the export's order) that fails a check fails the export.
absl::Status CheckEncoding(pqxx::transaction_base& tx, const ExportScope& scope,
                           const AdxRequest243& request, const AdxScope& adx) {
  if (scope.MatchesNothing()) return absl::OkStatus();
  Unencodable bad;
  bad.org_units = WithoutIdentifier(adx.org_units_243, scope.org_unit_ids);
  for (const auto& [id, uid] : adx.option_combo_uids) {
    if (!adx.option_combos.contains(id)) bad.option_combos.push_back(id);
  }
  std::sort(bad.option_combos.begin(), bad.option_combos.end());
  for (const AdxDataSet243& data_set : adx.ordered_data_sets) {
    if (data_set.data_element_ids.empty()) continue;
    bad.data_elements = WithoutIdentifier(adx.data_elements_243, data_set.data_element_ids);
    const std::string rows = NumberedRowsSql(scope, data_set);
    if (!data_set.output_id) {
      if (Query(tx, absl::StrCat("SELECT 1 FROM ", rows, " LIMIT 1"), {}).empty()) continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "E8200: Export as ", PropertyName(request.output.data_set),
          " not possible as the property is undefined for data set: `", data_set.uid, "`"));
    }
    if (bad.empty()) continue;
    // Most exports have no such value at all: found without sorting, before the exact search.
    const ExportScope filters = DataSetFilters(scope, data_set);
    const pqxx::result any = Query(
        tx,
        absl::StrCat("SELECT 1 FROM ", DataValueSourceSql(filters), " WHERE ",
                     BuildDataValueWhereSql(filters), " AND ", bad.Condition("dv"), " LIMIT 1"),
        {});
    if (any.empty()) continue;
    const pqxx::result first =
        Query(tx,
              absl::StrCat("SELECT q.periodid, q.sourceid, q.attributeoptioncomboid FROM ", rows,
                           " WHERE ", bad.Condition("q"), " ORDER BY q.n LIMIT 1"),
              {});
    if (!first.empty()) return CheckGroup(tx, scope, request, adx, data_set, bad, first[0]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AdxScope> ResolveAdxScope243(pqxx::transaction_base& tx, const ExportScope& scope,
                                            const AdxRequest243& request) {
  AdxScope adx;
  adx.ordered_data_sets = DecodeDataSets(tx, request);
  std::vector<int64_t> members;
  for (const AdxDataSet243& set : adx.ordered_data_sets) {
    members.insert(members.end(), set.data_element_ids.begin(), set.data_element_ids.end());
  }
  LoadOutputIds(tx, "dataelement", "dataelementid", request.output.data_element, members,
                &adx.data_elements_243);
  LoadOutputIds(tx, "organisationunit", "organisationunitid", request.output.org_unit,
                scope.org_unit_ids, &adx.org_units_243);
  absl::Status status = LoadOptionCombos(tx, scope, request, &adx);
  if (status.ok()) status = LoadPeriods(tx, scope, &adx);
  if (!status.ok()) return status;
  const pqxx::result elements =
      Query(tx,
            "SELECT de.dataelementid, de.valuetype, de.uid FROM dataelement de "
            "WHERE de.dataelementid = ANY($1::bigint[])",
            {IdArray(scope.data_element_ids)});
  for (const pqxx::row& r : elements) {
    if (dhis2::IsNumericValueType(std::string_view(r[1].c_str(), r[1].size()))) {
      adx.numeric_data_elements.insert(ToInt64(r[0]));
    }
    adx.data_element_uids.emplace(ToInt64(r[0]), r[2].c_str());
  }
  const pqxx::result option_combos =
      Query(tx, "SELECT categoryoptioncomboid, uid FROM categoryoptioncombo", {});
  for (const pqxx::row& r : option_combos) {
    adx.option_combo_uids.emplace(ToInt64(r[0]), r[1].c_str());
    if (request.exclude_default_aoc &&
        std::string_view(r[1].c_str()) == dhis2::kDefaultCategoryOptionComboUid) {
      adx.excluded_attribute_option_combo = ToInt64(r[0]);
    }
  }
  status = CheckEncoding(tx, scope, request, adx);
  if (!status.ok()) return status;
  return adx;
}

std::string BuildAdxSelectSql243(const ExportScope& scope, const AdxDataSet243& data_set,
                                 std::string_view columns) {
  const ExportScope filters = DataSetFilters(scope, data_set);
  std::string sql = absl::StrCat(
      "SELECT ", std::string(columns), " FROM ", DataValueSourceSql(filters),
      " JOIN period pe ON pe.periodid = dv.periodid "
      "JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid "
      "JOIN categoryoptioncombo aoc ON aoc.categoryoptioncomboid = dv.attributeoptioncomboid "
      "WHERE ",
      BuildDataValueWhereSql(filters), " ORDER BY ", kGroupOrder);
  if (scope.limit) absl::StrAppend(&sql, " LIMIT ", *scope.limit);
  if (scope.offset && *scope.offset > 0) absl::StrAppend(&sql, " OFFSET ", *scope.offset);
  return sql;
}

namespace {

// The previous row's group: data set (its index), period, org unit, attribute option combo.
struct GroupKey {
  size_t data_set = 0;
  int64_t ids[3] = {0, 0, 0};
  bool first = true;
};

// Turns one COPY line of data set "index" into "*row".
absl::Status ParseAdxLine243(std::string_view line, const AdxScope& adx, size_t index,
                             std::string* scratch, GroupKey* key, AdxRow* row) {
  static const std::vector<encode::AdxAttribute> kNoAttributes;
  CopyTextField fields[6];
  absl::Status status = SplitCopyTextLine(line, 6, fields, scratch);
  if (!status.ok()) return status;
  int64_t ids[5];
  for (int i = 0; i < 5; ++i) {
    if (!ParseId(fields[i], &ids[i])) {
      return absl::DataLossError(absl::StrCat("ADX row: column ", i + 1, " is not an id"));
    }
  }
  row->new_group = key->first || key->data_set != index || ids[0] != key->ids[0] ||
                   ids[1] != key->ids[1] || ids[2] != key->ids[2];
  *key = GroupKey{index, {ids[0], ids[1], ids[2]}, false};
  const AdxDataSet243& data_set = adx.ordered_data_sets[index];
  auto period = adx.periods.find(ids[0]);
  auto org_unit = adx.org_units_243.find(ids[1]);
  auto attributes = adx.option_combos.find(ids[2]);
  auto data_element = adx.data_elements_243.find(ids[3]);
  auto categories = adx.option_combos.find(ids[4]);
  if (!data_set.output_id || period == adx.periods.end() || org_unit == adx.org_units_243.end() ||
      !org_unit->second || attributes == adx.option_combos.end() ||
      data_element == adx.data_elements_243.end() || !data_element->second ||
      categories == adx.option_combos.end()) {
    return absl::InternalError("ADX row: a value the export's checks did not see");
  }
  const bool excluded = adx.excluded_attribute_option_combo == ids[2];
  row->group =
      encode::AdxGroup{TextOf(data_set.output_id), encode::Text{period->second, false},
                       TextOf(org_unit->second), excluded ? &kNoAttributes : &attributes->second};
  row->value = encode::AdxValue{TextOf(data_element->second), &categories->second,
                                encode::Text{fields[5].text, fields[5].is_null},
                                adx.numeric_data_elements.contains(ids[3])};
  return absl::OkStatus();
}

}  // namespace

absl::Status StreamAdxValues243(pqxx::transaction_base& tx, const ExportScope& scope,
                                const AdxScope& adx, absl::FunctionRef<bool(const AdxRow&)> row,
                                absl::FunctionRef<void()> stop_copy) {
  if (scope.MatchesNothing()) return absl::OkStatus();
  GroupKey key;
  std::string line, scratch;
  AdxRow parsed;
  for (size_t index = 0; index < adx.ordered_data_sets.size(); ++index) {
    const AdxDataSet243& data_set = adx.ordered_data_sets[index];
    if (data_set.data_element_ids.empty()) continue;
    pqxx::stream_from copy(
        tx, absl::StrCat("(",
                         BuildAdxSelectSql243(scope, data_set,
                                              "dv.periodid, dv.sourceid, "
                                              "dv.attributeoptioncomboid, dv.dataelementid, "
                                              "dv.categoryoptioncomboid, dv.value"),
                         ")"));
    absl::Status status;
    while (copy.get_raw_line(line)) {
      status = ParseAdxLine243(line, adx, index, &scratch, &key, &parsed);
      if (!status.ok()) break;
      if (!row(static_cast<const AdxRow&>(parsed))) {
        status = absl::CancelledError("the export was stopped by its consumer");
        break;
      }
    }
    if (!status.ok()) {
      // As StreamDataValues: the server is asked to stop the COPY, the ROLLBACK drops the rest.
      stop_copy();
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace dvexport::db
