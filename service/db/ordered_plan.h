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

// The slices of "scope" (whose order is not empty), in the order's leading key's order:
// - PE: the periods, grouped by (start date, end date), a slice of 1 group first, then 2, 4, ...
//   up to 16 groups: with the data element filter, PostgreSQL reads each through the datavalue
//   primary key (dataelementid, periodid, ...), so a slice costs its own rows;
// - DE: the data elements by UID in the database's collation, likewise (the key's first column);
// - OU (by path) and AOC (by UID): at most 4 slices, as no index leads with their column;
// - CREATED: one slice, the whole scope.
// A slice never splits the values of one key (a period's dates, a UID, a path), so slices read
// in turn give the export's order. The scope's offset is resolved here: with an offset, one
// count per leading key (a scan of the window, as a count costs) drops the slices before it and
// gives the first one kept its own offset. The scope's limit is left to the reader (it gives
// each slice what remains). Raises work_mem for the transaction to 64 MB where it is lower, so
// that a slice's sort stays in memory. Database errors are libpqxx's exceptions.
std::vector<KeySlice> PlanOrderedSlices(pqxx::transaction_base& tx, const ExportScope& scope);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_ORDERED_PLAN_H_
