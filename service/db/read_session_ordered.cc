// ReadSession's reads of an ordered export (DHIS2 2.43's): its slices in turn
// (docs/PERFORMANCE.md, "Ordered exports").

#include <atomic>
#include <memory>
#include <optional>

#include "service/db/data_value_stream.h"
#include "service/db/read_session.h"
#include "service/db/read_session_statements.h"
#include "service/db/sorted_slices.h"

namespace dvexport::db {

absl::Status ReadSession::ReadOrderedSlices(
    absl::FunctionRef<bool(const encode::DataValueRow&)> row,
    absl::FunctionRef<void()> before_wait) {
  constexpr absl::string_view kWhat = "reading data values";
  const auto stream = [&](const KeySlice& slice, RowSink rows) {
    return RunStatements(**conn_, kWhat, [&](QueryCanceller::Statement& statement) {
      return StreamDataValues(
          *tx_, scope_, *identifier_tables_, std::nullopt, rows,
          [&statement] { statement.Abandon(); }, &slice);
    });
  };
  const std::optional<int64_t> limit =
      scope_.limit ? std::optional<int64_t>(*scope_.limit) : std::nullopt;
  if (ordered_->ranks() != nullptr) return ReadSortedHere(limit, stream, row, before_wait);
  int64_t sent = 0;
  auto counted = [&](const encode::DataValueRow& value) {
    ++sent;
    return row(value);
  };
  KeySlice slice;
  while (ordered_->Next(&slice)) {
    if (limit) {
      if (sent >= *limit) break;
      slice.limit = *limit - sent;
    }
    absl::Status status = stream(slice, counted);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status ReadSession::ReadSortedHere(
    std::optional<int64_t> limit,
    absl::FunctionRef<absl::Status(const KeySlice&, RowSink)> stream_sorted_there,
    absl::FunctionRef<bool(const encode::DataValueRow&)> row,
    absl::FunctionRef<void()> before_wait) {
  constexpr absl::string_view kWhat = "reading data values";
  // Each slice in two parts at once, the second on a connection of its own in the snapshot
  // (PlanReads exported it), where the pool has one to spare.
  std::optional<PooledConnection> second;
  std::unique_ptr<Transaction> second_tx;
  if (!set_snapshot_sql_.empty()) {
    absl::Status opened = OpenExtraReader(1, &second, &second_tx);
    if (!opened.ok()) return opened;
  }
  SortedSliceShape shape;
  shape.slices_ahead = options_.read_plan.max_streams >= 2 ? 2 : 1;
  shape.parts = second.has_value() ? 2 : 1;
  shape.max_bytes_each =
      options_.read_plan.max_sorted_slice_bytes / (shape.slices_ahead * shape.parts);
  const auto fill = [&](const KeySlice& slice, int part, SliceSorter* sorter,
                        const std::atomic<bool>& stop) {
    KeySlice piece = slice;
    piece.part = part;
    piece.parts = shape.parts;
    DatabaseConnection& conn = part == 0 ? **conn_ : **second;
    Transaction& tx = part == 0 ? *tx_ : *second_tx;
    return RunStatements(conn, kWhat, [&](QueryCanceller::Statement& statement) {
      return FillSortedSlice(tx, scope_, piece, sorter, stop,
                             [&statement] { statement.Abandon(); });
    });
  };
  const auto stopped = [&]() -> absl::Status { return canceller_.StopStatus(kWhat); };
  absl::Status status =
      ReadSortedSlices(&*ordered_, shape, limit, *identifier_tables_,
                       SortedSliceSource{fill, stream_sorted_there, stopped}, row, before_wait);
  if (second.has_value()) {
    absl::Status ended = EndTransaction(&second_tx, &*second, /*commit=*/status.ok());
    if (status.ok()) status = ended;
  }
  return status;
}

}  // namespace dvexport::db
