#ifndef DVEXPORT_SERVICE_DB_READ_SESSION_H_
#define DVEXPORT_SERVICE_DB_READ_SESSION_H_

// The database side of an export, on libpqxx: the only place that begins
// transactions, runs the export's statements, cancels them and turns libpqxx's
// exceptions into a Status.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <pqxx/transaction>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/db/adx_stream.h"
#include "service/db/change_stream.h"
#include "service/db/change_tracking.h"
#include "service/db/connection_pool.h"
#include "service/db/data_value_line_parser.h"
#include "service/db/export_scope.h"
#include "service/db/ordered_plan.h"
#include "service/db/query_canceller.h"
#include "service/db/read_plan.h"
#include "service/db/read_session_options.h"
#include "service/db/slice_dispenser.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/principal.h"
#include "service/encode/data_value_row.h"

namespace dvexport::db {

// The database side of one export or count: its pooled connection, its READ
// ONLY REPEATABLE READ transaction, its resolved scope, its slice plan with
// the exported snapshot, and the extra reader connections that import it.
//
// Every database wait of the session (borrowing or opening a connection, each
// statement, each COPY read) ends within about 100 ms of Cancel() (with
// Cancelled) or of "deadline" (with DeadlineExceeded), whichever comes first;
// on a database that does not answer the cancel (gone silent, or a reader
// queued inside PgBouncer) within about QueryCanceller::kSeverAfter (1 s),
// with the same status, by severing the connection, which the pool then
// drops. A ROLLBACK ends within about 1 s of its start or of the stop,
// whichever is later.
//
// Thread-safety: Cancel() from any thread at any time. Read(i) for distinct i
// concurrently, each on its own thread, after PlanReads. Everything else from
// one thread at a time.
//
// Transactions are READ ONLY, REPEATABLE READ, with SET LOCAL statement_timeout
// when options.statement_timeout > 0; statements with parameters are unnamed
// (PgBouncer's transaction pooling carries no prepared statements). A
// QueryCanceller per session cancels what runs at Cancel() or the deadline.
// Database errors map to a Status as CurrentExceptionStatus says.
class ReadSession {
 public:
  // Does no I/O. "*pool" must outlive the session. "deadline": the call's
  // (std::chrono::system_clock::time_point::max() for none).
  ReadSession(ConnectionPool* pool, const ReadSessionOptions& options,
              std::chrono::system_clock::time_point deadline);

  // Cancels whatever still runs, drains it, ends every transaction and gives
  // every connection back to the pool (dropping the ones that cannot be
  // reused).
  ~ReadSession();

  ReadSession(const ReadSession&) = delete;
  ReadSession& operator=(const ReadSession&) = delete;

  // Any thread, any time, repeatedly: every wait of the session ends with
  // Cancelled within about 100 ms (1 s on a silent database), and no
  // statement starts after it. Never waits for the database.
  void Cancel();

  // Borrows a connection, begins the transaction and resolves "params" into
  // the scope (NotFound / InvalidArgument / FailedPrecondition as
  // ResolveExportScope), with DHIS2 2.42's read rules for "principal" (the
  // caller; PermissionDenied E2010 / E2011 / E2012 as DecideDataReadAccess, and
  // a non-superuser's attribute option combo filter in every read and count).
  // A null "principal" (--auth none) applies no rule. With params.changes_since, first waits (at
  // most kReplicaCatchUpWait) for a replica to have replayed what the token saw, and refuses a
  // token it cannot judge (CheckWalPosition, CheckSnapshot); the scope is then the changes since
  // the token.
  // "*principal" is read only during the call. A change token carries no
  // rights: a delta is judged with the principal of its own call.
  absl::Status Begin(const dhis2::ExportParams& params, const dhis2::Principal* principal);

  // Instead of Begin, once per session (for authentication's lookups): borrows a connection,
  // runs "body" in a READ ONLY transaction and ends it; every wait bounded like the session's
  // statements (deadline, Cancel()). "what" names the statements in an error ("looking up the
  // API token"); libpqxx's exceptions in "body" become a Status as RunStatements maps them, and
  // a non-OK Status from "body" is returned as it is (the transaction rolled back).
  absl::Status Lookup(absl::string_view what,
                      absl::FunctionRef<absl::Status(pqxx::transaction_base&)> body);

  // After Begin.
  const ExportScope& scope() const;

  // After Begin: the change token of this export's snapshot; empty when the
  // request has a limit (a limited export is not complete).
  const std::string& change_token() const;

  // After Begin of a request with start_change_stream: empty when the export started a change
  // stream, else why it gives a snapshot token instead ("wal_level is replica, not logical").
  const std::string& change_stream_unavailable() const { return change_stream_unavailable_; }

  // How many values an export of the scope writes (count(*), capped at its
  // limit).
  absl::StatusOr<int64_t> Count();

  // Decides how the values are read: one COPY, or slices of the table read
  // by several connections in the transaction's exported snapshot. Extra
  // connections are only used if the pool keeps "keep_available" for other
  // exports. Returns the number of readers (1 .. read_plan.max_streams).
  absl::StatusOr<int> PlanReads(int keep_available);

  // Reader "index" (0 .. readers-1), each on its own thread: reader 0 reads on
  // the session's connection, the others open a connection of their own that
  // imports the snapshot (one that cannot returns OK having read nothing: its
  // slices go to the others). Takes the next unread slice until none is left
  // and calls "row" for each of its values; "row" returning false stops the
  // reader (Cancelled). Rows are valid only during the call.
  absl::Status Read(int index, absl::FunctionRef<bool(const encode::DataValueRow&)> row);
  // As Read; and reader 0 of an ordered export calls "before_wait" (on its thread) whenever it is
  // about to wait for its next slice: a caller that holds rows back (an encoder's first chunk)
  // can hand them on rather than have them wait too.
  absl::Status Read(int index, absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                    absl::FunctionRef<void()> before_wait);

  // An ADX export, after Begin and instead of PlanReads and Read: reads the ADX metadata
  // (FailedPrecondition where DHIS2 reports a missing code, see ResolveAdxScope).
  absl::Status PrepareAdx(const AdxIdSchemes& schemes);

  // After PrepareAdx: reads the values in group order with one COPY on the session's
  // connection (StreamAdxValues); "row" returning false stops it (Cancelled).
  absl::Status ReadAdx(absl::FunctionRef<bool(const AdxRow&)> row);

  // After every Read returned: ends the transaction.
  absl::Status Finish();

  // True when PlanReads chose slices on several connections.
  bool sliced() const;

 private:
  // A READ ONLY, REPEATABLE READ libpqxx transaction that remembers whether
  // its ROLLBACK failed (libpqxx's abort() does not tell): its connection is
  // then still inside it, and must not be lent again.
  class Transaction : public pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> {
   public:
    // namedclass is a virtual base: the most derived class constructs it.
    explicit Transaction(pqxx::connection_base& conn)
        : namedclass("transaction<REPEATABLE READ>"), transaction(conn) {}
    bool rollback_failed() const { return rollback_failed_; }

   protected:
    void do_abort() override {
      try {
        transaction::do_abort();
      } catch (...) {
        rollback_failed_ = true;
        throw;
      }
    }

   private:
    bool rollback_failed_ = false;
  };

  // Runs "body" (returning absl::Status), whose statements run on "conn", as
  // one the watchdog cancels; libpqxx's exceptions become a Status.
  template <typename Body>
  absl::Status RunStatements(DatabaseConnection& conn, absl::string_view what, Body&& body);

  // A new pooled connection's set-up statement, as one the watchdog cancels.
  absl::Status SetUpConnection(DatabaseConnection& conn);

  // Takes the session's own connection (conn_) from the pool, set up, waiting up to
  // options_.connection_wait; the deadline and Cancel() end the wait with their own status.
  absl::Status AcquireConnection();

  // Begins "*tx" on "conn": the transaction, then SET TRANSACTION SNAPSHOT if
  // "set_snapshot" is not empty, then the statement_timeout.
  absl::Status BeginTransaction(DatabaseConnection& conn, const std::string& set_snapshot,
                                std::unique_ptr<Transaction>* tx);

  // Ends "*tx" (nothing if null) on "*conn": COMMIT if "commit" and the
  // session has not stopped, else ROLLBACK (severed if it takes longer than
  // kSeverAfter). "*conn" is discarded if that fails.
  absl::Status EndTransaction(std::unique_ptr<Transaction>* tx, PooledConnection* conn,
                              bool commit);

  // Before the transaction: until this server has seen everything "token"
  // saw (or why not).
  absl::Status WaitForTokenPosition(const dhis2::ChangeToken& token);

  // Before the transaction, for a stream token: the slot exists, belongs to the caller, is not
  // invalidated nor past the token; confirms the token's position (the consumer has applied
  // everything before it). Sets stream_slot_name_.
  absl::Status ConfirmStreamPosition(const dhis2::ChangeToken& token,
                                     const dhis2::Principal* principal);

  // Before the transaction, for start_change_stream: creates the slot with its exported
  // snapshot (new_slot_) when the database can keep streams, else records why not.
  absl::Status StartStream(const dhis2::Principal* principal);

  // Writes and flushes a commit record on another pooled connection (ForceWalFlush).
  absl::Status FlushWal();

  // In the snapshot, for a stream token: reads the stream up to now and makes the scope the
  // changed keys; the returned token's position is StreamPositionAfter.
  absl::Status ReadStreamDelta(const dhis2::ChangeToken& token, const SnapshotFacts& facts);

  // Reads an ordered export's slices in turn, on the session's connection, each with what
  // remains of the limit; slices sorted here on two threads (ReadSortedSlices).
  // An ordered export's reads (read_session_ordered.cc): slices in turn, on the session's
  // connection and, for slices sorted here, a second one in the snapshot where one can be had.
  absl::Status ReadOrderedSlices(absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                                 absl::FunctionRef<void()> before_wait);
  absl::Status ReadSortedHere(
      std::optional<int64_t> limit,
      absl::FunctionRef<absl::Status(const KeySlice&,
                                     absl::FunctionRef<bool(const encode::DataValueRow&)>)>
          stream_sorted_there,
      absl::FunctionRef<bool(const encode::DataValueRow&)> row,
      absl::FunctionRef<void()> before_wait);
  // A connection of its own for reader "index", its transaction in the export's snapshot; none
  // (OK, "*conn" empty) when the pool has none to spare or it fails (logged unless the pool was
  // full); Cancel's or the deadline's status when the session stopped.
  absl::Status OpenExtraReader(int index, std::optional<PooledConnection>* conn,
                               std::unique_ptr<Transaction>* tx);
  // Reads slices until none is left in "tx" on "conn".
  absl::Status ReadSlices(DatabaseConnection& conn, Transaction& tx,
                          absl::FunctionRef<bool(const encode::DataValueRow&)> row,
                          absl::FunctionRef<void()> before_wait);

  // Reader "index" > 0: its own connection in the snapshot.
  absl::Status ReadOnExtraConnection(int index,
                                     absl::FunctionRef<bool(const encode::DataValueRow&)> row);

  ConnectionPool* const pool_;
  const ReadSessionOptions options_;
  QueryCanceller canceller_;
  std::optional<PooledConnection> conn_;
  std::unique_ptr<Transaction> tx_;  // on conn_
  ExportScope scope_;
  // Built once from scope_ when it is resolved; read by every reader.
  std::optional<IdentifierTables> identifier_tables_;
  std::optional<AdxScope> adx_;
  SliceDispenser slices_;
  // An ordered export's slices (PlanOrderedReads), read in turn by the one reader; set by
  // PlanReads when the scope has an order.
  std::optional<OrderedReads> ordered_;
  int readers_ = 1;
  int keep_available_ = 0;
  std::string set_snapshot_sql_;  // for the extra readers
  // The request's changes_since, once accepted: every reader's transaction sets it.
  std::optional<dhis2::ChangeToken> changes_since_;
  std::string change_token_;
  const std::chrono::system_clock::time_point deadline_;
  // A stream delta's slot (ConfirmStreamPosition).
  std::string stream_slot_name_;
  // start_change_stream: the new slot, until its snapshot is imported; its name and id until
  // Finish (a session that does not finish drops the slot: nobody holds its token).
  std::unique_ptr<SlotWithSnapshot> new_slot_;
  std::string new_slot_name_;
  uint64_t new_slot_id_ = 0;
  uint64_t new_slot_lsn_ = 0;
  std::string change_stream_unavailable_;
  bool finished_ = false;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_READ_SESSION_H_
