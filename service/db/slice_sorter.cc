#include "service/db/slice_sorter.h"

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

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

constexpr size_t kHugePage = size_t{2} << 20;

size_t TextCapacity(size_t max_bytes) {
  return (max_bytes + kHugePage - 1) / kHugePage * kHugePage;
}

// "max_bytes" of address space for a sorter's lines, aligned to and advised for huge pages.
char* AllocateText(size_t max_bytes) {
  const size_t capacity = TextCapacity(std::max<size_t>(max_bytes, 1));
  void* text = std::aligned_alloc(kHugePage, capacity);
  if (text == nullptr) throw std::bad_alloc();
  // Advice only: without transparent huge pages the lines sit in 4 KB pages, as before.
  madvise(text, capacity, MADV_HUGEPAGE);
  return static_cast<char*>(text);
}

bool ParseId(std::string_view text, int64_t* id) {
  const char* end = text.data() + text.size();
  auto [p, error] = std::from_chars(text.data(), end, *id);
  return error == std::errc() && p == end;
}

}  // namespace

void SliceSorter::FreeText::operator()(char* text) const { std::free(text); }

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
    text_size_ = 0;
    keys_.clear();
    return false;
  }
  if (text_ == nullptr) {
    // Address space only: pages are touched as lines come, and never moved by growth.
    text_.reset(AllocateText(max_bytes_));
    keys_.reserve(max_bytes_ / sizeof(Key));
  }
  key.offset = static_cast<uint32_t>(text_size_);
  key.length = static_cast<uint32_t>(line.size());
  std::memcpy(text_.get() + text_size_, line.data(), line.size());
  text_size_ += line.size();
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
