#include "service/db/adx_stream.h"

#include <charconv>
#include <optional>
#include <pqxx/prepared_statement>
#include <pqxx/result>
#include <pqxx/stream_from>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/db/adx_stream_internal.h"
#include "service/db/data_value_line_parser.h"
#include "service/dhis2/adx.h"

namespace dvexport::db {
namespace adx_internal {

pqxx::result Query(pqxx::transaction_base& tx, const std::string& sql, const Params& params) {
  return tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
}

std::string IdArray(const std::vector<int64_t>& ids) {
  return absl::StrCat("{", absl::StrJoin(ids, ","), "}");
}

int64_t ToInt64(const pqxx::field& field) {
  int64_t value = 0;
  std::from_chars(field.c_str(), field.c_str() + field.size(), value);
  return value;
}

std::optional<std::string> ToOptionalString(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return std::string(field.c_str(), field.size());
}

// ADX's own attribute names, which no category may take.
bool IsAdxAttributeName(std::string_view name) {
  return name == "dataSet" || name == "period" || name == "orgUnit" || name == "dataElement" ||
         name == "value";
}

absl::Status LoadPeriods(pqxx::transaction_base& tx, const ExportScope& scope, AdxScope* adx) {
  std::vector<int64_t> ids;
  ids.reserve(scope.periods.size());
  for (const auto& [id, iso] : scope.periods) ids.push_back(id);
  const pqxx::result periods =
      Query(tx,
            "SELECT p.periodid, pt.name, to_char(p.startdate, 'YYYY-MM-DD') FROM period p "
            "JOIN periodtype pt ON pt.periodtypeid = p.periodtypeid "
            "WHERE p.periodid = ANY($1::bigint[])",
            {IdArray(ids)});
  for (const pqxx::row& r : periods) {
    const std::string_view type(r[1].c_str(), r[1].size());
    const std::optional<std::string_view> duration = dhis2::AdxPeriodDuration(type);
    if (!duration) {
      return absl::FailedPreconditionError(
          absl::StrCat("period type \"", std::string(type), "\" has no ADX duration"));
    }
    adx->periods.emplace(ToInt64(r[0]), absl::StrCat(r[2].c_str(), "/", std::string(*duration)));
  }
  return absl::OkStatus();
}

encode::Text TextOf(const std::optional<std::string>& identifier) {
  if (!identifier) return encode::Text{{}, true};
  return encode::Text{*identifier, false};
}

bool ParseId(const CopyTextField& field, int64_t* id) {
  if (field.is_null) return false;
  const auto [end, error] =
      std::from_chars(field.text.data(), field.text.data() + field.text.size(), *id);
  return error == std::errc() && end == field.text.data() + field.text.size();
}

}  // namespace adx_internal

namespace {

using namespace adx_internal;  // NOLINT: the ADX files' shared helpers

// DHIS2's IdScheme.name(), which its ADX messages use: UID, CODE, NAME or ATTRIBUTE:<uid>.
std::string SchemeNameForMessage(const dhis2::IdScheme& scheme) {
  switch (scheme.property) {
    case dhis2::IdScheme::Property::kCode:
      return "CODE";
    case dhis2::IdScheme::Property::kName:
      return "NAME";
    case dhis2::IdScheme::Property::kAttribute:
      return absl::StrCat("ATTRIBUTE:", scheme.attribute);
    case dhis2::IdScheme::Property::kUid:
      break;
  }
  return "UID";
}

// "SELECT ... FROM <combos>": the category combos DHIS2's AdxDataSetMetadata covers.
constexpr char kCombosSql[] =
    "WITH combos AS (SELECT ds.categorycomboid AS id FROM dataset ds "
    "WHERE ds.datasetid = ANY($1::bigint[]) "
    "UNION SELECT coalesce(dse.categorycomboid, de.categorycomboid) FROM datasetelement dse "
    "JOIN dataelement de ON de.dataelementid = dse.dataelementid "
    "WHERE dse.datasetid = ANY($1::bigint[])) ";

absl::Status LoadOptionCombos(pqxx::transaction_base& tx, const ExportScope& scope,
                              const dhis2::IdScheme& scheme, AdxScope* adx) {
  Params params = {IdArray(scope.data_set_ids)};
  if (scheme.property == dhis2::IdScheme::Property::kAttribute) params.push_back(scheme.attribute);
  const pqxx::result combos =
      Query(tx,
            absl::StrCat(kCombosSql,
                         "SELECT cco.categoryoptioncomboid FROM categorycombos_optioncombos cco "
                         "WHERE cco.categorycomboid IN (SELECT id FROM combos)"),
            {params.front()});
  for (const pqxx::row& r : combos) adx->option_combos.try_emplace(ToInt64(r[0]));
  const std::string category_id = SchemeExpression(scheme, 2);
  // Each category of each non-default option combo's combo, in the combo's order, with the
  // combo's option of that category (DHIS2 Category.getCategoryOption).
  const pqxx::result categories = Query(
      tx,
      absl::StrCat(kCombosSql, "SELECT cco.categoryoptioncomboid, c.name, (SELECT ", category_id,
                   " FROM ", scope.category_table,
                   " o WHERE o.categoryid = c.categoryid), co.name, (SELECT ", category_id,
                   " FROM ", scope.category_option_table,
                   " o WHERE o.categoryoptionid = co.categoryoptionid), m.uid, "
                   "m.aoc, m.bare "
                   "FROM categorycombos_optioncombos cco "
                   "JOIN categorycombo cc ON cc.categorycomboid = cco.categorycomboid "
                   "JOIN categorycombos_categories ccc ON ccc.categorycomboid = cc.categorycomboid "
                   "JOIN ",
                   scope.category_table,
                   " c ON c.categoryid = ccc.categoryid "
                   "LEFT JOIN LATERAL (SELECT o.categoryoptionid, o.name "
                   "FROM categoryoptioncombos_categoryoptions x "
                   "JOIN categories_categoryoptions y ON y.categoryoptionid = x.categoryoptionid "
                   "AND y.categoryid = c.categoryid "
                   "JOIN ",
                   scope.category_option_table,
                   " o ON o.categoryoptionid = x.categoryoptionid "
                   "WHERE x.categoryoptioncomboid = cco.categoryoptioncomboid "
                   "ORDER BY o.categoryoptionid LIMIT 1) co ON true "
                   "JOIN categoryoptioncombo coc "
                   "ON coc.categoryoptioncomboid = cco.categoryoptioncomboid "
                   // m: columns 5-7, for the message of an option combo without the option.
                   "CROSS JOIN LATERAL (SELECT coc.uid, EXISTS (SELECT 1 FROM dataset ds "
                   "WHERE ds.datasetid = ANY($1::bigint[]) "
                   "AND ds.categorycomboid = cco.categorycomboid), NOT EXISTS (SELECT 1 "
                   "FROM categoryoptioncombos_categoryoptions x "
                   "WHERE x.categoryoptioncomboid = cco.categoryoptioncomboid)) m(uid, aoc, bare) "
                   "WHERE cco.categorycomboid IN (SELECT id FROM combos) AND cc.name <> 'default' "
                   "ORDER BY cco.categoryoptioncomboid, ccc.sort_order"),
      params);
  const std::string scheme_name = SchemeNameForMessage(scheme);
  for (const pqxx::row& r : categories) {
    const std::string category_name(r[1].c_str(), r[1].size());
    const std::optional<std::string> category = ToOptionalString(r[2]);
    if (!category || !dhis2::IsXmlName(*category) || category->find(':') != std::string::npos ||
        IsAdxAttributeName(*category)) {
      return absl::FailedPreconditionError(
          absl::StrCat("Category ", scheme_name, " for ", category_name,
                       " is missing or invalid: ", category ? *category : "null"));
    }
    if (r[3].is_null()) {
      // DHIS2's Category.getCategoryOption returns null here, and AdxDataSetMetadata fails with
      // a NullPointerException that names nothing.
      const std::string combo =
          absl::StrCat(r[6].as<bool>() ? "attribute" : "category", " option combo ", r[5].c_str());
      return absl::FailedPreconditionError(
          r[7].as<bool>()
              ? absl::StrCat(combo, " has no category options")
              : absl::StrCat(combo, " has no category option of category ", category_name));
    }
    const std::optional<std::string> option = ToOptionalString(r[4]);
    if (!option || option->empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("CategoryOption ", scheme_name, " for ", r[3].c_str(), " is missing"));
    }
    adx->option_combos[ToInt64(r[0])].push_back(encode::AdxAttribute{*category, *option});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AdxScope> ResolveAdxScope(pqxx::transaction_base& tx, const ExportScope& scope,
                                         const AdxIdSchemes& schemes) {
  if (scope.dhis2 >= 43) {
    if (!schemes.dhis2_43)
      return absl::InternalError("a DHIS2 2.43 ADX export without its request");
    return ResolveAdxScope243(tx, scope, *schemes.dhis2_43);
  }
  AdxScope adx;
  Params params = {IdArray(scope.data_set_ids)};
  if (schemes.data_set.property == dhis2::IdScheme::Property::kAttribute) {
    params.push_back(schemes.data_set.attribute);
  }
  const pqxx::result sets =
      Query(tx,
            absl::StrCat("SELECT o.datasetid, ", SchemeExpression(schemes.data_set, 2),
                         " FROM dataset o WHERE o.datasetid = ANY($1::bigint[])"),
            params);
  for (const pqxx::row& r : sets) adx.data_sets.emplace(ToInt64(r[0]), ToOptionalString(r[1]));
  absl::Status status = LoadOptionCombos(tx, scope, schemes.category, &adx);
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
  // Any option combo may be a value's, also one outside the data sets' combos.
  const pqxx::result option_combos =
      Query(tx, "SELECT categoryoptioncomboid, uid FROM categoryoptioncombo", {});
  for (const pqxx::row& r : option_combos) {
    adx.option_combo_uids.emplace(ToInt64(r[0]), r[1].c_str());
  }
  return adx;
}

std::string BuildAdxSelectSql(const ExportScope& scope) {
  const std::string sets = IdArray(scope.data_set_ids);
  std::string sql = absl::StrCat(
      "SELECT dse.datasetid, dv.periodid, dv.sourceid, dv.attributeoptioncomboid, "
      "dv.dataelementid, dv.categoryoptioncomboid, dv.value FROM ",
      DataValueSourceSql(scope),
      " JOIN datasetelement dse ON dse.dataelementid = dv.dataelementid "
      "AND dse.datasetid = ANY('",
      sets,
      "'::bigint[]) "
      "JOIN dataset ds ON ds.datasetid = dse.datasetid "
      "JOIN categorycombos_optioncombos aoc ON aoc.categorycomboid = ds.categorycomboid "
      "AND aoc.categoryoptioncomboid = dv.attributeoptioncomboid WHERE ",
      BuildDataValueWhereSql(scope),
      // Integers only: PostgreSQL sorts them 2-2.5 times faster than by org unit path and
      // period dates (COPY of the sl demo: 3.6-4.0 s against 8.0-9.0 s), and any order that
      // keeps a group's values together will do.
      " ORDER BY array_position('", sets,
      "'::bigint[], dse.datasetid), dv.attributeoptioncomboid, dv.sourceid, dv.periodid, "
      "dv.dataelementid, dv.categoryoptioncomboid");
  if (scope.limit) absl::StrAppend(&sql, " LIMIT ", *scope.limit);
  return sql;
}

namespace {

// Turns one COPY line into "*row"; "*key" is the previous row's group key.
absl::Status ParseAdxLine(std::string_view line, const ExportScope& scope, const AdxScope& adx,
                          std::string* scratch, int64_t (*key)[4], bool* first, AdxRow* row) {
  CopyTextField fields[7];
  absl::Status status = SplitCopyTextLine(line, 7, fields, scratch);
  if (!status.ok()) return status;
  int64_t ids[6];
  for (int i = 0; i < 6; ++i) {
    if (!ParseId(fields[i], &ids[i])) {
      return absl::DataLossError(absl::StrCat("ADX row: column ", i + 1, " is not an id"));
    }
  }
  row->new_group = *first || ids[0] != (*key)[0] || ids[1] != (*key)[1] || ids[2] != (*key)[2] ||
                   ids[3] != (*key)[3];
  *first = false;
  for (int i = 0; i < 4; ++i) (*key)[i] = ids[i];
  auto data_set = adx.data_sets.find(ids[0]);
  auto period = adx.periods.find(ids[1]);
  auto org_unit = scope.org_units.find(ids[2]);
  auto attributes = adx.option_combos.find(ids[3]);
  auto data_element = scope.data_elements.find(ids[4]);
  auto categories = adx.option_combos.find(ids[5]);
  if (data_set == adx.data_sets.end() || period == adx.periods.end() ||
      org_unit == scope.org_units.end() || attributes == adx.option_combos.end() ||
      data_element == scope.data_elements.end()) {
    return absl::InternalError("ADX row: an id outside the export's scope");
  }
  if (categories == adx.option_combos.end()) {
    // DHIS2 fails here with a NullPointerException (AdxDataSetMetadata has no attributes for it).
    const auto combo_uid = adx.option_combo_uids.find(ids[5]);
    const auto element_uid = adx.data_element_uids.find(ids[4]);
    return absl::FailedPreconditionError(absl::StrCat(
        "category option combo ",
        combo_uid == adx.option_combo_uids.end() ? absl::StrCat(ids[5]) : combo_uid->second,
        " of a value of data element ",
        element_uid == adx.data_element_uids.end() ? absl::StrCat(ids[4]) : element_uid->second,
        " is in none of the data sets' category combos"));
  }
  row->group = encode::AdxGroup{TextOf(data_set->second), encode::Text{period->second, false},
                                TextOf(org_unit->second), &attributes->second};
  row->value = encode::AdxValue{TextOf(data_element->second), &categories->second,
                                encode::Text{fields[6].text, fields[6].is_null},
                                adx.numeric_data_elements.contains(ids[4])};
  return absl::OkStatus();
}

}  // namespace

absl::Status StreamAdxValues(pqxx::transaction_base& tx, const ExportScope& scope,
                             const AdxScope& adx, absl::FunctionRef<bool(const AdxRow&)> row,
                             absl::FunctionRef<void()> stop_copy) {
  if (scope.dhis2 >= 43) return StreamAdxValues243(tx, scope, adx, row, stop_copy);
  if (scope.MatchesNothing() || scope.data_set_ids.empty()) return absl::OkStatus();
  pqxx::stream_from copy(tx, absl::StrCat("(", BuildAdxSelectSql(scope), ")"));
  std::string line, scratch;
  int64_t key[4] = {0, 0, 0, 0};
  bool first = true;
  AdxRow parsed;
  absl::Status status;
  while (copy.get_raw_line(line)) {
    status = ParseAdxLine(line, scope, adx, &scratch, &key, &first, &parsed);
    if (!status.ok()) break;
    if (!row(static_cast<const AdxRow&>(parsed))) {
      status = absl::CancelledError("the export was stopped by its consumer");
      break;
    }
  }
  // As StreamDataValues: the server is asked to stop the COPY, the ROLLBACK drops the rest.
  if (!status.ok()) stop_copy();
  return status;
}

}  // namespace dvexport::db
