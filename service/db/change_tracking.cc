#include "service/db/change_tracking.h"

#include <charconv>
#include <cstdint>
#include <pqxx/result>
#include <stdexcept>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "service/db/export_scope.h"

namespace dvexport::db {
uint64_t ToUint64(const pqxx::field& field) {
  const std::string_view text(field.c_str(), field.size());
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (field.is_null() || error != std::errc() || end != text.data() + text.size()) {
    throw std::runtime_error(absl::StrCat("not an unsigned 64-bit integer: ",
                                          absl::string_view(text.data(), text.size())));
  }
  return value;
}

namespace {

uint32_t ToOid(const pqxx::field& field) {
  const uint64_t value = ToUint64(field);
  if (value > UINT32_MAX) throw std::runtime_error(absl::StrCat("not an OID: ", value));
  return static_cast<uint32_t>(value);
}

constexpr char kFullExportAdvice[] = "; export everything again without changes_since";

// The database's OID and name, as ChangeToken names a database.
constexpr char kDatabaseColumns[] =
    "(SELECT oid FROM pg_database WHERE datname = current_database())::text, current_database()";
// A primary's WAL insert position; a replica's last replayed position.
constexpr char kLsnColumn[] =
    "(COALESCE(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
    "ELSE pg_current_wal_insert_lsn() END, '0/0') - '0/0'::pg_lsn)::text";

// FailedPrecondition unless the token names the cluster and the database given. The message
// names neither database (the other one's name is not this caller's to learn).
absl::Status CheckSameDatabase(const dhis2::ChangeToken& token, uint64_t system_identifier,
                               uint32_t database_oid, uint64_t database_name_hash) {
  if (token.system_identifier != system_identifier) {
    return absl::FailedPreconditionError(absl::StrCat(
        "changes_since: the token comes from another database cluster (system identifier ",
        token.system_identifier, ", this one is ", system_identifier, ")", kFullExportAdvice));
  }
  if (token.database_oid != database_oid || token.database_name_hash != database_name_hash) {
    return absl::FailedPreconditionError(absl::StrCat(
        "changes_since: the token belongs to another database of this cluster (or to this "
        "database before it was re-created, restored or renamed)",
        kFullExportAdvice));
  }
  return absl::OkStatus();
}

}  // namespace

WalPosition ReadWalPosition(pqxx::transaction_base& tx) {
  const pqxx::row row =
      tx.exec_params1(absl::StrCat("SELECT (pg_control_system()).system_identifier::text, ",
                                   kDatabaseColumns, ", pg_is_in_recovery(), ", kLsnColumn));
  WalPosition position;
  position.system_identifier = ToUint64(row[0]);
  position.database_oid = ToOid(row[1]);
  position.database_name_hash = dhis2::DatabaseNameHash(row[2].c_str());
  position.in_recovery = std::string_view(row[3].c_str()) == "t";
  position.lsn = ToUint64(row[4]);
  return position;
}

SnapshotFacts ReadSnapshotFacts(pqxx::transaction_base& tx) {
  // The WAL position is read after the snapshot was taken: it is at or after the commit record
  // of every transaction the snapshot sees.
  const pqxx::row row = tx.exec_params1(
      absl::StrCat("SELECT (pg_control_system()).system_identifier::text, ", kDatabaseColumns,
                   ", pg_snapshot_xmin(s)::text, pg_snapshot_xmax(s)::text, pg_is_in_recovery(), ",
                   kLsnColumn, " FROM pg_current_snapshot() s"));
  SnapshotFacts facts;
  facts.token.system_identifier = ToUint64(row[0]);
  facts.token.database_oid = ToOid(row[1]);
  facts.token.database_name_hash = dhis2::DatabaseNameHash(row[2].c_str());
  facts.token.xmin = ToUint64(row[3]);
  facts.xmax = ToUint64(row[4]);
  facts.in_recovery = std::string_view(row[5].c_str()) == "t";
  facts.token.wal_lsn = ToUint64(row[6]);
  return facts;
}

absl::Status CheckWalPosition(const dhis2::ChangeToken& token, const WalPosition& position,
                              bool* retry) {
  *retry = false;
  absl::Status same = CheckSameDatabase(token, position.system_identifier, position.database_oid,
                                        position.database_name_hash);
  if (!same.ok()) return same;
  if (position.lsn >= token.wal_lsn) return absl::OkStatus();
  if (position.in_recovery) {
    *retry = true;
    return absl::UnavailableError(
        absl::StrCat("changes_since: this replica has replayed WAL up to ", FormatLsn(position.lsn),
                     " but the token's export saw up to ", FormatLsn(token.wal_lsn),
                     "; retry later, or ask the primary"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "changes_since: the token's export saw WAL up to ", FormatLsn(token.wal_lsn),
      " but this primary has written only up to ", FormatLsn(position.lsn),
      ": its history is not the one the token came from (a replica promoted after losing "
      "transactions, or a restored backup)",
      kFullExportAdvice));
}

absl::Status CheckSnapshot(const dhis2::ChangeToken& token, const SnapshotFacts& now) {
  absl::Status same = CheckSameDatabase(token, now.token.system_identifier, now.token.database_oid,
                                        now.token.database_name_hash);
  if (!same.ok()) return same;
  if (token.xmin > now.xmax && now.in_recovery) {
    return absl::UnavailableError(absl::StrCat(
        "changes_since: this replica's snapshot (next transaction ", now.xmax,
        ") is older than the token's (", token.xmin, "); retry later, or ask the primary"));
  }
  if (token.xmin > now.xmax) {
    return absl::FailedPreconditionError(absl::StrCat(
        "changes_since: the token's snapshot (transaction ", token.xmin,
        ") is ahead of this primary's (next transaction ", now.xmax,
        "): it cannot come from this database's history (a replica promoted after losing "
        "transactions, a restored backup, or a token made by hand)",
        kFullExportAdvice));
  }
  if (now.xmax - token.xmin > kMaxChangeTokenAge) {
    return absl::FailedPreconditionError(
        absl::StrCat("changes_since: the token is too old to judge (", now.xmax - token.xmin,
                     " transactions ago; at most ", kMaxChangeTokenAge, ")", kFullExportAdvice));
  }
  return absl::OkStatus();
}

void SetChangesSince(pqxx::transaction_base& tx, const dhis2::ChangeToken& token) {
  tx.exec_params("SELECT set_config($1, $2, true)", std::string(kChangesSinceSetting),
                 absl::StrCat(token.xmin & 0xFFFFFFFFu));
}

std::string FormatLsn(uint64_t lsn) {
  return absl::StrFormat("%X/%X", lsn >> 32, lsn & 0xFFFFFFFFu);
}

}  // namespace dvexport::db
