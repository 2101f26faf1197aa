#ifndef DVEXPORT_SERVICE_DB_CHANGE_TRACKING_H_
#define DVEXPORT_SERVICE_DB_CHANGE_TRACKING_H_

// What an export's change token is made of, read from PostgreSQL, and whether a token can be
// judged here. docs/SYNC.md explains the design: a row version is new since a token when its
// xmin is at or above the token's snapshot xmin, and a server judges a token only once it has
// seen every transaction the token's snapshot saw (its WAL position).

#include <chrono>
#include <cstdint>
#include <pqxx/transaction_base>
#include <string>

#include "absl/status/status.h"
#include "service/dhis2/change_token.h"

namespace dvexport::db {

// The most transactions a token's xmin may lie behind this snapshot's xmax: below 2^31, with
// 2^27 to spare for the xids assigned while the export runs, so that 32-bit xmins compare
// within one window (age()).
inline constexpr uint64_t kMaxChangeTokenAge = (uint64_t{1} << 31) - (uint64_t{1} << 27);

// How long an export with a token waits for a replica to replay up to the token's WAL position
// before it gives up with Unavailable.
inline constexpr std::chrono::milliseconds kReplicaCatchUpWait{5000};

// The server's identity (cluster and database, as a token names them) and WAL position, read
// with any transaction object (also a nontransaction, before the export's transaction takes its
// snapshot).
struct WalPosition {
  uint64_t system_identifier = 0;
  uint32_t database_oid = 0;
  uint64_t database_name_hash = 0;
  bool in_recovery = false;
  // A primary's WAL insert position; a replica's last replayed position.
  uint64_t lsn = 0;
};

// The snapshot of the transaction "tx", read once a statement has taken it: the token it
// gives, its xmax (the next transaction id when it was taken), and whether the server is a
// replica.
struct SnapshotFacts {
  dhis2::ChangeToken token;
  uint64_t xmax = 0;
  bool in_recovery = false;
};

// Database errors are libpqxx's exceptions.
WalPosition ReadWalPosition(pqxx::transaction_base& tx);
SnapshotFacts ReadSnapshotFacts(pqxx::transaction_base& tx);

// Whether a server at "position" (read before the export's snapshot) has seen everything the
// token's export saw: FailedPrecondition for a token of another cluster or another database of
// this one, or one from a WAL history this primary does not have; Unavailable when a replica has
// not replayed that far yet (waiting may help: "retry" is true then); OK otherwise.
absl::Status CheckWalPosition(const dhis2::ChangeToken& token, const WalPosition& position,
                              bool* retry);

// Whether the export at "now" can send what changed since "token": FailedPrecondition when the
// token is too old to judge (more than kMaxChangeTokenAge transactions), from another cluster or
// database, or when a primary's snapshot is older than the token's (a primary's xmax only grows:
// the token is not of its history); Unavailable when a replica's snapshot is older than the
// token's (its replay has not reached it).
absl::Status CheckSnapshot(const dhis2::ChangeToken& token, const SnapshotFacts& now);

// Sets kChangesSinceSetting in "tx" to the token's xmin modulo 2^32 (a bind parameter).
void SetChangesSince(pqxx::transaction_base& tx, const dhis2::ChangeToken& token);

// A field holding an unsigned 64-bit decimal (an xid8, an LSN as "lsn - '0/0'"); throws
// std::runtime_error for NULL or anything else.
uint64_t ToUint64(const pqxx::field& field);

// "1A/2B3C4D5E", as PostgreSQL writes a pg_lsn.
std::string FormatLsn(uint64_t lsn);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_CHANGE_TRACKING_H_
