#ifndef DVEXPORT_SERVICE_DB_ORDERED_PLAN_H_
#define DVEXPORT_SERVICE_DB_ORDERED_PLAN_H_

// Reading an ordered export (DHIS2 2.43 orders every export) without sorting all of it before
// the first row: slices on the order's leading key, each sorted by PostgreSQL on its own and read
// one after the other (docs/PERFORMANCE.md, "Ordered exports").

#include <cstdint>
#include <pqxx/transaction_base>
#include <vector>

#include "service/db/export_scope.h"

namespace dvexport::db {

// The slices of "scope" (whose order is not empty), in the order's leading key's order: the
// first group of the leading key alone (a period's dates for PE, one UID for DE and AOC, one path
// for OU), so that the first rows come after a small sort, then every other group in one slice
// (a slice of a key no index leads with costs a scan of the table: more slices cost more than
// the sorts they spare). CREATED leads: one slice, the whole scope. A slice never splits a
// group, so slices read in turn give the export's order. With an offset, one count per leading
// key (a scan, as a count costs) drops the groups wholly before it, and the one slice left skips
// the rest; nothing, when the offset is past the end. The scope's limit is left to the reader
// (it gives each slice what remains). Raises work_mem for the transaction to 64 MB where it is
// lower, so that the sorts stay in memory longer. Database errors are libpqxx's exceptions.
std::vector<KeySlice> PlanOrderedSlices(pqxx::transaction_base& tx, const ExportScope& scope);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_ORDERED_PLAN_H_
