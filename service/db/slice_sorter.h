#ifndef DVEXPORT_SERVICE_DB_SLICE_SORTER_H_
#define DVEXPORT_SERVICE_DB_SLICE_SORTER_H_

// Sorting one slice of an ordered export (DHIS2 2.43's order) in memory, from the lines of its
// COPY: PostgreSQL then reads the slice by an index without a sort of its own, and the order is
// compared on integers. Each text key (a period's dates, a UID, a path) is replaced by its rank
// among the scope's objects, read once per export with PostgreSQL's own ORDER BY (its collation),
// so that the order is exactly the one OrderBySql asks PostgreSQL for.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "service/dhis2/export_request_validator.h"

namespace dvexport::db {

// The ranks of an order's keys: per key of "order", the rank of each id of that key's column
// (objects whose key is equal share a rank). Unused for kCreated, which compares the timestamp.
struct OrderRanks {
  std::vector<dhis2::OrderKey> order;
  std::vector<absl::flat_hash_map<int64_t, int64_t>> ranks;  // one per key of "order"
};

// The lines of one slice, kept in memory up to a bound, then in the order of "ranks": the ranks
// of the order's keys (created: the timestamp, NULL last as PostgreSQL sorts it ascending), then
// the value's key (data element, period, org unit, category option combo, attribute option
// combo ids), as OrderBySql.
//
// Each line's key is read in one pass over its first fields, and kept twice: in full (the order's
// keys and the five ids, compared only where two lines tie on the rest), just before the line,
// and as the first of those keys packed into two unsigned words, in an Entry of 24 bytes with the
// line's place (a whole key is up to 80). The entries are sorted by a radix sort of their words,
// then by full key where their words tie. Keys and lines fill one block of max_bytes from its
// start, the entries (and the radix sort's second array) from its end, so that the pages a sorter
// ever touches stay within its bound; the block outlives the sorter: a process keeps a few for the
// next sorters (SliceSorter::kCachedBlocks), which then neither fault nor zero pages.
class SliceSorter {
 public:
  // "*ranks" must outlive the sorter.
  SliceSorter(const OrderRanks* ranks, size_t max_bytes);
  ~SliceSorter();
  SliceSorter(SliceSorter&& other) noexcept;
  SliceSorter(const SliceSorter&) = delete;
  SliceSorter& operator=(const SliceSorter&) = delete;
  SliceSorter& operator=(SliceSorter&&) = delete;

  // Slices of fewer lines are sorted by std::sort, the others by a radix sort.
  static constexpr size_t kRadixSortFrom = 512;
  // Blocks of memory a process keeps for sorters to come, at most.
  static constexpr size_t kCachedBlocks = 4;

  // Forgets every line, keeping the memory for the next slice.
  void Reset() {
    text_size_ = 0;
    size_ = 0;
    entries_ = entries_end_;
    ok_ = true;
  }

  // Keeps "line" (a COPY text line of kDataValueColumns fields, its '\n' optional). False, and
  // nothing kept from then on (until Reset), when the lines outgrow the bound, or a line cannot be
  // keyed here (an id without a rank, a NULL id, a timestamp that is not finite): the slice must
  // then be sorted by PostgreSQL.
  bool Add(std::string_view line);

  // Whether every line was kept.
  bool ok() const { return ok_; }
  // The bytes held: the lines, their keys and two entries each.
  size_t bytes() const { return text_size_ + size_ * 2 * sizeof(Entry); }
  size_t size() const { return size_; }

  // Sorts the lines kept; then Line(i) is the i-th in the order.
  void Sort();
  std::string_view Line(size_t i) const {
    return std::string_view(block_ + entries_[i].offset, entries_[i].length);
  }
  // Asks the CPU for the first bytes of Line(i) (if there is one), which the writer reads a few
  // lines later: sorted lines lie anywhere in the slice's text, where each read would otherwise
  // wait for memory.
  void Prefetch(size_t i) const {
    if (i >= size_) return;
    const char* line = block_ + entries_[i].offset;
    for (uint32_t at = 0; at < entries_[i].length && at < 256; at += 64) PrefetchLine(line + at);
  }
  // Whether line "i" of "a" comes before line "j" of "b" in the order (sorters of the same ranks,
  // sorted): how the parts of a slice are merged.
  static bool Before(const SliceSorter& a, size_t i, const SliceSorter& b, size_t j) {
    return a.Less(a.entries_[i], b.entries_[j], b);
  }

 private:
  // GCC 12 drops a __builtin_prefetch whose address it computed from a load here (as if it were
  // dead code): x86's instruction is written out.
  static void PrefetchLine(const char* at) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetcht0 %0" : : "m"(*at));
#else
    __builtin_prefetch(at);
#endif
  }

  // kMaxOrderKeys (at most the five order keys) then the five ids.
  static constexpr int kMaxOrderKeys = 5;
  static constexpr int kMaxKeyFields = kMaxOrderKeys + 5;

  // A line in the sort: its key's leading fields packed (PackedField), and where the line is (its
  // full key just before it).
  struct Entry {
    uint64_t words[2];
    uint32_t offset;  // from block_
    uint32_t length;
  };

  // Where each of the key's leading fields goes in Entry::words: fields of 32 bits (ranks) share a
  // word, fields of 64 bits (created, ids, ranks past 32 bits) take one of their own, biased so
  // that unsigned order is signed order. Fields that do not fit are compared in the full key.
  struct PackedField {
    int word;
    int shift;  // 32: the word's upper half, or 0
    bool wide;
  };

  // Reads the key of "line" into "key" (key_fields_ of them); false where it cannot.
  bool KeyOf(std::string_view line, int64_t* key);
  void Pack(const int64_t* key, Entry* entry) const;
  // Whether "x" (of this sorter) comes before "y" (of "other", of the same ranks).
  bool Less(const Entry& x, const Entry& y, const SliceSorter& other) const {
    if (x.words[0] != y.words[0]) return x.words[0] < y.words[0];
    if (x.words[1] != y.words[1]) return x.words[1] < y.words[1];
    const int64_t* a = KeyAt(x);
    const int64_t* b = other.KeyAt(y);
    return std::lexicographical_compare(a, a + key_fields_, b, b + key_fields_);
  }
  const int64_t* KeyAt(const Entry& entry) const {
    return reinterpret_cast<const int64_t*>(block_ + entry.offset - key_bytes_);
  }
  void Fail();
  size_t BlockSize() const;

  const OrderRanks* const ranks_;
  const size_t max_bytes_;
  int key_fields_;    // ranks_->order.size() + 5
  size_t key_bytes_;  // key_fields_ of 8 bytes
  PackedField packing_[kMaxKeyFields];
  int packed_fields_ = 0;
  // The last id looked up for each order key, and its rank: neighbouring lines mostly share them.
  bool looked_up_[kMaxOrderKeys];
  int64_t last_id_[kMaxOrderKeys];
  int64_t last_rank_[kMaxOrderKeys];
  // The block (max_bytes_, rounded up to 2 MB), in transparent huge pages where the kernel gives
  // them: the writer reads the sorted lines from anywhere in it, and with 4 KB pages nearly every
  // line cost a TLB miss as well as a cache miss. Null until the first line. From its start, each
  // line's key then the line, 8-byte aligned (text_size_ bytes); below entries_end_ (max_bytes_
  // rounded down to 8), the entries, the newest lowest; Sort takes as many again below them.
  char* block_ = nullptr;
  Entry* entries_end_ = nullptr;
  Entry* entries_ = nullptr;  // size_ entries: in the order of the lines once sorted
  size_t text_size_ = 0;
  size_t size_ = 0;
  bool ok_ = true;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_SLICE_SORTER_H_
