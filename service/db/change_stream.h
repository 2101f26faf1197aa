#ifndef DVEXPORT_SERVICE_DB_CHANGE_STREAM_H_
#define DVEXPORT_SERVICE_DB_CHANGE_STREAM_H_

// Change streams (docs/SYNC.md): one logical replication slot per consumer, read with
// PostgreSQL's pgoutput plugin through a publication on datavalue. A delta reads the slot's
// changes since the token's position (pg_logical_slot_peek_binary_changes: nothing is consumed
// until the next delta presents the returned token and the slot is advanced to it), keeps the
// keys that changed, and reads those keys' rows in the export's snapshot.

#include <chrono>
#include <cstdint>
#include <optional>
#include <pqxx/connection_base>
#include <pqxx/transaction_base>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dvexport::db {

// How long starting a stream waits for PostgreSQL to make its slot consistent (the
// transactions running at the start must end first), within the call's deadline.
inline constexpr std::chrono::seconds kStreamStartWait{60};

// The most distinct changed keys one delta collects; more is FailedPrecondition (export
// everything again): a delta's memory stays bounded whatever the stream holds.
inline constexpr size_t kMaxDeltaKeys = 1'000'000;

// "dvexport_<16 lowercase hex digits of slot_id>_<owner_user_id>": the slot of a stream started
// by DHIS2 user "owner_user_id" (userinfo.userinfoid; 0 without authentication).
std::string ChangeStreamSlotName(uint64_t slot_id, int64_t owner_user_id);

struct ChangeStreamSlotNameParts {
  uint64_t slot_id = 0;
  int64_t owner_user_id = 0;
};
// The parts of a name ChangeStreamSlotName wrote; nullopt for any other slot name.
std::optional<ChangeStreamSlotNameParts> ParseChangeStreamSlotName(std::string_view name);

// Whether this database can keep change streams for the session's role, and if not, why.
struct ChangeStreamSupport {
  bool available = false;
  // Why not (empty when available): "wal_level is replica, not logical", ...
  std::string reason;
};
ChangeStreamSupport ProbeChangeStreamSupport(pqxx::transaction_base& tx,
                                             const std::string& publication);

// One of this database's dvexport slots, as pg_replication_slots shows it.
struct ChangeStreamSlot {
  std::string name;
  uint64_t slot_id = 0;
  int64_t owner_user_id = 0;
  uint64_t confirmed_lsn = 0;
  uint64_t restart_lsn = 0;
  // reserved, extended, unreserved, lost (invalidated), or empty.
  std::string wal_status;
  bool active = false;
  // The server's WAL position minus restart_lsn (0 when the slot has none).
  int64_t retained_wal_bytes = 0;
};

// This database's dvexport slots, by name.
std::vector<ChangeStreamSlot> ReadChangeStreamSlots(pqxx::transaction_base& tx);
// The slot of "slot_id" in this database, if any.
std::optional<ChangeStreamSlot> ReadChangeStreamSlot(pqxx::transaction_base& tx, uint64_t slot_id);
// Drops the slot "name" (pg_drop_replication_slot). False when it no longer exists; a slot in use
// (a delta reads it) throws as PostgreSQL refuses it.
bool DropChangeStreamSlot(pqxx::transaction_base& tx, const std::string& name);

// One key of datavalue that changed in a stream, with what the stream said of it last.
struct ChangedKey {
  int64_t data_element_id = 0;
  int64_t period_id = 0;
  int64_t org_unit_id = 0;
  int64_t category_option_combo_id = 0;
  int64_t attribute_option_combo_id = 0;
  // The last change of the key was a DELETE, committed at this time (microseconds since the Unix
  // epoch); 0 when the last change inserted or updated it.
  int64_t deleted_at_micros = 0;

  friend bool operator==(const ChangedKey&, const ChangedKey&) = default;
};

// One decoded transaction: its top-level xid (32 bits) and the LSN of its commit record.
struct DecodedTransaction {
  uint32_t xid = 0;
  uint64_t commit_lsn = 0;
};

// What a stream held between two positions.
struct StreamChanges {
  // Each key once, in the order of its first change.
  std::vector<ChangedKey> keys;
  // Every transaction that changed datavalue, in commit order.
  std::vector<DecodedTransaction> transactions;
};

// Decodes pgoutput's messages (protocol version 1) one at a time, collecting the changes of
// table "public.datavalue" by key. Pure: no I/O.
class PgoutputDecoder {
 public:
  explicit PgoutputDecoder(size_t max_keys = kMaxDeltaKeys);
  ~PgoutputDecoder();
  PgoutputDecoder(const PgoutputDecoder&) = delete;
  PgoutputDecoder& operator=(const PgoutputDecoder&) = delete;

  // One message's bytes. FailedPrecondition for a TRUNCATE of datavalue (its keys are not in
  // the stream) or more than max_keys distinct keys; Internal for bytes that are not pgoutput.
  absl::Status Add(std::string_view message);

  // What was collected; the decoder is empty afterwards.
  StreamChanges Take();

 private:
  struct State;
  State* state_;
};

// Reads slot "slot_name"'s changes of transactions committed before "upto_lsn" without
// consuming them (pg_logical_slot_peek_binary_changes with "publication"). Database errors are
// libpqxx's exceptions; the decoder's are returned.
absl::StatusOr<StreamChanges> PeekStreamChanges(pqxx::transaction_base& tx,
                                                const std::string& slot_name, uint64_t upto_lsn,
                                                const std::string& publication,
                                                size_t max_keys = kMaxDeltaKeys);

// Moves the slot's confirmed position to "lsn" (pg_replication_slot_advance; never backwards):
// the consumer has everything before it.
void AdvanceStreamSlot(pqxx::transaction_base& tx, const std::string& slot_name, uint64_t lsn);

// The delta's keys for the export's statements: sets kChangedKeysSetting (a bind parameter, six
// bigint[] literals separated by '|': the five ids and the deletion times) in "tx".
void SetChangedKeys(pqxx::transaction_base& tx, const std::vector<ChangedKey>& keys);

// The FROM item that replaces "datavalue dv" in a delta of a stream: each changed key with its
// row in the snapshot, or, for a key no longer in the table, the key alone with deleted = true,
// value NULL, and created and lastupdated the deletion's commit time.
std::string ChangedKeysSourceSql();

// The running transactions of a snapshot (pg_current_snapshot()), 64-bit xids.
struct SnapshotXids {
  uint64_t xmin = 0;
  uint64_t xmax = 0;
  std::vector<uint64_t> xip;  // sorted
};
SnapshotXids ReadSnapshotXids(pqxx::transaction_base& tx);

// Whether the committed top-level transaction "xid" (32 bits, as pgoutput names it, within 2^31
// of the snapshot's xmax) is visible in "snapshot".
bool VisibleIn(const SnapshotXids& snapshot, uint32_t xid);

// The stream position a delta returns, having read "changes" (every transaction whose commit
// record starts before "upto") and the keys' rows in "snapshot": "upto", or the commit of the
// first decoded transaction the snapshot does not see yet (committed, but not yet visible: a
// synchronous commit waiting for its standby), so that the next delta decodes it again. Every
// transaction whose commit starts below the result is then in the copy.
uint64_t StreamPositionAfter(const StreamChanges& changes, const SnapshotXids& snapshot,
                             uint64_t upto);

// pg_current_wal_flush_lsn(): the decoding of a peek stops there.
uint64_t ReadFlushLsn(pqxx::transaction_base& tx);

// Makes PostgreSQL flush its WAL up to now, on "conn" (idle, outside a transaction): a
// transaction that only takes a transaction id writes a commit record and, with
// synchronous_commit = local, flushes it and everything before it. It consumes one transaction
// id and writes to no table; it works in a read-only transaction.
void ForceWalFlush(pqxx::connection_base& conn);

// The setting SetChangedKeys fills.
inline constexpr char kChangedKeysSetting[] = "dvexport.changed_keys";

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_CHANGE_STREAM_H_
