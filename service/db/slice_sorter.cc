#include "service/db/slice_sorter.h"

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "service/db/data_value_line_parser.h"

namespace dvexport::db {
namespace {

// The columns of a line that the order reads (BuildDataValueSelectSql's): the five ids, then
// value and stored_by, then created.
constexpr int kIdColumns = 5;

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

size_t RoundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

// The blocks sorters left behind, for the next ones (SliceSorter::kCachedBlocks at most).
struct BlockCache {
  std::mutex mu;
  std::vector<std::pair<size_t, char*>> blocks ABSL_GUARDED_BY(mu);  // size, block
};

BlockCache& Cache() {
  static BlockCache* const cache = new BlockCache;  // never destroyed: sorters outlive statics
  return *cache;
}

// A block of "size" bytes (a multiple of kHugePage), kept by an earlier sorter or aligned to and
// advised for huge pages.
char* TakeBlock(size_t size) {
  {
    BlockCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    for (auto it = cache.blocks.begin(); it != cache.blocks.end(); ++it) {
      if (it->first != size) continue;
      char* const block = it->second;
      cache.blocks.erase(it);
      return block;
    }
  }
  void* block = std::aligned_alloc(kHugePage, size);
  if (block == nullptr) throw std::bad_alloc();
  // Advice only: without transparent huge pages the lines sit in 4 KB pages.
  madvise(block, size, MADV_HUGEPAGE);
  return static_cast<char*>(block);
}

void GiveBackBlock(char* block, size_t size) {
  {
    BlockCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    if (cache.blocks.size() < SliceSorter::kCachedBlocks) {
      cache.blocks.emplace_back(size, block);
      return;
    }
  }
  std::free(block);
}

// Reads an id's decimal digits and the tab after them, moving "*p" past the tab. A field of another
// form (NULL, a sign, 19 digits or more) is read by std::from_chars; false where it is no id.
[[gnu::always_inline]] inline bool ReadId(const char** p, const char* end, int64_t* id) {
  const char* const start = *p;
  const char* at = start;
  uint64_t value = 0;
  for (; at < end; ++at) {
    const unsigned digit = static_cast<unsigned char>(*at) - '0';
    if (digit > 9) break;
    value = value * 10 + digit;
  }
  if (at < end && *at == '\t' && at > start && at - start <= 18) {
    *id = static_cast<int64_t>(value);
    *p = at + 1;
    return true;
  }
  const char* const tab = static_cast<const char*>(std::memchr(start, '\t', end - start));
  if (tab == nullptr) return false;
  auto [parsed, error] = std::from_chars(start, tab, *id);
  if (error != std::errc() || parsed != tab) return false;
  *p = tab + 1;
  return true;
}

// Moves "*p" past the next tab; false if there is none.
[[gnu::always_inline]] inline bool SkipField(const char** p, const char* end) {
  const char* const tab = static_cast<const char*>(std::memchr(*p, '\t', end - *p));
  if (tab == nullptr) return false;
  *p = tab + 1;
  return true;
}

}  // namespace

SliceSorter::SliceSorter(const OrderRanks* ranks, size_t max_bytes)
    : ranks_(ranks),
      max_bytes_(max_bytes),
      key_fields_(static_cast<int>(ranks->order.size()) + kIdColumns),
      key_bytes_(key_fields_ * sizeof(int64_t)) {
  // Halves of Entry::words, in order: a rank takes one, any other field an aligned pair.
  int half = 0;
  for (int f = 0; f < key_fields_; ++f) {
    const bool narrow =
        f < static_cast<int>(ranks->order.size()) && ranks->order[f] != dhis2::OrderKey::kCreated;
    if (!narrow) half = RoundUp(half, 2);
    if (half + (narrow ? 1 : 2) > 4) break;
    packing_[f] = {half / 2, narrow && half % 2 == 0 ? 32 : 0, !narrow};
    half += narrow ? 1 : 2;
    packed_fields_ = f + 1;
  }
  std::fill(std::begin(looked_up_), std::end(looked_up_), false);
}

SliceSorter::~SliceSorter() {
  if (block_ != nullptr) GiveBackBlock(block_, BlockSize());
}

SliceSorter::SliceSorter(SliceSorter&& other) noexcept
    : ranks_(other.ranks_),
      max_bytes_(other.max_bytes_),
      key_fields_(other.key_fields_),
      key_bytes_(other.key_bytes_),
      packed_fields_(other.packed_fields_),
      block_(std::exchange(other.block_, nullptr)),
      entries_end_(other.entries_end_),
      entries_(other.entries_),
      text_size_(other.text_size_),
      size_(other.size_),
      ok_(other.ok_) {
  std::copy(std::begin(other.packing_), std::end(other.packing_), packing_);
  std::fill(std::begin(looked_up_), std::end(looked_up_), false);
}

size_t SliceSorter::BlockSize() const {
  return RoundUp(std::max<size_t>(max_bytes_, 1), kHugePage);
}

bool SliceSorter::KeyOf(std::string_view line, int64_t* key) {
  const char* p = line.data();
  const char* const end = p + line.size();
  // COPY writes a tab inside a field as "\t", so every tab separates.
  int64_t ids[kIdColumns];
  for (int64_t& id : ids) {
    if (!ReadId(&p, end, &id)) return false;
  }
  const size_t keys = ranks_->order.size();
  for (size_t k = 0; k < keys; ++k) {
    const dhis2::OrderKey order_key = ranks_->order[k];
    if (order_key == dhis2::OrderKey::kCreated) {
      // value and stored_by, then created up to its tab.
      const char* created = p;
      if (!SkipField(&created, end) || !SkipField(&created, end)) return false;
      const char* const tab = static_cast<const char*>(std::memchr(created, '\t', end - created));
      if (tab == nullptr) return false;
      const std::string_view text(created, tab - created);
      if (text == "\\N") {
        key[k] = std::numeric_limits<int64_t>::max();  // NULLS LAST
      } else if (!ParseCopyTimestamp(text, &key[k]).ok()) {
        return false;
      }
      continue;
    }
    const int64_t id = ids[IdColumn(order_key)];
    if (!looked_up_[k] || last_id_[k] != id) {
      const auto& ranks = ranks_->ranks[k];
      const auto it = ranks.find(id);
      // A rank of 32 bits or more (never: ranks count the scope's objects) could not be packed.
      if (it == ranks.end() || it->second < 0 || it->second > UINT32_MAX) return false;
      looked_up_[k] = true;
      last_id_[k] = id;
      last_rank_[k] = it->second;
    }
    key[k] = last_rank_[k];
  }
  std::copy(ids, ids + kIdColumns, key + keys);
  return true;
}

void SliceSorter::Pack(const int64_t* key, Entry* entry) const {
  entry->words[0] = 0;
  entry->words[1] = 0;
  for (int f = 0; f < packed_fields_; ++f) {
    const PackedField& field = packing_[f];
    const uint64_t value = field.wide ? static_cast<uint64_t>(key[f]) ^ (uint64_t{1} << 63)
                                      : static_cast<uint64_t>(key[f]);
    entry->words[field.word] |= value << field.shift;
  }
}

void SliceSorter::Fail() {
  ok_ = false;
  text_size_ = 0;
  size_ = 0;
  entries_ = entries_end_;
}

bool SliceSorter::Add(std::string_view line) {
  if (!ok_) return false;
  // The line's key and text, then its two entries, within the bound (below entries_end_); Entry's
  // offsets and lengths are of 32 bits.
  const size_t text = RoundUp(key_bytes_ + line.size(), alignof(Entry));
  const size_t bound = max_bytes_ / alignof(Entry) * alignof(Entry);
  if (text_size_ + text > std::numeric_limits<uint32_t>::max() ||
      text_size_ + text + (size_ + 1) * 2 * sizeof(Entry) > bound) {
    Fail();
    return false;
  }
  if (block_ == nullptr) {
    // Address space only: pages are touched as lines come.
    block_ = TakeBlock(BlockSize());
    entries_end_ = reinterpret_cast<Entry*>(block_ + bound);
    entries_ = entries_end_;
  }
  int64_t* const key = reinterpret_cast<int64_t*>(block_ + text_size_);
  if (!KeyOf(line, key)) {
    Fail();
    return false;
  }
  Entry* const entry = --entries_;
  Pack(key, entry);
  entry->offset = static_cast<uint32_t>(text_size_ + key_bytes_);
  entry->length = static_cast<uint32_t>(line.size());
  std::memcpy(block_ + entry->offset, line.data(), line.size());
  text_size_ += text;
  ++size_;
  return true;
}

void SliceSorter::Sort() {
  const auto less = [this](const Entry& a, const Entry& b) { return Less(a, b, *this); };
  if (size_ < kRadixSortFrom) {
    std::sort(entries_, entries_ + size_, less);
    return;
  }
  // A least significant digit radix sort of the entries' words, a byte at a time, each byte that
  // differs between entries (in a slice, the period's rank and a created timestamp's upper bytes
  // mostly do not), from one array of entries into the other: stable, so the words' order
  // results. Then the entries whose words tie are sorted by their full keys.
  uint64_t all_ones[2] = {~uint64_t{0}, ~uint64_t{0}};
  uint64_t any_ones[2] = {0, 0};
  for (size_t i = 0; i < size_; ++i) {
    for (int w = 0; w < 2; ++w) {
      all_ones[w] &= entries_[i].words[w];
      any_ones[w] |= entries_[i].words[w];
    }
  }
  // The second array lies just below the entries (Add kept room for it).
  Entry* spare_entries = entries_ - size_;
  for (int w = 1; w >= 0; --w) {
    const uint64_t varying = all_ones[w] ^ any_ones[w];
    for (int shift = 0; shift < 64; shift += 8) {
      if (((varying >> shift) & 0xff) == 0) continue;
      size_t at[256] = {};
      for (size_t i = 0; i < size_; ++i) ++at[(entries_[i].words[w] >> shift) & 0xff];
      size_t sum = 0;
      for (size_t& count : at) sum += std::exchange(count, sum);
      for (size_t i = 0; i < size_; ++i) {
        spare_entries[at[(entries_[i].words[w] >> shift) & 0xff]++] = entries_[i];
      }
      std::swap(entries_, spare_entries);
    }
  }
  for (size_t begin = 0; begin < size_;) {
    size_t end = begin + 1;
    while (end < size_ && entries_[end].words[0] == entries_[begin].words[0] &&
           entries_[end].words[1] == entries_[begin].words[1]) {
      ++end;
    }
    if (end - begin > 1) std::sort(entries_ + begin, entries_ + end, less);
    begin = end;
  }
}

}  // namespace dvexport::db
