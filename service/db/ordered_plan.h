#ifndef DVEXPORT_SERVICE_DB_ORDERED_PLAN_H_
#define DVEXPORT_SERVICE_DB_ORDERED_PLAN_H_

// Reading an ordered export (DHIS2 2.43 orders every export) without sorting all of it before
// the first row: slices on the order's leading key, read one after the other
// (docs/PERFORMANCE.md, "Ordered exports").

#include <cstddef>
#include <cstdint>
#include <memory>
#include <pqxx/transaction_base>
#include <vector>

#include "service/db/export_scope.h"
#include "service/db/read_session_options.h"
#include "service/db/slice_sorter.h"

namespace dvexport::db {

// The slices of an ordered export, handed out in turn (PlanOrderedReads). The leading key's
// groups (a period's dates for PE, one UID for DE and AOC, one path for OU) are read in their
// order, a slice never splitting one, so that slices read in turn give the export's order.
//
// When periods or data elements lead (the primary key's first two columns, DHIS2's default order
// among them), each slice is read by the primary key and sorted by dvexport (SliceSorter, with
// ranks()): the first slice is the first group, and the next ones are sized from the bytes the
// ones before held, towards ReadPlanOptions::sorted_slice_target_bytes. Otherwise PostgreSQL
// sorts: the first group alone (its rows come after one small sort), then every other group in
// one slice (a slice of a key no index leads with costs a scan of the table: more slices cost
// more than the sorts they spare); CREATED leading, one slice of the whole scope.
class OrderedReads {
 public:
  OrderedReads() = default;

  // The next slice, with the plan's offset on the first; false at the end. The scope's limit is
  // left to the reader (it gives each slice what remains).
  bool Next(KeySlice* slice);

  // After a slice sorted here: the bytes it held (SliceSorter::bytes); they size the next slice.
  void SliceRead(size_t bytes);
  // After a slice sorted here outgrew its sorter: true when it had several groups, which Next
  // then hands out again in smaller slices (no slice after it gets as many groups); false for one
  // group, which must be read sorted by PostgreSQL.
  bool SliceOutgrown();

  // The ranks slices sorted here are sorted by; null when PostgreSQL sorts.
  const OrderRanks* ranks() const { return ranks_.get(); }

 private:
  friend OrderedReads PlanOrderedReads(pqxx::transaction_base& tx, const ExportScope& scope,
                                       const ReadPlanOptions& options);

  const char* column_ = nullptr;  // null: one slice of every row
  std::vector<std::vector<int64_t>> groups_;
  size_t next_group_ = 0;
  size_t first_group_ = 0;  // the first after the offset
  int64_t offset_ = 0;      // rows of the first slice to skip
  bool done_ = false;
  std::shared_ptr<const OrderRanks> ranks_;
  size_t target_bytes_ = 0;
  size_t groups_per_slice_ = 1;
  size_t last_groups_ = 0;
  size_t max_groups_ = SIZE_MAX;  // half the groups of the last slice that outgrew its sorter
};

// The reads of "scope" (whose order is not empty). With an offset, one count per leading key (a
// scan, as a count costs) drops the groups wholly before it, and the first slice skips the rest;
// nothing, when the offset is past the end. Raises work_mem for the transaction to 64 MB where
// it is lower, so that PostgreSQL's sorts stay in memory longer. Database errors are libpqxx's
// exceptions.
OrderedReads PlanOrderedReads(pqxx::transaction_base& tx, const ExportScope& scope,
                              const ReadPlanOptions& options);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_ORDERED_PLAN_H_
