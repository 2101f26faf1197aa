#ifndef DVEXPORT_SERVICE_DB_READ_PLAN_H_
#define DVEXPORT_SERVICE_DB_READ_PLAN_H_

#include <cstdint>
#include <optional>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "service/db/export_scope.h"
#include "service/db/read_session_options.h"

namespace dvexport::db {

// Reading one export with several COPYs at once. PostgreSQL turns the rows of a COPY into its
// output on one core, and that is most of an export's database time (on the sl demo: 0.14 s to
// scan and filter 1,000,000 rows, 0.75 s more to send them as COPY). Slices of the table
// read on several connections whose transactions share one snapshot (pg_export_snapshot) use
// more cores and see exactly the rows one COPY would.

// The slices of the datavalue table to read the scope from, in table order; a single nullopt
// slice means one COPY of the whole table. Splits only what PostgreSQL would read with a
// sequential scan anyway (the top of the plan of the scope's query), for at least
// "options.min_rows" estimated rows (a delta, scope.changes_only: rows in the table, since it
// scans them all), when datavalue is a plain table (on a primary or a hot standby: PostgreSQL
// 10+ exports and imports snapshots on both); each slice then becomes a TID Range Scan
// (PostgreSQL 14+; older servers filter a sequential scan by ctid, which still splits the output
// work). Runs in "tx", the export's transaction. Reads only the catalog unless the table is large
// enough. Database errors are libpqxx's exceptions.
std::vector<std::optional<BlockRange>> PlanBlockSlices(pqxx::transaction_base& tx,
                                                       const ExportScope& scope,
                                                       const ReadPlanOptions& options);

// Exports the snapshot of "tx" (pg_export_snapshot()) and returns its id, for
// SetTransactionSnapshotSql on other connections. The transaction must stay open until they have
// begun. Database errors are libpqxx's exceptions.
std::string ExportSnapshot(pqxx::transaction_base& tx);

// The statement that makes the transaction just begun on another connection (REPEATABLE READ,
// before its first query) see "snapshot", an id ExportSnapshot returned; InvalidArgument for
// anything that does not look like one.
absl::StatusOr<std::string> SetTransactionSnapshotSql(const std::string& snapshot);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_READ_PLAN_H_
