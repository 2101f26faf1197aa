#include "service/db/ordered_plan.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <pqxx/result>
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
  // Slices grow from 1 group to at most this many (index-friendly keys), or there are at most
  // max_slices slices (keys that each slice scans the table for).
  size_t max_groups_per_slice = 16;
  size_t max_slices = 0;  // 0: no bound
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
      GroupRows(tx.exec(absl::StrCat(
                    "SELECT periodid, startdate::text || '/' || enddate::text FROM period",
                    scope.filter_periods ? absl::StrCat(" WHERE periodid = ANY('",
                                                        ToArrayLiteral(scope.period_ids),
                                                        "'::bigint[])")
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
      groups.max_slices = 4;
      GroupRows(tx.exec(absl::StrCat("SELECT organisationunitid, path FROM organisationunit "
                                     "WHERE organisationunitid = ANY('",
                                     ToArrayLiteral(scope.org_unit_ids),
                                     "'::bigint[]) ORDER BY path")),
                &groups);
      break;
    case dhis2::OrderKey::kAoc:
      groups.column = "dv.attributeoptioncomboid";
      groups.max_slices = 4;
      GroupRows(tx.exec(absl::StrCat(
                    "SELECT categoryoptioncomboid, uid FROM categoryoptioncombo",
                    scope.attribute_option_combo_ids
                        ? absl::StrCat(" WHERE categoryoptioncomboid = ANY('",
                                       ToArrayLiteral(*scope.attribute_option_combo_ids),
                                       "'::bigint[])")
                        : "",
                    " ORDER BY uid")),
                &groups);
      break;
    case dhis2::OrderKey::kCreated:
      break;
  }
  return groups;
}

std::vector<KeySlice> Batch(const KeyGroups& groups) {
  std::vector<KeySlice> slices;
  const size_t n = groups.groups.size();
  size_t next = 0;
  size_t size = 1;
  while (next < n) {
    size_t take;
    if (groups.max_slices > 0) {
      take = (n + groups.max_slices - 1) / groups.max_slices;
    } else {
      take = size;
      size = std::min(size * 2, groups.max_groups_per_slice);
    }
    KeySlice slice;
    slice.column = groups.column;
    for (size_t i = next; i < std::min(n, next + take); ++i) {
      slice.ids.insert(slice.ids.end(), groups.groups[i].begin(), groups.groups[i].end());
    }
    std::sort(slice.ids.begin(), slice.ids.end());
    slices.push_back(std::move(slice));
    next += take;
  }
  return slices;
}

// Drops the slices wholly before the scope's offset (counted per leading key), and gives the
// first slice kept the rest of it.
void SkipOffset(pqxx::transaction_base& tx, const ExportScope& scope,
                std::vector<KeySlice>* slices) {
  const int64_t offset = scope.offset.value_or(0);
  if (offset <= 0 || slices->empty() || slices->front().column == nullptr) return;
  absl::flat_hash_map<int64_t, int64_t> counts;
  const std::string column = slices->front().column;
  for (const pqxx::row& row :
       tx.exec(absl::StrCat("SELECT ", column, ", count(*) FROM ", DataValueSourceSql(scope),
                            " WHERE ", BuildDataValueWhereSql(scope), " GROUP BY 1"))) {
    counts[std::strtoll(row[0].c_str(), nullptr, 10)] = std::strtoll(row[1].c_str(), nullptr, 10);
  }
  int64_t skipped = 0;
  size_t first = 0;
  for (; first < slices->size(); ++first) {
    int64_t rows = 0;
    for (const int64_t id : (*slices)[first].ids) {
      auto it = counts.find(id);
      if (it != counts.end()) rows += it->second;
    }
    if (skipped + rows > offset) break;
    skipped += rows;
  }
  slices->erase(slices->begin(), slices->begin() + static_cast<std::ptrdiff_t>(first));
  if (!slices->empty()) slices->front().offset = offset - skipped;
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
  std::vector<KeySlice> slices = Batch(groups);
  SkipOffset(tx, scope, &slices);
  return slices;
}

}  // namespace dvexport::db
