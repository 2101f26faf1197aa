#ifndef DVEXPORT_SERVICE_DB_DATA_VALUE_READER_H_
#define DVEXPORT_SERVICE_DB_DATA_VALUE_READER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "service/db/binary_copy_parser.h"
#include "service/db/export_scope.h"
#include "service/db/pg_connection.h"
#include "service/encode/data_value_row.h"

namespace dvexport::db {

// Microseconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
inline constexpr int64_t kPostgresEpochMicros = 946684800LL * 1000000;

// Maps internal ids of one dimension to output identifiers, remembering the
// last hit: consecutive rows mostly share their data element and period.
class IdentifierLookup {
 public:
  explicit IdentifierLookup(const IdentifierMap* map) : map_(map) {}

  // Null if the id is unknown; points at nullopt if the object has no
  // identifier in the output scheme.
  const std::optional<std::string>* Find(int64_t id) {
    if (id == last_id_ && last_ != nullptr) return last_;
    auto it = map_->find(id);
    if (it == map_->end()) return nullptr;
    last_id_ = id;
    last_ = &it->second;
    return last_;
  }

 private:
  const IdentifierMap* map_;
  int64_t last_id_ = 0;
  const std::optional<std::string>* last_ = nullptr;
};

// Streams the data values of "scope" from "conn" (inside the export's
// transaction) and calls sink(const encode::DataValueRow&) for each, in the
// order PostgreSQL sends them. If the sink returns false the query is
// cancelled and Cancelled returned. Memory does not grow with the export.
// "cancelled", if given, is asked while waiting for the database (about every
// PgConnection::kCancelPollMs); true cancels the query the same way. With
// "blocks", only the values stored in that slice of the table are read.
template <typename Sink>
absl::Status ReadDataValues(PgConnection& conn, const ExportScope& scope, Sink&& sink,
                            const std::function<bool()>& cancelled = nullptr,
                            const std::optional<BlockRange>& blocks = std::nullopt) {
  if (scope.MatchesNothing()) return absl::OkStatus();
  absl::Status status = conn.StartCopyOut(BuildDataValueCopySql(scope, blocks), cancelled);
  if (!status.ok()) {
    if (status.code() == absl::StatusCode::kCancelled) conn.CancelAndDrain();
    return status;
  }

  IdentifierLookup data_elements(&scope.data_elements), periods(&scope.periods),
      org_units(&scope.org_units), cocs(&scope.category_option_combos),
      aocs(&scope.attribute_option_combos);
  BinaryCopyParser<kDataValueColumns> parser;
  bool stopped = false;
  encode::DataValueRow row;
  auto text = [](const CopyField& f) {
    return f.is_null() ? encode::Text{{}, true}
                       : encode::Text{std::string_view(f.data, static_cast<size_t>(f.size)), false};
  };
  auto on_tuple = [&](const CopyField(&f)[kDataValueColumns]) {
    const std::optional<std::string>* ids[5];
    IdentifierLookup* lookups[5] = {&data_elements, &periods, &org_units, &cocs, &aocs};
    for (int i = 0; i < 5; ++i) {
      if (f[i].size != 8 || (ids[i] = lookups[i]->Find(ReadInt64(f[i].data))) == nullptr) {
        status = absl::InternalError(absl::StrCat(
            "data value row refers to an id outside the export scope in column ", i));
        return false;
      }
    }
    if (f[7].size != 8 || f[8].size != 8 || f[11].size != 1) {
      status = absl::InternalError("data value row has a NULL or malformed timestamp or flag");
      return false;
    }
    auto id_text = [](const std::optional<std::string>* id) {
      return *id ? encode::Text{**id, false} : encode::Text{{}, true};
    };
    row.data_element = id_text(ids[0]);
    row.period = id_text(ids[1]);
    row.org_unit = id_text(ids[2]);
    row.category_option_combo = id_text(ids[3]);
    row.attribute_option_combo = id_text(ids[4]);
    row.value = text(f[5]);
    row.stored_by = text(f[6]);
    row.created_micros = ReadInt64(f[7].data) + kPostgresEpochMicros;
    row.last_updated_micros = ReadInt64(f[8].data) + kPostgresEpochMicros;
    row.comment = text(f[9]);
    row.followup = f[10].size == 1 && f[10].data[0] != 0;
    row.deleted = f[11].data[0] != 0;
    if (!sink(static_cast<const encode::DataValueRow&>(row))) {
      stopped = true;
      return false;
    }
    return true;
  };

  while (true) {
    const char* data = nullptr;
    absl::StatusOr<size_t> n = conn.ReadCopyData(&data, cancelled);
    if (!n.ok()) {
      status = n.status();
      break;
    }
    if (*n == 0) break;
    absl::Status parsed = parser.Parse(std::string_view(data, *n), on_tuple);
    if (!parsed.ok()) status = parsed;
    if (!status.ok() || stopped) break;
  }
  if (!status.ok() || stopped) {
    conn.CancelAndDrain();
    return stopped ? absl::CancelledError("export stopped by its consumer") : status;
  }
  status = conn.FinishCopy();
  if (status.ok() && !parser.done()) {
    status = absl::DataLossError("binary COPY ended without its trailer");
  }
  return status;
}

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_DATA_VALUE_READER_H_
