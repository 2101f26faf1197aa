#include "service/db/change_stream.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <pqxx/result>
#include <pqxx/stream_from>
#include <pqxx/transaction>
#include <stdexcept>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "service/db/change_tracking.h"

namespace dvexport::db {
namespace {

constexpr char kSlotPrefix[] = "dvexport_";
// PostgreSQL's epoch (2000-01-01) in microseconds after the Unix epoch.
constexpr int64_t kPostgresEpochMicros = 946684800000000;

// Settings a stream's COPY reads (COPY takes no bind parameters).
constexpr char kPeekSlotSetting[] = "dvexport.peek_slot";
constexpr char kPeekUptoSetting[] = "dvexport.peek_upto";
constexpr char kPeekPublicationSetting[] = "dvexport.peek_publication";

bool ParseDecimal(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

// A big-endian reader over one pgoutput message.
class MessageReader {
 public:
  explicit MessageReader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == bytes_.size(); }

  uint64_t Int(int size) {
    if (!ok_ || bytes_.size() - pos_ < static_cast<size_t>(size)) {
      ok_ = false;
      return 0;
    }
    uint64_t value = 0;
    for (int i = 0; i < size; ++i) value = value << 8 | static_cast<unsigned char>(bytes_[pos_++]);
    return value;
  }
  char Byte() { return static_cast<char>(Int(1)); }
  // A NUL-terminated string.
  std::string_view String() {
    if (!ok_) return {};
    const size_t nul = bytes_.find('\0', pos_);
    if (nul == std::string_view::npos) {
      ok_ = false;
      return {};
    }
    std::string_view text = bytes_.substr(pos_, nul - pos_);
    pos_ = nul + 1;
    return text;
  }
  std::string_view Bytes(size_t size) {
    if (!ok_ || bytes_.size() - pos_ < size) {
      ok_ = false;
      return {};
    }
    std::string_view text = bytes_.substr(pos_, size);
    pos_ += size;
    return text;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// The five key columns of datavalue, in ChangedKey's order.
constexpr const char* kKeyColumns[5] = {"dataelementid", "periodid", "sourceid",
                                        "categoryoptioncomboid", "attributeoptioncomboid"};

struct KeyHash {
  size_t operator()(const ChangedKey& key) const {
    return absl::HashOf(key.data_element_id, key.period_id, key.org_unit_id,
                        key.category_option_combo_id, key.attribute_option_combo_id);
  }
};
struct KeyEq {
  bool operator()(const ChangedKey& a, const ChangedKey& b) const {
    return a.data_element_id == b.data_element_id && a.period_id == b.period_id &&
           a.org_unit_id == b.org_unit_id &&
           a.category_option_combo_id == b.category_option_combo_id &&
           a.attribute_option_combo_id == b.attribute_option_combo_id;
  }
};

void AppendArray(std::string* out, const std::vector<ChangedKey>& keys,
                 int64_t ChangedKey::*member) {
  out->push_back('{');
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out->push_back(',');
    absl::StrAppend(out, keys[i].*member);
  }
  out->push_back('}');
}

}  // namespace

std::string ChangeStreamSlotName(uint64_t slot_id, int64_t owner_user_id) {
  return absl::StrFormat("%s%016x_%d", kSlotPrefix, slot_id, owner_user_id);
}

std::optional<ChangeStreamSlotNameParts> ParseChangeStreamSlotName(std::string_view name) {
  constexpr size_t kPrefix = sizeof(kSlotPrefix) - 1;
  if (name.size() < kPrefix + 18 || name.substr(0, kPrefix) != kSlotPrefix ||
      name[kPrefix + 16] != '_') {
    return std::nullopt;
  }
  ChangeStreamSlotNameParts parts;
  const std::string_view hex = name.substr(kPrefix, 16);
  for (const char c : hex) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    parts.slot_id = parts.slot_id << 4 | static_cast<uint64_t>(digit);
  }
  const std::string_view owner = name.substr(kPrefix + 17);
  if (!ParseDecimal(owner, &parts.owner_user_id) || parts.owner_user_id < 0 ||
      (owner.size() > 1 && owner[0] == '0')) {
    return std::nullopt;
  }
  return parts;
}

ChangeStreamSupport ProbeChangeStreamSupport(pqxx::transaction_base& tx,
                                             const std::string& publication) {
  const pqxx::row row = tx.exec_params1(
      "SELECT current_setting('wal_level'), pg_is_in_recovery(), "
      "(SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user), "
      "current_setting('max_replication_slots')::int, "
      "EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1), "
      "EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 "
      "AND schemaname = 'public' AND tablename = 'datavalue')",
      publication);
  ChangeStreamSupport support;
  const std::string wal_level = row[0].c_str();
  if (wal_level != "logical") {
    support.reason = absl::StrCat("wal_level is ", wal_level, ", not logical");
  } else if (std::string_view(row[1].c_str()) == "t") {
    support.reason = "the server is a hot standby (a change stream's slot lives on the primary)";
  } else if (std::string_view(row[2].c_str()) != "t") {
    support.reason = "the database role has neither REPLICATION nor SUPERUSER";
  } else if (std::string_view(row[3].c_str()) == "0") {
    support.reason = "max_replication_slots is 0";
  } else if (std::string_view(row[4].c_str()) != "t") {
    support.reason = absl::StrCat("there is no publication \"", publication, "\"");
  } else if (std::string_view(row[5].c_str()) != "t") {
    support.reason =
        absl::StrCat("the publication \"", publication, "\" does not publish public.datavalue");
  } else {
    support.available = true;
  }
  return support;
}

namespace {

constexpr char kSlotColumns[] =
    "SELECT slot_name::text, (COALESCE(confirmed_flush_lsn, '0/0') - '0/0'::pg_lsn)::text, "
    "(COALESCE(restart_lsn, '0/0') - '0/0'::pg_lsn)::text, COALESCE(wal_status, ''), active, "
    "CASE WHEN restart_lsn IS NULL THEN 0 ELSE GREATEST(0, (CASE WHEN pg_is_in_recovery() THEN "
    "pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END) - restart_lsn) END::bigint::text "
    "FROM pg_replication_slots WHERE slot_type = 'logical' AND database = current_database() "
    "AND left(slot_name::text, 9) = 'dvexport_'";

std::optional<ChangeStreamSlot> SlotOf(const pqxx::row& row) {
  std::optional<ChangeStreamSlotNameParts> parts = ParseChangeStreamSlotName(row[0].c_str());
  if (!parts) return std::nullopt;
  ChangeStreamSlot slot;
  slot.name = row[0].c_str();
  slot.slot_id = parts->slot_id;
  slot.owner_user_id = parts->owner_user_id;
  slot.confirmed_lsn = ToUint64(row[1]);
  slot.restart_lsn = ToUint64(row[2]);
  slot.wal_status = row[3].c_str();
  slot.active = std::string_view(row[4].c_str()) == "t";
  slot.retained_wal_bytes = static_cast<int64_t>(ToUint64(row[5]));
  return slot;
}

}  // namespace

std::vector<ChangeStreamSlot> ReadChangeStreamSlots(pqxx::transaction_base& tx) {
  std::vector<ChangeStreamSlot> slots;
  for (const pqxx::row& row : tx.exec_params(absl::StrCat(kSlotColumns, " ORDER BY 1"))) {
    if (std::optional<ChangeStreamSlot> slot = SlotOf(row)) slots.push_back(*std::move(slot));
  }
  return slots;
}

std::optional<ChangeStreamSlot> ReadChangeStreamSlot(pqxx::transaction_base& tx, uint64_t slot_id) {
  const std::string prefix = absl::StrFormat("%s%016x_", kSlotPrefix, slot_id);
  for (const pqxx::row& row :
       tx.exec_params(absl::StrCat(kSlotColumns, " AND left(slot_name::text, 26) = $1"), prefix)) {
    std::optional<ChangeStreamSlot> slot = SlotOf(row);
    if (slot && slot->slot_id == slot_id) return slot;
  }
  return std::nullopt;
}

bool DropChangeStreamSlot(pqxx::transaction_base& tx, const std::string& name) {
  const pqxx::result exists =
      tx.exec_params("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", name);
  if (exists.empty()) return false;
  tx.exec_params("SELECT pg_drop_replication_slot($1)", name);
  return true;
}

namespace {

// A message the decoder cannot read as pgoutput's.
absl::Status NotPgoutput(std::string_view message) {
  return absl::InternalError(absl::StrCat(
      "a change stream message that is not pgoutput's (", message.size(), " bytes, type '",
      absl::string_view(message.data(), message.empty() ? 0 : 1), "')"));
}

}  // namespace

struct PgoutputDecoder::State {
  explicit State(size_t max) : max_keys(max) {}
  struct Relation {
    bool is_datavalue = false;
    int key_columns[5] = {-1, -1, -1, -1, -1};
  };
  size_t max_keys;
  absl::flat_hash_map<uint32_t, Relation> relations;
  absl::flat_hash_map<ChangedKey, size_t, KeyHash, KeyEq> index;
  StreamChanges changes;
  int64_t commit_micros = 0;  // of the transaction being decoded, Unix epoch

  // Begin: final LSN, commit time, xid.
  absl::Status Begin(MessageReader& reader, std::string_view message) {
    const uint64_t final_lsn = reader.Int(8);
    const int64_t commit_time = static_cast<int64_t>(reader.Int(8));
    const uint32_t xid = static_cast<uint32_t>(reader.Int(4));
    if (!reader.ok()) return NotPgoutput(message);
    commit_micros = commit_time + kPostgresEpochMicros;
    changes.transactions.push_back({xid, final_lsn});
    return absl::OkStatus();
  }

  // Relation: id, namespace, name, replica identity, columns.
  absl::Status DescribeRelation(MessageReader& reader, std::string_view message) {
    const uint32_t id = static_cast<uint32_t>(reader.Int(4));
    const std::string_view nspname = reader.String();
    const std::string_view relname = reader.String();
    reader.Int(1);
    const int columns = static_cast<int>(reader.Int(2));
    Relation relation;
    relation.is_datavalue = nspname == "public" && relname == "datavalue";
    for (int i = 0; i < columns && reader.ok(); ++i) {
      reader.Int(1);
      const std::string_view name = reader.String();
      reader.Int(4);
      reader.Int(4);
      for (int k = 0; k < 5; ++k) {
        if (name == kKeyColumns[k]) relation.key_columns[k] = i;
      }
    }
    if (!reader.ok()) return NotPgoutput(message);
    if (relation.is_datavalue) {
      for (int column : relation.key_columns) {
        if (column < 0) {
          return absl::FailedPreconditionError(
              "changes_since: the change stream's datavalue has no column for a part of its "
              "key; export everything again without changes_since");
        }
      }
    }
    relations[id] = relation;
    return absl::OkStatus();
  }

  // Insert, Update or Delete ("type"): relation id, then the old key (an update that changed it,
  // or a delete) and the new tuple.
  absl::Status Row(char type, MessageReader& reader, std::string_view message) {
    const uint32_t id = static_cast<uint32_t>(reader.Int(4));
    auto it = relations.find(id);
    if (!reader.ok() || it == relations.end()) return NotPgoutput(message);
    if (!it->second.is_datavalue) return absl::OkStatus();
    const Relation& relation = it->second;
    char part = reader.Byte();
    ChangedKey key;
    if (type == 'U' && (part == 'K' || part == 'O')) {
      // The old key of an update that changed it: the old key is gone.
      if (!ReadKey(reader, relation, &key)) return NotPgoutput(message);
      if (absl::Status s = Record(key, /*deleted=*/true); !s.ok()) return s;
      part = reader.Byte();
    }
    if (type == 'D' ? part != 'K' && part != 'O' : part != 'N') return NotPgoutput(message);
    if (!ReadKey(reader, relation, &key)) return NotPgoutput(message);
    return Record(key, /*deleted=*/type == 'D');
  }

  // Truncate: number of relations, options, ids.
  absl::Status Truncate(MessageReader& reader, std::string_view message) {
    const int count = static_cast<int>(reader.Int(4));
    reader.Int(1);
    for (int i = 0; i < count && reader.ok(); ++i) {
      auto it = relations.find(static_cast<uint32_t>(reader.Int(4)));
      if (it != relations.end() && it->second.is_datavalue) {
        return absl::FailedPreconditionError(
            "changes_since: datavalue was truncated since the token, which a change stream "
            "cannot tell value by value; export everything again without changes_since");
      }
    }
    // A TRUNCATE names relations the stream already described; one it did not is not ours.
    return reader.ok() ? absl::OkStatus() : NotPgoutput(message);
  }

  // Reads one TupleData into "*key" (the key columns of "relation"); false if malformed or a
  // key column is not text.
  bool ReadKey(MessageReader& reader, const Relation& relation, ChangedKey* key) {
    const int columns = static_cast<int>(reader.Int(2));
    int64_t values[5] = {0, 0, 0, 0, 0};
    bool found[5] = {false, false, false, false, false};
    for (int i = 0; i < columns && reader.ok(); ++i) {
      const char kind = reader.Byte();
      std::string_view text;
      if (kind == 't' || kind == 'b') {
        text = reader.Bytes(reader.Int(4));
      } else if (kind != 'n' && kind != 'u') {
        return false;
      }
      for (int k = 0; k < 5; ++k) {
        if (relation.key_columns[k] != i) continue;
        if (kind != 't' || !ParseDecimal(text, &values[k])) return false;
        found[k] = true;
      }
    }
    if (!reader.ok()) return false;
    for (bool f : found) {
      if (!f) return false;
    }
    key->data_element_id = values[0];
    key->period_id = values[1];
    key->org_unit_id = values[2];
    key->category_option_combo_id = values[3];
    key->attribute_option_combo_id = values[4];
    return true;
  }

  absl::Status Record(ChangedKey key, bool deleted) {
    key.deleted_at_micros = deleted ? commit_micros : 0;
    auto [it, inserted] = index.try_emplace(key, changes.keys.size());
    if (inserted) {
      if (changes.keys.size() >= max_keys) {
        index.erase(it);
        return absl::FailedPreconditionError(
            absl::StrCat("changes_since: more than ", max_keys,
                         " data values changed since the token; export everything again without "
                         "changes_since"));
      }
      changes.keys.push_back(key);
    } else {
      changes.keys[it->second].deleted_at_micros = key.deleted_at_micros;
    }
    return absl::OkStatus();
  }
};

PgoutputDecoder::PgoutputDecoder(size_t max_keys) : state_(new State(max_keys)) {}
PgoutputDecoder::~PgoutputDecoder() { delete state_; }

absl::Status PgoutputDecoder::Add(std::string_view message) {
  MessageReader reader(message);
  const char type = reader.Byte();
  switch (type) {
    case 'B':
      return state_->Begin(reader, message);
    case 'R':
      return state_->DescribeRelation(reader, message);
    case 'I':
    case 'U':
    case 'D':
      return state_->Row(type, reader, message);
    case 'T':
      return state_->Truncate(reader, message);
    case 'C':  // Commit
    case 'O':  // Origin
    case 'Y':  // Type
    case 'M':  // Logical decoding message
      return absl::OkStatus();
    default:
      return NotPgoutput(message);
  }
}

StreamChanges PgoutputDecoder::Take() {
  StreamChanges changes = std::move(state_->changes);
  state_->changes = StreamChanges();
  state_->index.clear();
  return changes;
}

absl::StatusOr<StreamChanges> PeekStreamChanges(pqxx::transaction_base& tx,
                                                const std::string& slot_name, uint64_t upto_lsn,
                                                const std::string& publication, size_t max_keys) {
  tx.exec_params(
      "SELECT set_config($1, $2, true), set_config($3, $4, true), set_config($5, $6, true)",
      std::string(kPeekSlotSetting), slot_name, std::string(kPeekUptoSetting), FormatLsn(upto_lsn),
      std::string(kPeekPublicationSetting), publication);
  // One message per line, as bytea's hex text ("\\x..." in COPY's escaping): read as it comes,
  // never the whole stream in memory.
  pqxx::stream_from copy(
      tx, absl::StrCat("(SELECT data FROM pg_logical_slot_peek_binary_changes(current_setting('",
                       kPeekSlotSetting, "')::name, current_setting('", kPeekUptoSetting,
                       "')::pg_lsn, NULL, 'proto_version', '1', 'publication_names', "
                       "current_setting('",
                       kPeekPublicationSetting, "')))"));
  PgoutputDecoder decoder(max_keys);
  std::string line;
  std::string bytes;
  absl::Status status;
  while (copy.get_raw_line(line)) {
    if (!status.ok()) continue;  // drain the COPY: the connection stays usable
    if (!line.empty() && line.back() == '\n') line.pop_back();
    // COPY text escapes the backslash of bytea's "\x": "\\x4200...".
    if (line.size() < 3 || line.compare(0, 3, "\\\\x") != 0 || (line.size() - 3) % 2 != 0) {
      status = absl::InternalError("a change stream row that is not bytea's hex text");
      continue;
    }
    bytes = absl::HexStringToBytes(absl::string_view(line.data() + 3, line.size() - 3));
    status = decoder.Add(bytes);
  }
  copy.complete();
  if (!status.ok()) return status;
  return decoder.Take();
}

void AdvanceStreamSlot(pqxx::transaction_base& tx, const std::string& slot_name, uint64_t lsn) {
  tx.exec_params("SELECT pg_replication_slot_advance($1, $2::pg_lsn)", slot_name, FormatLsn(lsn));
}

void SetChangedKeys(pqxx::transaction_base& tx, const std::vector<ChangedKey>& keys) {
  std::string value;
  value.reserve(keys.size() * 48 + 16);
  AppendArray(&value, keys, &ChangedKey::data_element_id);
  value.push_back('|');
  AppendArray(&value, keys, &ChangedKey::period_id);
  value.push_back('|');
  AppendArray(&value, keys, &ChangedKey::org_unit_id);
  value.push_back('|');
  AppendArray(&value, keys, &ChangedKey::category_option_combo_id);
  value.push_back('|');
  AppendArray(&value, keys, &ChangedKey::attribute_option_combo_id);
  value.push_back('|');
  AppendArray(&value, keys, &ChangedKey::deleted_at_micros);
  tx.exec_params("SELECT set_config($1, $2, true)", std::string(kChangedKeysSetting), value);
}

SnapshotXids ReadSnapshotXids(pqxx::transaction_base& tx) {
  const pqxx::row row = tx.exec_params1("SELECT pg_current_snapshot()::text");
  // "xmin:xmax:xip,xip,...", decimal 64-bit xids.
  const std::string_view text(row[0].c_str(), row[0].size());
  SnapshotXids snapshot;
  const size_t first = text.find(':');
  const size_t second = first == std::string_view::npos ? first : text.find(':', first + 1);
  int64_t value = 0;
  if (second == std::string_view::npos || !ParseDecimal(text.substr(0, first), &value)) {
    throw std::runtime_error(absl::StrCat("not a snapshot: ", absl::string_view(row[0].c_str())));
  }
  snapshot.xmin = static_cast<uint64_t>(value);
  if (!ParseDecimal(text.substr(first + 1, second - first - 1), &value)) {
    throw std::runtime_error(absl::StrCat("not a snapshot: ", absl::string_view(row[0].c_str())));
  }
  snapshot.xmax = static_cast<uint64_t>(value);
  std::string_view rest = text.substr(second + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (!ParseDecimal(rest.substr(0, comma), &value)) {
      throw std::runtime_error(absl::StrCat("not a snapshot: ", absl::string_view(row[0].c_str())));
    }
    snapshot.xip.push_back(static_cast<uint64_t>(value));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  std::sort(snapshot.xip.begin(), snapshot.xip.end());
  return snapshot;
}

bool VisibleIn(const SnapshotXids& snapshot, uint32_t xid) {
  // Widen to 64 bits with the epoch of the nearest candidate to xmax.
  constexpr uint64_t kWrap = uint64_t{1} << 32;
  uint64_t full = (snapshot.xmax & ~(kWrap - 1)) | xid;
  if (full > snapshot.xmax + kWrap / 2) {
    full -= kWrap;
  } else if (full + kWrap / 2 < snapshot.xmax) {
    full += kWrap;
  }
  if (full < snapshot.xmin) return true;
  if (full >= snapshot.xmax) return false;
  return !std::binary_search(snapshot.xip.begin(), snapshot.xip.end(), full);
}

uint64_t StreamPositionAfter(const StreamChanges& changes, const SnapshotXids& snapshot,
                             uint64_t upto) {
  uint64_t position = upto;
  for (const DecodedTransaction& transaction : changes.transactions) {
    if (!VisibleIn(snapshot, transaction.xid)) {
      position = std::min(position, transaction.commit_lsn);
    }
  }
  return position;
}

uint64_t ReadFlushLsn(pqxx::transaction_base& tx) {
  return ToUint64(tx.exec_params1("SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::text")[0]);
}

void ForceWalFlush(pqxx::connection_base& conn) {
  pqxx::work tx(conn);
  tx.exec("SET LOCAL synchronous_commit = local");
  tx.exec("SELECT pg_current_xact_id()");
  tx.commit();
}

std::string ChangedKeysSourceSql() {
  return absl::StrCat(
      "(SELECT k.de AS dataelementid, k.pe AS periodid, k.ou AS sourceid, "
      "k.coc AS categoryoptioncomboid, k.aoc AS attributeoptioncomboid, d.value, d.storedby, "
      "COALESCE(d.created, k.gone) AS created, COALESCE(d.lastupdated, k.gone) AS lastupdated, "
      "d.comment, d.followup, COALESCE(d.deleted, true) AS deleted "
      // current_setting() in a sub-select (an InitPlan) of a sub-query kept apart (OFFSET 0):
      // the arrays are parsed once, when the statement runs. As a plain stable call the planner
      // also parses them to estimate unnest's rows (53-105 ms of planning at 100,000 keys on
      // the national database), and a flattened sub-query parses them once per array. Without
      // the estimate the keys are read by the primary key's index, whatever the table's size.
      "FROM (SELECT string_to_array((SELECT current_setting('",
      kChangedKeysSetting,
      "')), '|') AS p OFFSET 0) s "
      "CROSS JOIN LATERAL (SELECT u.*, CASE WHEN u.t > 0 THEN (TIMESTAMPTZ 'epoch' + u.t * "
      "INTERVAL '1 microsecond')::timestamp ELSE localtimestamp END AS gone "
      "FROM unnest(s.p[1]::bigint[], s.p[2]::bigint[], s.p[3]::bigint[], s.p[4]::bigint[], "
      "s.p[5]::bigint[], s.p[6]::bigint[]) AS u(de, pe, ou, coc, aoc, t)) k "
      "LEFT JOIN datavalue d ON d.dataelementid = k.de AND d.periodid = k.pe AND d.sourceid = "
      "k.ou AND d.categoryoptioncomboid = k.coc AND d.attributeoptioncomboid = k.aoc) dv");
}

}  // namespace dvexport::db
