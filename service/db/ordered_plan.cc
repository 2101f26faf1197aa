#include "service/db/ordered_plan.h"

#include <algorithm>
#include <cstdlib>
#include <pqxx/result>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "service/db/array_literal.h"

namespace dvexport::db {
namespace {

// The leading key's values of the scope in the key's order, grouped: the ids of one group share
// the key's value (a period's dates, a UID, a path) and must be read in one slice.
struct KeyGroups {
  const char* column = nullptr;
  std::vector<std::vector<int64_t>> groups;
};

// Rows of (id, key) in key order into groups of equal keys.
void GroupRows(const pqxx::result& result, KeyGroups* out) {
  std::string last;
  for (const pqxx::row& row : result) {
    const std::string key(row[1].c_str(), row[1].size());
    if (out->groups.empty() || key != last) out->groups.emplace_back();
    out->groups.back().push_back(std::strtoll(row[0].c_str(), nullptr, 10));
    last = key;
  }
}

KeyGroups LeadingKeyGroups(pqxx::transaction_base& tx, const ExportScope& scope) {
  KeyGroups groups;
  switch (scope.order.front()) {
    case dhis2::OrderKey::kPe:
      groups.column = "dv.periodid";
      GroupRows(
          tx.exec(absl::StrCat(
              "SELECT periodid, startdate::text || '/' || enddate::text FROM period",
              scope.filter_periods ? absl::StrCat(" WHERE periodid = ANY('",
                                                  ToArrayLiteral(scope.period_ids), "'::bigint[])")
                                   : "",
              " ORDER BY startdate, enddate")),
          &groups);
      break;
    case dhis2::OrderKey::kDe:
      groups.column = "dv.dataelementid";
      GroupRows(tx.exec(absl::StrCat("SELECT dataelementid, uid FROM dataelement "
                                     "WHERE dataelementid = ANY('",
                                     ToArrayLiteral(scope.data_element_ids),
                                     "'::bigint[]) ORDER BY uid")),
                &groups);
      break;
    case dhis2::OrderKey::kOu:
      groups.column = "dv.sourceid";
      GroupRows(
          tx.exec(absl::StrCat("SELECT organisationunitid, path FROM organisationunit "
                               "WHERE organisationunitid = ANY('",
                               ToArrayLiteral(scope.org_unit_ids), "'::bigint[]) ORDER BY path")),
          &groups);
      break;
    case dhis2::OrderKey::kAoc:
      groups.column = "dv.attributeoptioncomboid";
      GroupRows(
          tx.exec(absl::StrCat(
              "SELECT categoryoptioncomboid, uid FROM categoryoptioncombo",
              scope.attribute_option_combo_ids
                  ? absl::StrCat(" WHERE categoryoptioncomboid = ANY('",
                                 ToArrayLiteral(*scope.attribute_option_combo_ids), "'::bigint[])")
                  : "",
              " ORDER BY uid")),
          &groups);
      break;
    case dhis2::OrderKey::kCreated:
      break;
  }
  return groups;
}

KeySlice SliceOf(const KeyGroups& groups, size_t first, size_t end) {
  KeySlice slice;
  slice.column = groups.column;
  for (size_t i = first; i < end; ++i) {
    slice.ids.insert(slice.ids.end(), groups.groups[i].begin(), groups.groups[i].end());
  }
  std::sort(slice.ids.begin(), slice.ids.end());
  return slice;
}

// The first group alone (its rows come after one small sort), then the rest in one slice: every
// slice of a key that no index leads with costs a scan of the table, so more slices cost more
// than the sort they spare.
std::vector<KeySlice> Batch(const KeyGroups& groups) {
  std::vector<KeySlice> slices;
  const size_t n = groups.groups.size();
  if (n == 0) return slices;
  slices.push_back(SliceOf(groups, 0, 1));
  if (n > 1) slices.push_back(SliceOf(groups, 1, n));
  return slices;
}

// With an offset: the groups wholly before it dropped (counted per leading key), and what
// remains as one slice that skips the rest of the offset itself.
std::vector<KeySlice> AfterOffset(pqxx::transaction_base& tx, const ExportScope& scope,
                                  const KeyGroups& groups, int64_t offset) {
  absl::flat_hash_map<int64_t, int64_t> counts;
  for (const pqxx::row& row :
       tx.exec(absl::StrCat("SELECT ", groups.column, ", count(*) FROM ", DataValueSourceSql(scope),
                            " WHERE ", BuildDataValueWhereSql(scope), " GROUP BY 1"))) {
    counts[std::strtoll(row[0].c_str(), nullptr, 10)] = std::strtoll(row[1].c_str(), nullptr, 10);
  }
  int64_t skipped = 0;
  size_t first = 0;
  for (; first < groups.groups.size(); ++first) {
    int64_t rows = 0;
    for (const int64_t id : groups.groups[first]) {
      auto it = counts.find(id);
      if (it != counts.end()) rows += it->second;
    }
    if (skipped + rows > offset) break;
    skipped += rows;
  }
  if (first == groups.groups.size()) return {};
  KeySlice slice = SliceOf(groups, first, groups.groups.size());
  slice.offset = offset - skipped;
  return {slice};
}

}  // namespace

std::vector<KeySlice> PlanOrderedSlices(pqxx::transaction_base& tx, const ExportScope& scope) {
  const pqxx::row work_mem =
      tx.exec1("SELECT setting::bigint < 65536 FROM pg_settings WHERE name = 'work_mem'");
  if (work_mem[0].as<bool>()) tx.exec("SELECT set_config('work_mem', '64MB', true)");
  const KeyGroups groups = LeadingKeyGroups(tx, scope);
  if (groups.column == nullptr) {
    KeySlice whole;
    whole.offset = scope.offset.value_or(0);
    return {whole};
  }
  const int64_t offset = scope.offset.value_or(0);
  if (offset > 0) return AfterOffset(tx, scope, groups, offset);
  return Batch(groups);
}

}  // namespace dvexport::db
