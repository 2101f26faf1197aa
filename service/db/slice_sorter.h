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
#include <memory>
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
class SliceSorter {
 public:
  // "*ranks" must outlive the sorter.
  SliceSorter(const OrderRanks* ranks, size_t max_bytes);

  // Forgets every line, keeping the memory for the next slice (no page faults, no copies as it
  // grows again).
  void Reset() {
    text_size_ = 0;
    keys_.clear();
    ok_ = true;
  }

  // Keeps "line" (a COPY text line of kDataValueColumns fields, its '\n' optional). False, and
  // nothing kept from then on (until Reset), when the lines outgrow the bound, or a line cannot be
  // keyed here (an id without a rank, a NULL id, a timestamp that is not finite): the slice must
  // then be sorted by PostgreSQL.
  bool Add(std::string_view line);

  // Whether every line was kept.
  bool ok() const { return ok_; }
  // The bytes held: the lines and their keys.
  size_t bytes() const { return text_size_ + keys_.size() * sizeof(Key); }
  size_t size() const { return keys_.size(); }

  // Sorts the lines kept; then Line(i) is the i-th in the order.
  void Sort();
  std::string_view Line(size_t i) const {
    return std::string_view(text_.get() + keys_[i].offset, keys_[i].length);
  }
  // Asks the CPU for the first bytes of Line(i) (if there is one), which the writer reads a few
  // lines later: sorted lines lie anywhere in the slice's text, where each read would otherwise
  // wait for memory.
  void Prefetch(size_t i) const {
    if (i >= keys_.size()) return;
    const char* line = text_.get() + keys_[i].offset;
    for (uint32_t at = 0; at < keys_[i].length && at < 256; at += 64) PrefetchLine(line + at);
  }
  // Whether line "i" of "a" comes before line "j" of "b" in the order (sorters of the same ranks,
  // sorted): how the parts of a slice are merged.
  static bool Before(const SliceSorter& a, size_t i, const SliceSorter& b, size_t j) {
    const int64_t* x = a.keys_[i].fields;
    const int64_t* y = b.keys_[j].fields;
    return std::lexicographical_compare(x, x + a.key_fields_, y, y + a.key_fields_);
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
  struct Key {
    int64_t fields[kMaxOrderKeys + 5];
    uint32_t offset;
    uint32_t length;
  };

  bool KeyOf(std::string_view line, Key* key) const;

  const OrderRanks* const ranks_;
  const size_t max_bytes_;
  int key_fields_;  // ranks_->order.size() + 5
  // The lines, end to end: max_bytes_ of address space (rounded up to 2 MB), in transparent huge
  // pages where the kernel gives them: the writer reads the sorted lines from anywhere in it, and
  // with 4 KB pages nearly every line cost a TLB miss as well as a cache miss.
  struct FreeText {
    void operator()(char* text) const;
  };
  std::unique_ptr<char[], FreeText> text_;
  size_t text_size_ = 0;
  std::vector<Key> keys_;
  bool ok_ = true;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_SLICE_SORTER_H_
