#ifndef DVEXPORT_SERVICE_DB_CONNECTION_POOL_H_
#define DVEXPORT_SERVICE_DB_CONNECTION_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/connection>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/db/dhis2_schema.h"
#include "service/db/libpq_gaps.h"

namespace dvexport::db {

// libpqxx's immediate connection policy (pqxx::connection's: connected when
// constructed), but on libpq's non-blocking API (ConnectWithin) instead of
// libpqxx's blocking PQconnectdb, so that a connect ends when the calling
// thread's caller stops (DatabaseConnection::Open; libpqxx 6.4 gives a policy
// nothing but the conninfo, so the bound is the thread's). It also hands the
// libpq connection it made to the thread that made it: libpqxx 6.4 shows it to
// nobody else, and DatabaseConnection needs it once, for its CancelRequest.
class BoundedConnect : public pqxx::connectionpolicy {
 public:
  using pqxx::connectionpolicy::connectionpolicy;
  // Connects, unless "orig" is a connection already. Throws
  // pqxx::broken_connection, having closed what it started, if the connect
  // fails or gives up.
  handle do_startconnect(handle orig) override;
  // The connection the calling thread's last do_startconnect made (null if
  // none since the last call).
  static handle TakeLast();

 private:
  static thread_local handle last_;
};

// A libpqxx connection with client_encoding UTF8, DateStyle ISO and TimeZone
// UTC, and what is known of its database.
class DatabaseConnection : public pqxx::basic_connection_base<BoundedConnect> {
 public:
  // Open (bounded by the conninfo's connect_timeout only), then SetUp.
  static absl::StatusOr<std::unique_ptr<DatabaseConnection>> Connect(const std::string& conninfo);

  // Connects, bounded by the conninfo's connect_timeout and by "stopped"
  // (asked every 50 ms; empty: never stops); runs no statement. The status
  // "stopped" returned if it stopped the connect; else Unavailable (without
  // libpq's message, which names the host and user) if the database cannot be
  // reached or did not answer within connect_timeout.
  static absl::StatusOr<std::unique_ptr<DatabaseConnection>> Open(
      const std::string& conninfo, const std::function<absl::Status()>& stopped = nullptr);

  // The new connection's statements: client_encoding UTF8, DateStyle ISO,
  // TimeZone UTC, then what the database shows of its DHIS2 (ReadDhis2Schema, decided with
  // the version policy set before; kept as dhis2_schema()). Like any statement they wait for the
  // database (and, behind PgBouncer, for a server connection): run them where they can be
  // cancelled. A DHIS2 that is not served still sets up: the pool refuses to lend it.
  absl::Status SetUp();

  ~DatabaseConnection();

  // What SetUp read of the database's DHIS2.
  const Dhis2Schema& dhis2_schema() const { return dhis2_schema_; }
  void set_version_policy(const dhis2::VersionPolicy& policy) { version_policy_ = policy; }

  // Without blocking: false if the server sent the idle connection anything
  // meanwhile (a termination notice, the end of the socket) or the connection
  // is otherwise broken.
  bool StillConnected();

  // What cancels the statement this connection runs, usable after the
  // connection is gone; null if libpq had none.
  const std::shared_ptr<const CancelRequest>& cancel_request() const { return cancel_request_; }

  // Shuts the connection's socket down both ways (shutdown(2)), at once and
  // without waiting for anything: a statement blocked on a database that went
  // silent fails as a broken connection, and the pool never lends the
  // connection again. Any thread, while the connection exists.
  void Sever();
  bool severed() const { return severed_.load(); }

 private:
  explicit DatabaseConnection(const std::string& conninfo);

  dhis2::VersionPolicy version_policy_;
  Dhis2Schema dhis2_schema_;
  std::shared_ptr<const CancelRequest> cancel_request_;
  // A duplicate of libpq's socket, for Sever: its number stays ours (no other
  // socket can take it) even after libpq has closed its own on an error.
  int socket_ = -1;
  std::atomic<bool> severed_{false};
};

class ConnectionPool;

// A connection borrowed from the pool; returned when destroyed. A connection
// that is broken or Discard()ed is dropped instead: whoever leaves it inside a
// transaction must Discard() it.
class PooledConnection {
 public:
  PooledConnection(ConnectionPool* pool, std::unique_ptr<DatabaseConnection> conn)
      : pool_(pool), conn_(std::move(conn)) {}
  PooledConnection(PooledConnection&&) = default;
  PooledConnection& operator=(PooledConnection&&) = delete;
  ~PooledConnection();

  DatabaseConnection* operator->() const { return conn_.get(); }
  DatabaseConnection& operator*() const { return *conn_; }

  // The connection is closed instead of returned (its state is unknown).
  void Discard() { discard_ = true; }

 private:
  ConnectionPool* pool_;
  std::unique_ptr<DatabaseConnection> conn_;
  bool discard_ = false;
};

// Runs a new connection's DatabaseConnection::SetUp as its caller's
// statement (one its watchdog cancels); empty: SetUp is called directly.
using ConnectionSetUp = std::function<absl::Status(DatabaseConnection&)>;

// At most "max_size" connections to one database, opened lazily. Thread-safe.
class ConnectionPool {
 public:
  // "conninfo": a libpq connection string (empty: PG* environment variables
  // only), given connect_timeout and keepalive defaults (WithConnectionDefaults). Every new
  // connection reads the database's DHIS2 with "policy" (DatabaseConnection::SetUp): while the
  // newest connection finds a DHIS2 that is not served, Acquire and TryAcquire answer
  // FailedPrecondition naming the version found and the versions served.
  ConnectionPool(std::string conninfo, int max_size, dhis2::VersionPolicy policy = {});

  // The DHIS2 the newest connection found; nullopt before the first connection.
  std::optional<dhis2::Dhis2Version> dhis2_version() const;
  // Called, on the thread that opened the connection and outside the pool's locks, each time a
  // new connection finds another decision than the last one (the first included). Set it
  // before the pool is used.
  void SetVersionObserver(std::function<void(const dhis2::Dhis2Version&)> observer) {
    version_observer_ = std::move(observer);
  }

  // Borrows an idle connection, or opens one if fewer than max_size exist,
  // waiting at most "wait" for one to come back. Unavailable if the database
  // cannot be reached, ResourceExhausted if none came back in time. Opening a
  // connection is bounded by the conninfo's connect_timeout only (10 s unless
  // it sets one), not by "wait".
  absl::StatusOr<PooledConnection> Acquire(std::chrono::milliseconds wait);

  // Acquire, but also gives up, with the status "stopped" returns, as soon as
  // that is not OK (asked about every 50 ms while waiting, and while opening a
  // connection: DatabaseConnection::Open). A new connection is set up through
  // "set_up", whose failure is returned.
  absl::StatusOr<PooledConnection> Acquire(std::chrono::milliseconds wait,
                                           const std::function<absl::Status()>& stopped,
                                           const ConnectionSetUp& set_up = nullptr);

  // Borrows a connection without waiting, only if "keep_available" more could
  // still be borrowed after it (for the exports that may start meanwhile: an
  // extra reader of one export must not make another wait). ResourceExhausted
  // otherwise; Unavailable if a new connection cannot be opened. Opening one
  // gives up, with the status "stopped" returns, as soon as that is not OK
  // (asked about every 50 ms; empty: never). A new connection is set up
  // through "set_up", whose failure is returned.
  absl::StatusOr<PooledConnection> TryAcquire(
      int keep_available, const std::function<absl::Status()>& stopped = nullptr,
      const ConnectionSetUp& set_up = nullptr);

  // The health probe: OK if a new connection to the database answers SELECT 1
  // within "timeout" (db::ProbeDatabase: bounded also when the database
  // accepts TCP and never answers); gives up early once "stopped" returns
  // true. Not a pooled connection (one stuck on a silent database would hold
  // the prober), but counted against max_size until its backend has exited:
  // OK without probing when the pool already holds max_size connections.
  absl::Status Probe(
      std::chrono::milliseconds timeout,
      const std::function<bool()>& stopped = [] { return false; });

  // Connections currently borrowed.
  int in_use() const;

  // The conninfo with its defaults, or why it has none (for connections the pool does not
  // keep: a change stream's replication connection).
  const absl::StatusOr<std::string>& conninfo() const { return conninfo_; }

 private:
  friend class PooledConnection;
  // "conn", unless the DHIS2 its database shows is not served: then that status, and the
  // connection is closed.
  static absl::StatusOr<PooledConnection> Served(absl::StatusOr<PooledConnection> conn);
  // Records what a new connection found (dhis2_version) and tells the observer of a change.
  void NoteVersion(const dhis2::Dhis2Version& version);
  void Release(std::unique_ptr<DatabaseConnection> conn, bool discard);
  // Takes an idle connection or opens one (bounded by "stopped", set up
  // through "set_up"); "lock" holds mu_ and there is room.
  absl::StatusOr<PooledConnection> TakeLocked(std::unique_lock<std::mutex>& lock,
                                              const std::function<absl::Status()>& stopped,
                                              const ConnectionSetUp& set_up)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasRoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !idle_.empty() || open_ < max_size_;
  }

  // The conninfo with its defaults, or why it has none.
  const absl::StatusOr<std::string> conninfo_;
  const int max_size_;
  const dhis2::VersionPolicy version_policy_;
  std::function<void(const dhis2::Dhis2Version&)> version_observer_;
  mutable std::mutex version_mu_;
  std::optional<dhis2::Dhis2Version> version_ ABSL_GUARDED_BY(version_mu_);
  mutable std::mutex mu_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<DatabaseConnection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle + borrowed + being opened
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_CONNECTION_POOL_H_
