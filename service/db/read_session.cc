#include "service/db/read_session.h"

#include <algorithm>
#include <cstdio>
#include <pqxx/except>
#include <pqxx/nontransaction>
#include <random>
#include <thread>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/db/change_tracking.h"
#include "service/db/data_value_stream.h"
#include "service/db/read_session_statements.h"
#include "service/db/sorted_slices.h"
#include "service/dhis2/dhis2_version.h"

namespace dvexport::db {

ReadSession::ReadSession(ConnectionPool* pool, const ReadSessionOptions& options,
                         std::chrono::system_clock::time_point deadline)
    : pool_(pool), options_(options), canceller_(deadline), deadline_(deadline) {}

ReadSession::~ReadSession() {
  // The Read threads have returned: nothing runs any more. A COPY left
  // unfinished was cancelled; the ROLLBACK reads what is left of it.
  EndTransaction(&tx_, conn_ ? &*conn_ : nullptr, /*commit=*/false).IgnoreError();
  new_slot_.reset();
  if (!new_slot_name_.empty() && !finished_ && pool_->conninfo().ok()) {
    // A stream whose first export did not finish: nobody holds its token, and its slot would
    // keep WAL forever. Dropped on a thread of its own (a connection, bounded), so that no door's
    // thread waits for it; a failure leaves it to `dvexport streams drop` and the slot metrics.
    std::thread([conninfo = *pool_->conninfo(), name = new_slot_name_] {
      absl::Status dropped = DropReplicationSlot(
          conninfo, name, std::chrono::steady_clock::now() + std::chrono::seconds(15));
      if (!dropped.ok()) {
        std::fprintf(stderr, "{\"event\":\"change_stream_drop_failed\",\"slot\":\"%s\"}\n",
                     name.c_str());
      }
    }).detach();
  }
}

void ReadSession::Cancel() { canceller_.Cancel(); }

absl::Status ReadSession::SetUpConnection(DatabaseConnection& conn) {
  return RunStatements(conn, "setting up a new database connection", [&] { return conn.SetUp(); });
}

absl::Status ReadSession::AcquireConnection() {
  // The deadline and Cancel() end the wait through "stopped", with their own status.
  absl::StatusOr<PooledConnection> conn = pool_->Acquire(
      options_.connection_wait,
      [this] { return canceller_.StopStatus("waiting for a database connection"); },
      [this](DatabaseConnection& conn) { return SetUpConnection(conn); });
  if (!conn.ok()) return conn.status();
  conn_.emplace(*std::move(conn));
  return absl::OkStatus();
}

absl::Status ReadSession::BeginTransaction(DatabaseConnection& conn,
                                           const std::string& set_snapshot,
                                           std::unique_ptr<Transaction>* tx) {
  return RunStatements(conn, "beginning the export's transaction", [&] {
    *tx = std::make_unique<Transaction>(conn);
    if (!set_snapshot.empty()) (*tx)->exec(set_snapshot);
    if (changes_since_) SetChangesSince(**tx, *changes_since_);
    // 0 keeps the role's or database's statement_timeout (e.g. ALTER ROLE ... SET).
    if (options_.statement_timeout.count() > 0) {
      (*tx)->exec(
          absl::StrCat("SET LOCAL statement_timeout = ", options_.statement_timeout.count()));
    }
    return absl::OkStatus();
  });
}

absl::Status ReadSession::EndTransaction(std::unique_ptr<Transaction>* tx, PooledConnection* conn,
                                         bool commit) {
  if (*tx == nullptr) return absl::OkStatus();
  constexpr absl::string_view kWhat = "ending the export's transaction";
  absl::Status status;
  bool clean = true;  // the transaction ended and the connection is idle again
  if (commit) {
    QueryCanceller::Statement statement(&canceller_, &**conn);
    if (statement.started()) {
      try {
        (*tx)->commit();
      } catch (...) {
        status = CurrentExceptionStatus(kWhat, canceller_.cause(), !(**conn).is_open());
        clean = false;
      }
      clean = clean && !statement.severed();
    } else {
      // Stopped: rolled back instead.
      commit = false;
      status = canceller_.StopStatus(kWhat);
    }
  }
  if (!commit) {
    QueryCanceller::Statement statement(&canceller_, &**conn, QueryCanceller::Kind::kCleanUp);
    try {
      (*tx)->abort();
    } catch (...) {
      absl::Status failed = CurrentExceptionStatus(kWhat, canceller_.cause(), !(**conn).is_open());
      if (status.ok()) status = failed;
      clean = false;
    }
    clean = clean && !statement.severed() && !(*tx)->rollback_failed();
  }
  if (!clean) {
    // Severed for the stop: the stop, not the broken socket, is the outcome.
    absl::Status stopped = canceller_.StopStatus(kWhat);
    if (!stopped.ok()) status = stopped;
  }
  tx->reset();
  // A connection whose transaction did not end cleanly is not lent again.
  if (!clean || !(**conn).is_open()) conn->Discard();
  return status;
}

namespace {

// Whether "params", validated before the connection was lent, follow the rules of the DHIS2
// it reads ("served", its minor version): a version pinned by the request may be that one or
// an older one; otherwise the request was validated with the rules of the version the pool
// knew, and a connection that finds another one (the first connection after the server
// started, or a database upgraded meanwhile) means the call must be made again.
absl::Status CheckDhis2Rules(const dhis2::ExportParams& params, int served) {
  const int export_of_database = served >= 43 ? 43 : 42;
  if (params.dhis2_pinned && params.dhis2 > export_of_database) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dhis2_version: DHIS2 2.", params.dhis2, "'s export was asked, and the database is DHIS2 ",
        dhis2::VersionName(served)));
  }
  if (!params.dhis2_pinned && params.dhis2 != export_of_database) {
    return absl::UnavailableError(absl::StrCat(
        "the database's DHIS2 version (", dhis2::VersionName(served),
        ") was learned only now, after this request was read by another version's rules; "
        "try again"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadSession::Begin(const dhis2::ExportParams& params,
                                const dhis2::Principal* principal) {
  absl::Status status = AcquireConnection();
  if (!status.ok()) return status;
  status = CheckDhis2Rules(params, (*conn_)->dhis2_schema().version.served);
  if (!status.ok()) return status;
  const bool stream_delta =
      params.changes_since && params.changes_since->kind == dhis2::ChangeTokenKind::kStream;
  if (stream_delta) {
    status = ConfirmStreamPosition(*params.changes_since, principal);
  } else if (params.changes_since) {
    status = WaitForTokenPosition(*params.changes_since);
  } else if (params.start_change_stream && !params.limit) {
    status = StartStream(principal);
  }
  std::string set_snapshot;
  if (status.ok() && new_slot_) {
    absl::StatusOr<std::string> sql = SetTransactionSnapshotSql(new_slot_->snapshot_name());
    if (sql.ok()) set_snapshot = *std::move(sql);
    status = sql.status();
  }
  if (status.ok()) status = BeginTransaction(**conn_, set_snapshot, &tx_);
  // The snapshot is imported (or the export failed): the replication connection is done.
  new_slot_.reset();
  if (!status.ok()) return status;
  status = RunStatements(**conn_, "resolving the export's identifiers", [&] {
    absl::StatusOr<ExportScope> scope =
        ResolveExportScope(*tx_, (*conn_)->dhis2_schema(), params, principal);
    if (!scope.ok()) return scope.status();
    scope_ = *std::move(scope);
    identifier_tables_.emplace(scope_);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  // The statements above took the snapshot; the token describes it.
  return RunStatements(**conn_, "reading the export's snapshot", [&] {
    const SnapshotFacts facts = ReadSnapshotFacts(*tx_);
    if (stream_delta) return ReadStreamDelta(*params.changes_since, facts);
    if (params.changes_since) {
      absl::Status judged = CheckSnapshot(*params.changes_since, facts);
      if (!judged.ok()) return judged;
      SetChangesSince(*tx_, *params.changes_since);
      changes_since_ = params.changes_since;
      scope_.changes_only = true;
    }
    if (params.limit) return absl::OkStatus();
    dhis2::ChangeToken token = facts.token;
    if (!new_slot_name_.empty()) {
      // The slot's snapshot: its stream starts with what committed after this export's view.
      token.kind = dhis2::ChangeTokenKind::kStream;
      token.xmin = 0;
      token.slot_id = new_slot_id_;
      token.wal_lsn = new_slot_lsn_;
    }
    change_token_ = dhis2::EncodeChangeToken(token);
    return absl::OkStatus();
  });
}

absl::Status ReadSession::ConfirmStreamPosition(const dhis2::ChangeToken& token,
                                                const dhis2::Principal* principal) {
  return RunStatements(**conn_, "reading the change stream's slot", [&] {
    pqxx::nontransaction tx(**conn_);
    const WalPosition position = ReadWalPosition(tx);
    bool retry = false;
    absl::Status checked = CheckWalPosition(token, position, &retry);
    if (position.in_recovery) {
      if (!checked.ok() && !retry) return checked;  // another cluster or database
      return absl::FailedPreconditionError(
          "changes_since: the token names a change stream, which only the primary can read "
          "(PostgreSQL keeps replication slots on the primary, and this server is a hot "
          "standby): point the consumer at a dvexport of the primary, or export everything "
          "again here without changes_since, which gives a snapshot token");
    }
    if (!checked.ok()) return checked;
    std::optional<ChangeStreamSlot> slot = ReadChangeStreamSlot(tx, token.slot_id);
    if (!slot) {
      return absl::FailedPreconditionError(
          "changes_since: the token's change stream no longer exists (it was dropped, or this "
          "server was restored or promoted from a standby, which keeps no slots); export "
          "everything again without changes_since");
    }
    const int64_t caller = principal != nullptr ? principal->user_id : 0;
    if (slot->owner_user_id != caller) {
      return absl::PermissionDeniedError(
          "changes_since: the token's change stream belongs to another user");
    }
    if (slot->wal_status == "lost") {
      // Useless from now on: dropped, so that it does not wait for somebody to notice.
      try {
        DropChangeStreamSlot(tx, slot->name);
      } catch (const std::exception&) {
        // In use or refused: the slot metrics and `dvexport streams` show it.
      }
      return absl::FailedPreconditionError(
          "changes_since: the token's change stream was invalidated by PostgreSQL (its slot "
          "kept more WAL than max_slot_wal_keep_size allows, so changes are missing) and has "
          "been dropped; export everything again without changes_since");
    }
    if (token.wal_lsn < slot->confirmed_lsn) {
      return absl::FailedPreconditionError(absl::StrCat(
          "changes_since: the change stream has moved past the token (", FormatLsn(token.wal_lsn),
          "; a later delta was confirmed at ", FormatLsn(slot->confirmed_lsn),
          "): the consumer's state is older than its last delta, or two consumers share one "
          "stream; export everything again without changes_since"));
    }
    // The consumer presents this token only once the delta that returned it is in place: what
    // came before it is confirmed, and PostgreSQL may remove the WAL it no longer needs.
    if (token.wal_lsn > slot->confirmed_lsn) AdvanceStreamSlot(tx, slot->name, token.wal_lsn);
    stream_slot_name_ = slot->name;
    return absl::OkStatus();
  });
}

absl::Status ReadSession::StartStream(const dhis2::Principal* principal) {
  ChangeStreamSupport support;
  absl::Status status = RunStatements(**conn_, "checking for change streams", [&] {
    pqxx::nontransaction tx(**conn_);
    support = ProbeChangeStreamSupport(tx, options_.change_publication);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (!support.available) {
    change_stream_unavailable_ = support.reason;
    return absl::OkStatus();
  }
  if (!pool_->conninfo().ok()) return pool_->conninfo().status();
  std::random_device random;
  do {
    new_slot_id_ = uint64_t{random()} << 32 | random();
  } while (new_slot_id_ == 0);
  new_slot_name_ =
      ChangeStreamSlotName(new_slot_id_, principal != nullptr ? principal->user_id : 0);
  // PostgreSQL makes the slot consistent once the transactions running now have ended: a
  // forgotten idle transaction would hold the call, so the wait has a bound of its own.
  const auto system_now = std::chrono::system_clock::now();
  const auto left = deadline_ == std::chrono::system_clock::time_point::max()
                        ? kStreamStartWait
                        : std::min<std::chrono::steady_clock::duration>(
                              kStreamStartWait, std::max(deadline_ - system_now,
                                                         std::chrono::system_clock::duration{}));
  absl::StatusOr<std::unique_ptr<SlotWithSnapshot>> created = SlotWithSnapshot::Create(
      *pool_->conninfo(), new_slot_name_, "pgoutput", std::chrono::steady_clock::now() + left,
      [this] { return !canceller_.StopStatus("").ok(); });
  if (!created.ok()) {
    new_slot_name_.clear();  // not created (a wait that ended was cancelled on the server)
    if (created.status().code() == absl::StatusCode::kFailedPrecondition) {
      change_stream_unavailable_ = std::string(created.status().message());
      return absl::OkStatus();
    }
    if (created.status().code() == absl::StatusCode::kUnavailable) {
      // The pool's connections work, but a replication connection does not: PgBouncer, or a
      // pg_hba.conf that refuses it. A snapshot token then (libpq's message went to stderr).
      change_stream_unavailable_ =
          "the replication connection (replication=database) failed: a PgBouncer between "
          "dvexport and PostgreSQL, or pg_hba.conf, refuses it (docs/DEPLOYMENT.md)";
      return absl::OkStatus();
    }
    absl::Status stopped = canceller_.StopStatus("starting a change stream");
    if (!stopped.ok()) return stopped;
    if (created.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::UnavailableError(absl::StrCat(
          "start_change_stream: PostgreSQL could not start the stream within ",
          std::chrono::duration_cast<std::chrono::seconds>(kStreamStartWait).count(),
          " s: a transaction that was running when it began is still open (an idle session "
          "in a transaction, a long import); retry later"));
    }
    return created.status();
  }
  new_slot_ = *std::move(created);
  new_slot_lsn_ = new_slot_->consistent_lsn();
  return absl::OkStatus();
}

absl::Status ReadSession::FlushWal() {
  absl::StatusOr<PooledConnection> conn = pool_->Acquire(
      options_.connection_wait, [this] { return canceller_.StopStatus("flushing the WAL"); },
      [this](DatabaseConnection& conn) { return SetUpConnection(conn); });
  if (!conn.ok()) return conn.status();
  absl::Status status = RunStatements(**conn, "flushing the WAL", [&] {
    ForceWalFlush(**conn);
    return absl::OkStatus();
  });
  if (!status.ok()) conn->Discard();
  return status;
}

absl::Status ReadSession::ReadStreamDelta(const dhis2::ChangeToken& token,
                                          const SnapshotFacts& facts) {
  const SnapshotXids xids = ReadSnapshotXids(*tx_);
  // facts' WAL position was read after the snapshot was taken: every transaction the snapshot
  // sees wrote its commit record before it. A peek decodes only what is flushed: a synchronous
  // commit is flushed before it is visible, an asynchronous one within wal_writer_delay; the
  // rest of the WAL before it may belong to transactions still running, which the snapshot does
  // not see. So: wait briefly for the flush, then decode up to what is flushed. An asynchronous
  // commit the snapshot sees beyond that comes in the next delta (from this position on).
  uint64_t upto = facts.token.wal_lsn;
  if (ReadFlushLsn(*tx_) < upto) {
    // Not flushed yet: WAL of transactions still running, or asynchronous commits. Decoding up
    // to a flushed position that ends inside a record would wait for the rest of it, which
    // nothing may flush for seconds (the WAL writer flushes only whole pages and asynchronous
    // commits); a commit record of our own flushes everything before it.
    absl::Status flushed = FlushWal();
    if (!flushed.ok()) {
      absl::Status stopped = canceller_.StopStatus("flushing the WAL");
      if (!stopped.ok()) return stopped;
      // Decode what is flushed; the peek's wait for a record's rest is bounded like any
      // statement (the deadline, Cancel()).
      upto = std::min(upto, ReadFlushLsn(*tx_));
    }
  }
  absl::StatusOr<StreamChanges> changes =
      PeekStreamChanges(*tx_, stream_slot_name_, upto, options_.change_publication);
  if (!changes.ok()) return changes.status();
  dhis2::ChangeToken next = token;
  next.wal_lsn = std::max(token.wal_lsn, StreamPositionAfter(*changes, xids, upto));
  scope_.changed_keys = true;
  scope_.changed_key_count = changes->keys.size();
  if (!changes->keys.empty()) SetChangedKeys(*tx_, changes->keys);
  change_token_ = dhis2::EncodeChangeToken(next);
  return absl::OkStatus();
}

absl::Status ReadSession::Lookup(absl::string_view what,
                                 absl::FunctionRef<absl::Status(pqxx::transaction_base&)> body) {
  if (conn_) return absl::FailedPreconditionError("Lookup on a session that has a connection");
  absl::Status status = AcquireConnection();
  if (!status.ok()) return status;
  status = BeginTransaction(**conn_, "", &tx_);
  if (status.ok()) status = RunStatements(**conn_, what, [&] { return body(*tx_); });
  // Read only: COMMIT and ROLLBACK end it alike; a failed body's transaction is rolled back.
  absl::Status ended = EndTransaction(&tx_, &*conn_, /*commit=*/status.ok());
  conn_.reset();  // back to the pool now, not when the session ends
  return status.ok() ? ended : status;
}

absl::Status ReadSession::WaitForTokenPosition(const dhis2::ChangeToken& token) {
  const auto give_up = std::chrono::steady_clock::now() + kReplicaCatchUpWait;
  for (;;) {
    WalPosition position;
    absl::Status status = RunStatements(**conn_, "reading the server's WAL position", [&] {
      pqxx::nontransaction tx(**conn_);
      position = ReadWalPosition(tx);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    bool retry = false;
    status = CheckWalPosition(token, position, &retry);
    if (status.ok() || !retry || std::chrono::steady_clock::now() >= give_up) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    absl::Status stopped = canceller_.StopStatus("waiting for the replica to replay WAL");
    if (!stopped.ok()) return stopped;
  }
}

const ExportScope& ReadSession::scope() const { return scope_; }

const std::string& ReadSession::change_token() const { return change_token_; }

absl::StatusOr<int64_t> ReadSession::Count() {
  if (tx_ == nullptr) return absl::FailedPreconditionError("Count before Begin");
  if (scope_.MatchesNothing()) return 0;
  int64_t count = 0;
  absl::Status status = RunStatements(**conn_, "counting data values", [&] {
    const pqxx::row row =
        tx_->exec_params1(absl::StrCat("SELECT count(*) FROM ", DataValueSourceSql(scope_),
                                       " WHERE ", BuildDataValueWhereSql(scope_)));
    count = row[0].as<int64_t>();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (scope_.offset.has_value()) count = std::max<int64_t>(0, count - *scope_.offset);
  if (scope_.limit.has_value()) count = std::min<int64_t>(count, *scope_.limit);
  return count;
}

absl::StatusOr<int> ReadSession::PlanReads(int keep_available) {
  if (tx_ == nullptr) return absl::FailedPreconditionError("PlanReads before Begin");
  readers_ = 1;
  slices_.Reset({std::nullopt});
  if (!scope_.order.empty()) {
    // An ordered export (DHIS2 2.43's): one reader, its slices in turn.
    // Slices sorted here are read in two parts at once where a second connection can be had
    // (ReadOrderedSlices): it needs the snapshot.
    std::string snapshot;
    absl::Status status = RunStatements(**conn_, "planning the export's ordered reads", [&] {
      ordered_ = PlanOrderedReads(*tx_, scope_, options_.read_plan);
      if (ordered_->ranks() != nullptr && options_.read_plan.max_streams >= 2) {
        snapshot = ExportSnapshot(*tx_);
      }
      return absl::OkStatus();
    });
    if (!status.ok() || snapshot.empty())
      return status.ok() ? absl::StatusOr<int>(readers_) : status;
    absl::StatusOr<std::string> set_snapshot = SetTransactionSnapshotSql(snapshot);
    if (!set_snapshot.ok()) return set_snapshot.status();
    set_snapshot_sql_ = *std::move(set_snapshot);
    keep_available_ = keep_available;
    return readers_;
  }
  if (options_.read_plan.max_streams < 2) return readers_;
  std::vector<std::optional<BlockRange>> slices;
  std::string snapshot;
  absl::Status status = RunStatements(**conn_, "planning the export's reads", [&] {
    slices = PlanBlockSlices(*tx_, scope_, options_.read_plan);
    if (slices.size() >= 2) snapshot = ExportSnapshot(*tx_);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (slices.size() < 2) return readers_;
  absl::StatusOr<std::string> set_snapshot = SetTransactionSnapshotSql(snapshot);
  if (!set_snapshot.ok()) return set_snapshot.status();
  set_snapshot_sql_ = *std::move(set_snapshot);
  keep_available_ = keep_available;
  slices_.Reset(std::move(slices));
  readers_ = options_.read_plan.max_streams;
  return readers_;
}

absl::Status ReadSession::ReadSlices(DatabaseConnection& conn, Transaction& tx,
                                     absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                                     absl::FunctionRef<void()> before_wait) {
  if (ordered_) return ReadOrderedSlices(row, before_wait);
  std::optional<BlockRange> slice;
  while (slices_.Next(&slice)) {
    absl::Status status =
        RunStatements(conn, "reading data values", [&](QueryCanceller::Statement& statement) {
          return StreamDataValues(tx, scope_, *identifier_tables_, slice, row,
                                  [&statement] { statement.Abandon(); });
        });
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status ReadSession::Read(int index,
                               absl::FunctionRef<bool(const encode::DataValueRow&)> row) {
  return Read(index, row, [] {});
}

absl::Status ReadSession::Read(int index, absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                               absl::FunctionRef<void()> before_wait) {
  if (tx_ == nullptr) return absl::FailedPreconditionError("Read before Begin");
  if (index < 0 || index >= readers_) {
    return absl::InvalidArgumentError(absl::StrCat("no reader ", index, " of ", readers_));
  }
  if (index == 0) return ReadSlices(**conn_, *tx_, row, before_wait);
  return ReadOnExtraConnection(index, row);
}

absl::Status ReadSession::OpenExtraReader(int index, std::optional<PooledConnection>* conn,
                                          std::unique_ptr<Transaction>* tx) {
  // The deadline and Cancel() end the connect through "stopped", with their own status.
  absl::StatusOr<PooledConnection> acquired = pool_->TryAcquire(
      keep_available_, [this] { return canceller_.StopStatus("opening a reader connection"); },
      [this](DatabaseConnection& conn) { return SetUpConnection(conn); });
  absl::Status status = acquired.status();
  if (status.ok()) status = BeginTransaction(**acquired, set_snapshot_sql_, tx);
  if (status.ok()) {
    conn->emplace(*std::move(acquired));
    return absl::OkStatus();
  }
  EndTransaction(tx, acquired.ok() ? &*acquired : nullptr, /*commit=*/false).IgnoreError();
  absl::Status stopped = canceller_.StopStatus("opening a reader connection");
  if (!stopped.ok()) return stopped;
  // Without it the other readers read its share; a pool with no room to spare is expected under
  // load, anything else is worth a log line.
  if (status.code() != absl::StatusCode::kResourceExhausted) {
    std::fprintf(stderr, "{\"event\":\"read_stream_unavailable\",\"reader\":%d,\"code\":\"%s\"}\n",
                 index, absl::StatusCodeToString(status.code()).c_str());
  }
  return absl::OkStatus();
}

absl::Status ReadSession::ReadOnExtraConnection(
    int index, absl::FunctionRef<bool(const encode::DataValueRow&)> row) {
  std::optional<PooledConnection> conn;
  std::unique_ptr<Transaction> tx;
  absl::Status status = OpenExtraReader(index, &conn, &tx);
  if (!status.ok() || !conn.has_value()) return status;
  status = ReadSlices(**conn, *tx, row, [] {});
  absl::Status ended = EndTransaction(&tx, &*conn, /*commit=*/status.ok());
  return status.ok() ? ended : status;
}

absl::Status ReadSession::PrepareAdx(const AdxIdSchemes& schemes) {
  if (tx_ == nullptr) return absl::FailedPreconditionError("PrepareAdx before Begin");
  return RunStatements(**conn_, "reading the ADX metadata", [&] {
    absl::StatusOr<AdxScope> adx = ResolveAdxScope(*tx_, scope_, schemes);
    if (!adx.ok()) return adx.status();
    adx_ = *std::move(adx);
    return absl::OkStatus();
  });
}

absl::Status ReadSession::ReadAdx(absl::FunctionRef<bool(const AdxRow&)> row) {
  if (!adx_) return absl::FailedPreconditionError("ReadAdx before PrepareAdx");
  return RunStatements(**conn_, "reading data values", [&](QueryCanceller::Statement& statement) {
    return StreamAdxValues(*tx_, scope_, *adx_, row, [&statement] { statement.Abandon(); });
  });
}

absl::Status ReadSession::Finish() {
  if (tx_ == nullptr) return absl::FailedPreconditionError("Finish before Begin");
  absl::Status status = EndTransaction(&tx_, &*conn_, /*commit=*/true);
  finished_ = status.ok();
  return status;
}

bool ReadSession::sliced() const { return readers_ > 1; }

}  // namespace dvexport::db
