#ifndef DVEXPORT_SERVICE_DHIS2_CHANGE_TOKEN_H_
#define DVEXPORT_SERVICE_DHIS2_CHANGE_TOKEN_H_

// The change token of an export (ExportTrailer.change_token,
// ExportRequest.changes_since): what a later export needs to send only what
// changed since this one. Opaque to clients; docs/SYNC.md explains the design.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::dhis2 {

// Which of the two kinds of change token (docs/SYNC.md).
enum class ChangeTokenKind {
  // Version 2: an export's snapshot (its xmin); a delta scans the table.
  kSnapshot,
  // Version 3: a position in a change stream, a logical replication slot of this database; a
  // delta reads the slot's changes since it.
  kStream,
};

// An export's snapshot, or a position in a change stream, as a later export of the same database
// judges it.
struct ChangeToken {
  // pg_control_system().system_identifier: the cluster (a primary and its
  // replicas share it).
  uint64_t system_identifier = 0;
  // The database within the cluster: its OID in pg_database and
  // DatabaseNameHash of its name (a replica keeps both; a copy, a restore or
  // a rename changes one).
  uint32_t database_oid = 0;
  uint64_t database_name_hash = 0;
  // pg_snapshot_xmin of the export's snapshot, a 64-bit (epoch-widened)
  // transaction id: every transaction below it had ended when the export
  // began; every row version written since has an xmin at or above it.
  uint64_t xmin = 0;
  // A WAL position at or after the commit record of every transaction the
  // snapshot saw: a replica that has replayed up to it sees all of them.
  // kStream: the stream's position, every transaction whose commit record
  // starts below it is in the copy (the slot's confirmed_flush_lsn once the
  // next delta begins).
  uint64_t wal_lsn = 0;
  // kStream only (xmin is 0 then): the slot's random id, as its name spells
  // it (db::ChangeStreamSlotName).
  uint64_t slot_id = 0;
  ChangeTokenKind kind = ChangeTokenKind::kSnapshot;

  friend bool operator==(const ChangeToken&, const ChangeToken&) = default;
};

// The length of every encoded token (base64url without padding). Its 39
// bytes fill the 52 characters exactly: no character has spare bits.
inline constexpr size_t kChangeTokenLength = 52;

// The low 48 bits of the 64-bit FNV-1a hash of a database's name, as
// ChangeToken::database_name_hash holds it.
uint64_t DatabaseNameHash(absl::string_view name);

// Version byte (2 for kSnapshot, 3 for kStream), the fields little-endian
// (the name hash in 6 bytes, the OID in 4; then the xmin, or for kStream the
// slot id, and the WAL position), CRC-32 of all that, in base64url without
// padding: kChangeTokenLength characters.
std::string EncodeChangeToken(const ChangeToken& token);

// The token "text" encodes. InvalidArgument naming changes_since for anything
// dvexport did not write (wrong length or alphabet, spare bits set, an
// unknown version, a checksum that does not match); FailedPrecondition for a
// well-formed token of version 1 (39 characters, written before tokens named
// their database), which no server can judge: export everything again.
absl::StatusOr<ChangeToken> DecodeChangeToken(absl::string_view text);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_CHANGE_TOKEN_H_
