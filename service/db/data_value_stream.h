#ifndef DVEXPORT_SERVICE_DB_DATA_VALUE_STREAM_H_
#define DVEXPORT_SERVICE_DB_DATA_VALUE_STREAM_H_

#include <cstddef>
#include <optional>
#include <pqxx/transaction_base>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "service/db/data_value_line_parser.h"
#include "service/db/export_scope.h"
#include "service/db/slice_sorter.h"
#include "service/encode/data_value_row.h"

namespace dvexport::db {

// Streams the data values of "scope" (only those stored in "blocks", if
// given), with the scope's identifier "tables", in "tx" with one COPY in text format, and calls
// "row" for each, in the order PostgreSQL sends them; rows are valid only during the call. Memory
// does not grow with the export. OK at the end of the COPY; Cancelled if "row" returned false,
// DataLoss or Internal for a line that cannot be parsed: then "stop_copy" was called, which must
// have the server stop the COPY without waiting for it (QueryCanceller::Statement::Abandon: a
// cancel request waits without a timeout on a silent database), and "tx" must be aborted (its
// ROLLBACK reads and drops what the COPY sent before it stopped). Database errors are libpqxx's
// exceptions.
absl::Status StreamDataValues(pqxx::transaction_base& tx, const ExportScope& scope,
                              const IdentifierTables& tables,
                              const std::optional<BlockRange>& blocks,
                              absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                              absl::FunctionRef<void()> stop_copy,
                              const KeySlice* key_slice = nullptr);

// StreamDataValues of a "key_slice" sorted here (KeySlice::sort_here): its rows are read whole
// into "*sorter" (Reset first; its bound and ranks are the slice's), sorted, and then handed to
// "row" in turn,
// the slice's offset skipped and its limit kept. A slice that outgrows the sorter's bound is
// read to its end without being kept, then read again sorted by PostgreSQL (StreamDataValues), so
// that memory stays bounded whatever the slice. Sets "*held" to the bytes the sorter held
// (SIZE_MAX for a slice sorted by PostgreSQL). Statuses as StreamDataValues.
absl::Status StreamSortedSlice(pqxx::transaction_base& tx, const ExportScope& scope,
                               const IdentifierTables& tables, const KeySlice& key_slice,
                               SliceSorter* sorter,
                               absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                               absl::FunctionRef<void()> stop_copy, size_t* held);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_DATA_VALUE_STREAM_H_
