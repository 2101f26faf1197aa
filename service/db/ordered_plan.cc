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

// A key's objects in the key's order, grouped: the ids of one group share the key's value (a
// period's dates, a UID, a path) and compare equal in the order.
struct KeyGroups {
  const char* column = nullptr;
  std::vector<std::vector<int64_t>> groups;
};

// Rows of (id, key) in key order into groups of equal keys (a NULL key is a value of its own).
void GroupRows(const pqxx::result& result, KeyGroups* out) {
  std::string last;
  for (const pqxx::row& row : result) {
    std::string key = row[1].is_null() ? std::string("N") : "T";
    key.append(row[1].c_str(), row[1].size());
    if (out->groups.empty() || key != last) out->groups.emplace_back();
    out->groups.back().push_back(std::strtoll(row[0].c_str(), nullptr, 10));
    last = std::move(key);
  }
}

// The scope's objects of "key" (not kCreated) in the order PostgreSQL sorts them by the key's
// columns (OrderBySql's, in the database's collation).
KeyGroups KeyOrder(pqxx::transaction_base& tx, const ExportScope& scope, dhis2::OrderKey key) {
  KeyGroups groups;
  switch (key) {
    case dhis2::OrderKey::kPe:
      groups.column = kPeriodColumn;
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
      groups.column = kDataElementColumn;
      GroupRows(tx.exec(absl::StrCat("SELECT dataelementid, uid FROM dataelement "
                                     "WHERE dataelementid = ANY('",
                                     ToArrayLiteral(scope.data_element_ids),
                                     "'::bigint[]) ORDER BY uid")),
                &groups);
      break;
    case dhis2::OrderKey::kOu:
      groups.column = kOrgUnitColumn;
      GroupRows(
          tx.exec(absl::StrCat("SELECT organisationunitid, path FROM organisationunit "
                               "WHERE organisationunitid = ANY('",
                               ToArrayLiteral(scope.org_unit_ids), "'::bigint[]) ORDER BY path")),
          &groups);
      break;
    case dhis2::OrderKey::kAoc:
      groups.column = kAttributeOptionComboColumn;
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

// The ranks of every key of the scope's order.
std::shared_ptr<const OrderRanks> RanksOf(pqxx::transaction_base& tx, const ExportScope& scope,
                                          const KeyGroups& leading) {
  auto ranks = std::make_shared<OrderRanks>();
  ranks->order = scope.order;
  for (size_t k = 0; k < scope.order.size(); ++k) {
    auto& rank = ranks->ranks.emplace_back();
    if (scope.order[k] == dhis2::OrderKey::kCreated) continue;
    // The leading key's groups were read already.
    KeyGroups other;
    if (k > 0) other = KeyOrder(tx, scope, scope.order[k]);
    const auto& groups = k == 0 ? leading.groups : other.groups;
    for (size_t g = 0; g < groups.size(); ++g) {
      for (const int64_t id : groups[g]) rank[id] = static_cast<int64_t>(g);
    }
  }
  return ranks;
}

// With an offset: the first group not wholly before it (counted per leading key), and the rows
// of it to skip; groups.size() when the offset is past the end.
size_t FirstGroupAfter(pqxx::transaction_base& tx, const ExportScope& scope,
                       const KeyGroups& groups, int64_t offset, int64_t* rest) {
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
  *rest = offset - skipped;
  return first;
}

// Slices sorted here grow at most this much from one to the next: groups vary in size (a yearly
// period beside monthly ones), and a slice that outgrows its sorter is read twice.
constexpr size_t kMaxSliceGrowth = 2;

}  // namespace

bool OrderedReads::Next(KeySlice* slice) {
  *slice = KeySlice();
  if (done_) return false;
  if (column_ == nullptr) {
    slice->offset = offset_;
    done_ = true;
    return true;
  }
  if (next_group_ >= groups_.size()) return false;
  const size_t n = ranks_ ? std::min(groups_per_slice_, groups_.size() - next_group_)
                   : next_group_ == first_group_ ? 1
                                                 : groups_.size() - next_group_;
  slice->column = column_;
  slice->sort_here = ranks_ != nullptr;
  for (size_t i = next_group_; i < next_group_ + n; ++i) {
    slice->ids.insert(slice->ids.end(), groups_[i].begin(), groups_[i].end());
  }
  std::sort(slice->ids.begin(), slice->ids.end());
  slice->offset = next_group_ == first_group_ ? offset_ : 0;
  next_group_ += n;
  last_groups_ = n;
  return true;
}

void OrderedReads::SliceRead(size_t bytes) {
  // Groups for about the target, from the bytes per group of the slice just read, never more
  // than a slice that outgrew its sorter held.
  const size_t per_group = std::max<size_t>(1, bytes / std::max<size_t>(1, last_groups_));
  groups_per_slice_ = std::clamp<size_t>(target_bytes_ / per_group, 1,
                                         std::max<size_t>(1, last_groups_) * kMaxSliceGrowth);
  groups_per_slice_ = std::min(groups_per_slice_, max_groups_);
}

bool OrderedReads::SliceOutgrown() {
  if (last_groups_ <= 1) {
    groups_per_slice_ = 1;
    return false;
  }
  // Read again as two slices (or more, if they outgrow theirs too).
  next_group_ -= last_groups_;
  max_groups_ = std::max<size_t>(1, last_groups_ / 2);
  groups_per_slice_ = max_groups_;
  return true;
}

OrderedReads PlanOrderedReads(pqxx::transaction_base& tx, const ExportScope& scope,
                              const ReadPlanOptions& options) {
  const pqxx::row work_mem =
      tx.exec1("SELECT setting::bigint < 65536 FROM pg_settings WHERE name = 'work_mem'");
  if (work_mem[0].as<bool>()) tx.exec("SELECT set_config('work_mem', '64MB', true)");
  OrderedReads reads;
  const int64_t offset = scope.offset.value_or(0);
  KeyGroups groups = KeyOrder(tx, scope, scope.order.front());
  if (groups.column == nullptr) {
    reads.offset_ = offset;
    return reads;
  }
  reads.column_ = groups.column;
  if (offset > 0) {
    reads.next_group_ = FirstGroupAfter(tx, scope, groups, offset, &reads.offset_);
  }
  reads.first_group_ = reads.next_group_;
  const dhis2::OrderKey leading = scope.order.front();
  if (leading == dhis2::OrderKey::kPe || leading == dhis2::OrderKey::kDe) {
    reads.ranks_ = RanksOf(tx, scope, groups);
    reads.target_bytes_ = options.sorted_slice_target_bytes;
  }
  reads.groups_ = std::move(groups.groups);
  return reads;
}

}  // namespace dvexport::db
