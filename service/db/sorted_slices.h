#ifndef DVEXPORT_SERVICE_DB_SORTED_SLICES_H_
#define DVEXPORT_SERVICE_DB_SORTED_SLICES_H_

// Reading an ordered export whose slices dvexport sorts (OrderedReads::ranks()) on two threads:
// a fetcher reads the next slice's COPY into a sorter and sorts it while the caller's thread
// writes the slice before (docs/PERFORMANCE.md, "Ordered exports"). One connection: the fetcher
// is the only one to use it, but for a slice that outgrew its sorter, which the caller's thread
// reads sorted by PostgreSQL while the fetcher waits.

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
  // Reads "slice"'s rows into "*sorter" (Reset by the caller). Between lines it checks "stop",
  // and abandons the COPY once it is set (then any status).
  absl::FunctionRef<absl::Status(const KeySlice& slice, SliceSorter* sorter,
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

// Reads every slice of "*reads" (ranks() not null) in turn and hands their rows to "row" in the
// export's order, the plan's offset skipped and "limit" kept. With "sorters" of 2, the next slice
// is read and sorted on a thread of its own while "row" is called for the one before; with 1,
// the two take turns. At most "sorters" sorters of "max_bytes_each" are held. Returns the first
// failure (the writer's first: Cancelled when "row" returned false), after the fetcher stopped.
absl::Status ReadSortedSlices(OrderedReads* reads, int sorters, size_t max_bytes_each,
                              std::optional<int64_t> limit, const IdentifierTables& tables,
                              const SortedSliceSource& source, RowSink row);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_SORTED_SLICES_H_
