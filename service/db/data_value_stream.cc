#include "service/db/data_value_stream.h"

#include <atomic>
#include <cstdint>
#include <pqxx/connection_base>
#include <pqxx/stream_from>
#include <string>

#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

// The COPY of the scope's values (BuildDataValueSelectSql). libpqxx 6.4's stream_from reads
// tables only: it runs "COPY <table> TO STDOUT", so the query goes in as a parenthesized "table".
// libpqxx 7 has stream_from::query for this.
pqxx::stream_from CopyDataValues(pqxx::transaction_base& tx, const ExportScope& scope,
                                 const std::optional<BlockRange>& blocks,
                                 const KeySlice* key_slice) {
  return pqxx::stream_from(
      tx, absl::StrCat("(", BuildDataValueSelectSql(scope, blocks, key_slice), ")"));
}

}  // namespace

absl::Status StreamDataValues(pqxx::transaction_base& tx, const ExportScope& scope,
                              const IdentifierTables& tables,
                              const std::optional<BlockRange>& blocks,
                              absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                              absl::FunctionRef<void()> stop_copy, const KeySlice* key_slice) {
  if (scope.MatchesNothing()) return absl::OkStatus();
  pqxx::stream_from copy = CopyDataValues(tx, scope, blocks, key_slice);
  DataValueLineParser parser(&tables);
  encode::DataValueRow parsed;
  std::string line;
  absl::Status status;
  while (copy.get_raw_line(line)) {
    status = parser.Parse(line, &parsed);
    if (!status.ok()) break;
    if (!row(static_cast<const encode::DataValueRow&>(parsed))) {
      status = absl::CancelledError("the export was stopped by its consumer");
      break;
    }
  }
  // The COPY is still sending: the server is asked to stop it (without waiting here: a cancel
  // request waits for the server without a timeout), and the transaction's ROLLBACK reads (and
  // drops) what it sent before it did ("copy" ends without reading on).
  if (!status.ok()) stop_copy();
  return status;
}

absl::Status FillSortedSlice(pqxx::transaction_base& tx, const ExportScope& scope,
                             const KeySlice& key_slice, SliceSorter* sorter,
                             const std::atomic<bool>& stop, absl::FunctionRef<void()> stop_copy) {
  if (scope.MatchesNothing()) return absl::OkStatus();
  pqxx::stream_from copy = CopyDataValues(tx, scope, std::nullopt, &key_slice);
  std::string line;
  // Past the bound, the rest is read and dropped: stopping a COPY would end the transaction.
  while (copy.get_raw_line(line)) {
    if (stop.load(std::memory_order_relaxed)) {
      stop_copy();
      return absl::CancelledError("the export was stopped by its consumer");
    }
    sorter->Add(line);
  }
  return absl::OkStatus();
}

}  // namespace dvexport::db
