#ifndef DVEXPORT_SERVICE_DB_DATA_VALUE_STREAM_H_
#define DVEXPORT_SERVICE_DB_DATA_VALUE_STREAM_H_

#include <atomic>
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

// Reads the rows of a "key_slice" sorted here (KeySlice::sort_here) into "*sorter" (Reset by the
// caller), in "tx" with one COPY: the caller then sorts them (SliceSorter::Sort) and applies the
// slice's offset and limit. A slice that outgrows the sorter's bound is read to its end without
// being kept (sorter->ok() is false): it must be read again sorted by PostgreSQL
// (StreamDataValues with sort_here false), so that memory stays bounded whatever the slice.
// "stop" is checked between lines: once set, "stop_copy" is called (as StreamDataValues') and
// Cancelled returned. Database errors are libpqxx's exceptions.
absl::Status FillSortedSlice(pqxx::transaction_base& tx, const ExportScope& scope,
                             const KeySlice& key_slice, SliceSorter* sorter,
                             const std::atomic<bool>& stop, absl::FunctionRef<void()> stop_copy);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_DATA_VALUE_STREAM_H_
