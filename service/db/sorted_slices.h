#ifndef DVEXPORT_SERVICE_DB_SORTED_SLICES_H_
#define DVEXPORT_SERVICE_DB_SORTED_SLICES_H_

// Reading an ordered export whose slices dvexport sorts (OrderedReads::ranks()): a fetcher reads
// the next slice's COPY into a sorter and sorts it while the caller's thread writes the slice
// before (docs/PERFORMANCE.md, "Ordered exports"). With two parts, each slice is read in two
// parts (KeySlice::part) at once, the second on a thread and connection of its own in the same
// snapshot, and the caller's thread merges them. The fetchers are the only ones to use their
// connections, but for a slice that outgrew its sorters, which the caller's thread reads sorted by
// PostgreSQL on the first connection while the fetcher waits.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "service/db/data_value_line_parser.h"
#include "service/db/export_scope.h"
#include "service/db/ordered_plan.h"
#include "service/db/slice_sorter.h"
#include "service/encode/data_value_row.h"

namespace dvexport::db {

using RowSink = absl::FunctionRef<bool(const encode::DataValueRow&)>;

// What ReadSortedSlices reads with, each on the session's connection (never at once).
struct SortedSliceSource {
  // Reads part "part" of "slice"'s rows (KeySlice::part, of ReadSortedSlices' "parts") into
  // "*sorter" (Reset by the caller), on that part's connection. Between lines it checks "stop",
  // and abandons the COPY once it is set (then any status). Parts are read at once, from
  // threads of their own.
  absl::FunctionRef<absl::Status(const KeySlice& slice, int part, SliceSorter* sorter,
                                 const std::atomic<bool>& stop)>
      fill;
  // Streams "slice" (a slice that outgrew its sorter, given with sort_here false: PostgreSQL
  // sorts it) to "row".
  absl::FunctionRef<absl::Status(const KeySlice& slice, RowSink row)> stream_sorted_there;
  // Not OK once the session stopped (Cancel, the deadline): asked before each slice and every
  // kStopCheckRows rows written from memory, where no statement runs that the watchdog could end.
  absl::FunctionRef<absl::Status()> stopped;
};

inline constexpr size_t kStopCheckRows = 1024;

// How ReadSortedSlices holds and reads slices.
struct SortedSliceShape {
  // 2: the next slice is read and sorted while "row" is called for the one before; 1: the two
  // take turns.
  int slices_ahead = 2;
  // Parts each slice is read in at once (1 or 2; SortedSliceSource::fill's connections).
  int parts = 1;
  // At most slices_ahead * parts sorters of this many bytes are held.
  size_t max_bytes_each = size_t{16} << 20;
};

// Reads every slice of "*reads" (ranks() not null) in turn and hands their rows to "row" in the
// export's order, the plan's offset skipped and "limit" kept; calls "before_wait" whenever the
// next slice is not read yet, before waiting for it. Returns the first failure (the writer's
// first: Cancelled when "row" returned false), after the fetchers stopped.
absl::Status ReadSortedSlices(OrderedReads* reads, const SortedSliceShape& shape,
                              std::optional<int64_t> limit, const IdentifierTables& tables,
                              const SortedSliceSource& source, RowSink row,
                              absl::FunctionRef<void()> before_wait);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_SORTED_SLICES_H_
