#include "service/db/change_tracking.h"

#include <charconv>
#include <pqxx/result>
#include <stdexcept>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "service/db/export_scope.h"

namespace dvexport::db {
namespace {

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

constexpr char kFullExportAdvice[] = "; export everything again without changes_since";

}  // namespace

WalPosition ReadWalPosition(pqxx::transaction_base& tx) {
  const pqxx::row row = tx.exec_params1(
      "SELECT (pg_control_system()).system_identifier::text, pg_is_in_recovery(), "
      "(COALESCE(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
      "ELSE pg_current_wal_insert_lsn() END, '0/0') - '0/0'::pg_lsn)::text");
  WalPosition position;
  position.system_identifier = ToUint64(row[0]);
  position.in_recovery = std::string_view(row[1].c_str()) == "t";
  position.lsn = ToUint64(row[2]);
  return position;
}

SnapshotFacts ReadSnapshotFacts(pqxx::transaction_base& tx) {
  // The WAL position is read after the snapshot was taken: it is at or after the commit record
  // of every transaction the snapshot sees.
  const pqxx::row row = tx.exec_params1(
      "SELECT (pg_control_system()).system_identifier::text, pg_snapshot_xmin(s)::text, "
      "pg_snapshot_xmax(s)::text, "
      "(COALESCE(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
      "ELSE pg_current_wal_insert_lsn() END, '0/0') - '0/0'::pg_lsn)::text "
      "FROM pg_current_snapshot() s");
  SnapshotFacts facts;
  facts.token.system_identifier = ToUint64(row[0]);
  facts.token.xmin = ToUint64(row[1]);
  facts.xmax = ToUint64(row[2]);
  facts.token.wal_lsn = ToUint64(row[3]);
  return facts;
}

absl::Status CheckWalPosition(const dhis2::ChangeToken& token, const WalPosition& position,
                              bool* retry) {
  *retry = false;
  if (token.system_identifier != position.system_identifier) {
    return absl::FailedPreconditionError(absl::StrCat(
        "changes_since: the token comes from another database cluster (system identifier ",
        token.system_identifier, ", this one is ", position.system_identifier, ")",
        kFullExportAdvice));
  }
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
  if (token.system_identifier != now.token.system_identifier) {
    return absl::FailedPreconditionError(absl::StrCat(
        "changes_since: the token comes from another database cluster (system identifier ",
        token.system_identifier, ", this one is ", now.token.system_identifier, ")",
        kFullExportAdvice));
  }
  if (token.xmin > now.xmax) {
    return absl::UnavailableError(absl::StrCat(
        "changes_since: this server's snapshot (next transaction ", now.xmax,
        ") is older than the token's (", token.xmin, "); retry later, or ask the primary"));
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
