#include "service/db/read_plan.h"

#include <algorithm>
#include <charconv>
#include <pqxx/result>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

// The value of the first `"<key>": ` in EXPLAIN (FORMAT JSON) output, up to the next ',' or
// newline, quotes removed: the top plan node's, since keys of a node precede its "Plans".
std::string_view PlanField(std::string_view json, std::string_view key) {
  std::string quoted = "\"";
  quoted.append(key).append("\": ");
  const size_t at = json.find(quoted);
  if (at == std::string_view::npos) return {};
  std::string_view value = json.substr(at + quoted.size());
  value = value.substr(0, value.find_first_of(",\n"));
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

bool ParseInt(std::string_view text, int64_t* value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::vector<std::optional<BlockRange>> PlanBlockSlices(pqxx::transaction_base& tx,
                                                       const ExportScope& scope,
                                                       const ReadPlanOptions& options) {
  const std::vector<std::optional<BlockRange>> whole_table{std::nullopt};
  // A limit must hold across the whole export: one COPY.
  // A change stream's delta reads its keys by index: one COPY.
  if (options.max_streams < 2 || scope.limit || scope.changed_keys || scope.MatchesNothing()) {
    return whole_table;
  }

  // First what the catalog knows without touching datavalue (no lock to wait for): its kind and
  // the statistics' page and row counts (-1 rows: never analyzed).
  const pqxx::result table = tx.exec_params(
      "SELECT c.relkind::text, c.relpages, c.reltuples::bigint "
      "FROM pg_class c WHERE c.oid = 'datavalue'::regclass");
  int64_t pages = 0;
  int64_t tuples = 0;
  const int64_t min_blocks = int64_t{options.max_streams} * options.min_slice_blocks;
  if (table.size() != 1 || std::string_view(table[0][0].c_str()) != "r" ||
      !ParseInt(table[0][1].c_str(), &pages) || !ParseInt(table[0][2].c_str(), &tuples) ||
      (tuples >= 0 && tuples < options.min_rows) || (pages > 0 && pages < min_blocks)) {
    return whole_table;  // a view, a partitioned table, a small table
  }

  // A delta (changes_only) reads the whole table whatever it sends, and the planner cannot
  // estimate how many rows age(xmin) keeps: it takes the condition for a selective one and may
  // pick an index scan one time and a sequential scan the next, as statistics change. The
  // table's size decides for deltas; for the others, whether the planner reads the whole table.
  if (!scope.changes_only) {
    const pqxx::result plan =
        tx.exec_params(absl::StrCat("EXPLAIN (FORMAT JSON) ", BuildDataValueSelectSql(scope)));
    if (plan.size() != 1) return whole_table;
    const std::string_view json = plan[0][0].c_str();
    int64_t rows = 0;
    if (PlanField(json, "Node Type") != "Seq Scan" ||
        !ParseInt(PlanField(json, "Plan Rows"), &rows) || rows < options.min_rows) {
      return whole_table;
    }
  }

  // (After EXPLAIN, which locked datavalue for this transaction, the size waits for nobody; a
  // delta's takes the same lock here, a wait the session bounds like every other.)
  const pqxx::result size = tx.exec_params(
      "SELECT pg_relation_size('datavalue'::regclass) / current_setting('block_size')::bigint");
  int64_t blocks = 0;
  if (size.size() != 1 || !ParseInt(size[0][0].c_str(), &blocks)) return whole_table;
  const int64_t slice_count =
      std::min<int64_t>(int64_t{options.max_streams} * options.slices_per_stream,
                        blocks / std::max<int64_t>(1, options.min_slice_blocks));
  if (slice_count < options.max_streams) return whole_table;

  std::vector<std::optional<BlockRange>> slices;
  for (int64_t i = 0; i < slice_count; ++i) {
    BlockRange range;
    range.first_block = blocks * i / slice_count;
    // The last slice is open: rows in blocks added since the size was read are not visible to
    // the snapshot, but nothing may be missed if they were.
    if (i + 1 < slice_count) range.end_block = blocks * (i + 1) / slice_count;
    slices.push_back(range);
  }
  return slices;
}

std::string ExportSnapshot(pqxx::transaction_base& tx) {
  return tx.exec_params1("SELECT pg_export_snapshot()")[0].c_str();
}

absl::StatusOr<std::string> SetTransactionSnapshotSql(const std::string& snapshot) {
  // Ids look like 00000003-0000001B-1: hexadecimal digits and '-'. SET TRANSACTION SNAPSHOT
  // takes no parameters, so the id is checked before it becomes SQL text.
  if (snapshot.empty() || snapshot.size() > 64 ||
      snapshot.find_first_not_of("0123456789ABCDEFabcdef-") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("not a snapshot id: ", snapshot));
  }
  return absl::StrCat("SET TRANSACTION SNAPSHOT '", snapshot, "'");
}

}  // namespace dvexport::db
