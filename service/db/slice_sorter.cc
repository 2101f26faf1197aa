#include "service/db/slice_sorter.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "service/db/data_value_line_parser.h"

namespace dvexport::db {
namespace {

// The columns of a line that the order reads (BuildDataValueSelectSql's): the five ids, then
// value and stored_by, then created.
constexpr int kIdColumns = 5;
constexpr int kCreatedColumn = 7;

// Column of each order key's id (kCreated: none).
int IdColumn(dhis2::OrderKey key) {
  switch (key) {
    case dhis2::OrderKey::kDe:
      return 0;
    case dhis2::OrderKey::kPe:
      return 1;
    case dhis2::OrderKey::kOu:
      return 2;
    case dhis2::OrderKey::kAoc:
      return 4;
    case dhis2::OrderKey::kCreated:
      break;
  }
  return -1;
}

bool ParseId(std::string_view text, int64_t* id) {
  const char* end = text.data() + text.size();
  auto [p, error] = std::from_chars(text.data(), end, *id);
  return error == std::errc() && p == end;
}

}  // namespace

SliceSorter::SliceSorter(const OrderRanks* ranks, size_t max_bytes)
    : ranks_(ranks),
      max_bytes_(max_bytes),
      key_fields_(static_cast<int>(ranks->order.size()) + kIdColumns) {}

bool SliceSorter::KeyOf(std::string_view line, Key* key) const {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  // The first eight fields; COPY writes a tab inside a field as "\t", so every tab separates.
  std::string_view fields[kCreatedColumn + 1];
  size_t begin = 0;
  for (int i = 0; i <= kCreatedColumn; ++i) {
    const size_t tab = line.find('\t', begin);
    if (tab == std::string_view::npos) return false;
    fields[i] = line.substr(begin, tab - begin);
    begin = tab + 1;
  }
  int64_t ids[kIdColumns];
  for (int i = 0; i < kIdColumns; ++i) {
    if (!ParseId(fields[i], &ids[i])) return false;
  }
  const size_t keys = ranks_->order.size();
  for (size_t k = 0; k < keys; ++k) {
    const dhis2::OrderKey order_key = ranks_->order[k];
    if (order_key == dhis2::OrderKey::kCreated) {
      if (fields[kCreatedColumn] == "\\N") {
        key->fields[k] = std::numeric_limits<int64_t>::max();  // NULLS LAST
      } else if (!ParseCopyTimestamp(fields[kCreatedColumn], &key->fields[k]).ok()) {
        return false;
      }
      continue;
    }
    const auto& ranks = ranks_->ranks[k];
    const auto it = ranks.find(ids[IdColumn(order_key)]);
    if (it == ranks.end()) return false;
    key->fields[k] = it->second;
  }
  std::copy(ids, ids + kIdColumns, key->fields + keys);
  return true;
}

bool SliceSorter::Add(std::string_view line) {
  if (!ok_) return false;
  Key key;
  if (line.size() > std::numeric_limits<uint32_t>::max() ||
      bytes() + line.size() + sizeof(Key) > max_bytes_ || !KeyOf(line, &key)) {
    ok_ = false;
    text_.clear();
    keys_.clear();
    return false;
  }
  if (keys_.empty() && text_.capacity() < max_bytes_) {
    // Address space only: pages are touched as lines come, and never moved by growth.
    text_.reserve(max_bytes_);
    keys_.reserve(max_bytes_ / sizeof(Key));
  }
  key.offset = static_cast<uint32_t>(text_.size());
  key.length = static_cast<uint32_t>(line.size());
  text_.append(line);
  keys_.push_back(key);
  return true;
}

void SliceSorter::Sort() {
  const int n = key_fields_;
  std::sort(keys_.begin(), keys_.end(), [n](const Key& a, const Key& b) {
    return std::lexicographical_compare(a.fields, a.fields + n, b.fields, b.fields + n);
  });
}

}  // namespace dvexport::db
