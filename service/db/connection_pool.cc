#include "service/db/connection_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <pqxx/except>
#include <pqxx/nontransaction>

#include "absl/strings/str_cat.h"
#include "service/db/database_error.h"
#include "service/db/libpq_gaps.h"

namespace dvexport::db {

namespace {

// What bounds the connects the calling thread makes while it lives: set by
// DatabaseConnection::Open for BoundedConnect::do_startconnect, which libpqxx
// 6.4 calls from inside the connection's constructor with nothing but the
// conninfo. Nests (the innermost bounds).
class ConnectBound {
 public:
  explicit ConnectBound(const std::function<absl::Status()>& stopped)
      : stopped_(stopped), outer_(current_) {
    current_ = this;
  }
  ~ConnectBound() { current_ = outer_; }
  ConnectBound(const ConnectBound&) = delete;
  ConnectBound& operator=(const ConnectBound&) = delete;

  // The calling thread's innermost bound; null if none.
  static ConnectBound* current() { return current_; }

  // Asks "stopped" (no more once it said so): true if the connect must give up.
  bool Stopped() {
    if (status_.ok() && stopped_) status_ = stopped_();
    return !status_.ok();
  }

  // What "stopped" said when it stopped the connect; OK if it never did.
  const absl::Status& status() const { return status_; }

 private:
  const std::function<absl::Status()>& stopped_;
  absl::Status status_;
  ConnectBound* const outer_;
  static thread_local ConnectBound* current_;
};

thread_local ConnectBound* ConnectBound::current_ = nullptr;

}  // namespace

thread_local BoundedConnect::handle BoundedConnect::last_ = nullptr;

BoundedConnect::handle BoundedConnect::do_startconnect(handle orig) {
  // libpqxx 6.4 calls this again from activate() with the connection it already has.
  if (orig != nullptr) {
    last_ = orig;
    return orig;
  }
  ConnectBound* const bound = ConnectBound::current();
  ConnectResult result = ConnectWithin(options(), std::chrono::steady_clock::time_point::max(),
                                       [bound] { return bound != nullptr && bound->Stopped(); });
  // ConnectWithin closed what it started: when this throws, libpqxx holds no connection (the
  // constructor fails; activate() disconnects a null handle and rethrows).
  if (result.end != ConnectEnd::kConnected) throw pqxx::broken_connection(result.message);
  last_ = result.conn;
  return last_;
}

BoundedConnect::handle BoundedConnect::TakeLast() {
  handle last = last_;
  last_ = nullptr;
  return last;
}

// Reactivation is inhibited right after (Connect), so the handle and the socket stay the same
// for the connection's lifetime.
DatabaseConnection::DatabaseConnection(const std::string& conninfo)
    : basic_connection_base(conninfo),
      cancel_request_(CancelRequest::For(BoundedConnect::TakeLast())),
      socket_(sock() < 0 ? -1 : fcntl(sock(), F_DUPFD_CLOEXEC, 0)) {}

DatabaseConnection::~DatabaseConnection() {
  if (socket_ >= 0) ::close(socket_);
}

void DatabaseConnection::Sever() {
  if (severed_.exchange(true) || socket_ < 0) return;
  ::shutdown(socket_, SHUT_RDWR);
}

absl::StatusOr<std::unique_ptr<DatabaseConnection>> DatabaseConnection::Open(
    const std::string& conninfo, const std::function<absl::Status()>& stopped) {
  std::unique_ptr<DatabaseConnection> conn;
  ConnectBound bound(stopped);
  try {
    conn.reset(new DatabaseConnection(conninfo));
  } catch (const std::exception& e) {
    // Stopped by the caller: its status (the call's deadline or cancel), not the database's.
    if (!bound.status().ok()) return bound.status();
    return ConnectFailedStatus(e.what());
  }
  // A broken connection is dropped by the pool: libpqxx must not reconnect it
  // silently, without these settings.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  conn->inhibit_reactivation(true);
#pragma GCC diagnostic pop
  return conn;
}

absl::Status DatabaseConnection::SetUp() {
  try {
    // Set at connect: PgBouncer in transaction pooling re-applies these reported parameters
    // to whichever server connection runs our transactions.
    pqxx::nontransaction tx(*this);
    tx.exec("SET client_encoding = 'UTF8'; SET DateStyle = 'ISO'; SET TimeZone = 'UTC'");
    dhis2_schema_ = ReadDhis2Schema(tx, version_policy_);
  } catch (...) {
    return CurrentExceptionStatus("setting up a new database connection", StopCause::kNone,
                                  !is_open());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DatabaseConnection>> DatabaseConnection::Connect(
    const std::string& conninfo) {
  absl::StatusOr<std::unique_ptr<DatabaseConnection>> conn = Open(conninfo);
  if (!conn.ok()) return conn.status();
  absl::Status status = (*conn)->SetUp();
  if (!status.ok()) return status;
  return conn;
}

bool DatabaseConnection::StillConnected() {
  // An idle connection that does not LISTEN hears from the server only when its backend ends:
  // a FATAL message (pg_terminate_backend, a shutdown), then the end of the socket. Anything
  // readable means the connection is going, even while the end itself is still on its way:
  // the backend sends the message before it leaves pg_stat_activity, and closes the socket
  // only after.
  if (socket_ >= 0) {
    pollfd fd{socket_, POLLIN, 0};
    if (::poll(&fd, 1, 0) > 0) return false;
  }
  try {
    // A terminated backend sends its last message, then closes the socket: the first read
    // consumes the message, the second sees the end.
    get_notifs();
    get_notifs();
  } catch (...) {
    return false;
  }
  return is_open();
}

PooledConnection::~PooledConnection() {
  if (conn_ != nullptr) pool_->Release(std::move(conn_), discard_);
}

ConnectionPool::ConnectionPool(std::string conninfo, int max_size, dhis2::VersionPolicy policy)
    : conninfo_(WithConnectionDefaults(conninfo)),
      max_size_(max_size < 1 ? 1 : max_size),
      version_policy_(std::move(policy)) {}

std::optional<dhis2::Dhis2Version> ConnectionPool::dhis2_version() const {
  std::lock_guard<std::mutex> lock(version_mu_);
  return version_;
}

namespace {

bool SameDecision(const dhis2::Dhis2Version& a, const dhis2::Dhis2Version& b) {
  return a.found == b.found && a.served == b.served && a.source == b.source &&
         a.evidence == b.evidence && a.warning == b.warning && a.support == b.support;
}

}  // namespace

void ConnectionPool::NoteVersion(const dhis2::Dhis2Version& version) {
  {
    std::lock_guard<std::mutex> lock(version_mu_);
    if (version_.has_value() && SameDecision(*version_, version)) return;
    version_ = version;
  }
  if (version_observer_) version_observer_(version);
}

absl::StatusOr<PooledConnection> ConnectionPool::Served(absl::StatusOr<PooledConnection> conn) {
  if (!conn.ok()) return conn;
  const absl::Status support = (*conn)->dhis2_schema().version.support;
  if (!support.ok()) {
    // Closed, not kept: the next call reads the database again on a new connection (a
    // GRANT on flyway_schema_history, a corrected --pg, an upgrade is seen at once).
    conn->Discard();
    return support;
  }
  return conn;
}

absl::StatusOr<PooledConnection> ConnectionPool::Acquire(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!returned_.wait_for(lock, wait,
                          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return HasRoomLocked(); })) {
    return absl::ResourceExhaustedError(
        absl::StrCat("all ", max_size_, " database connections are busy"));
  }
  absl::StatusOr<PooledConnection> conn = TakeLocked(lock, nullptr, nullptr);
  if (lock.owns_lock()) lock.unlock();  // Served may release a connection: that takes mu_
  return Served(std::move(conn));
}

absl::StatusOr<PooledConnection> ConnectionPool::Acquire(
    std::chrono::milliseconds wait, const std::function<absl::Status()>& stopped,
    const ConnectionSetUp& set_up) {
  constexpr std::chrono::milliseconds kPoll{50};
  const auto until = std::chrono::steady_clock::now() + wait;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    absl::Status status = stopped();
    if (!status.ok()) return status;
    if (HasRoomLocked()) {
      absl::StatusOr<PooledConnection> conn = TakeLocked(lock, stopped, set_up);
      if (lock.owns_lock()) lock.unlock();  // Served may release a connection: that takes mu_
      return Served(std::move(conn));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) {
      return absl::ResourceExhaustedError(
          absl::StrCat("all ", max_size_, " database connections are busy"));
    }
    returned_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(until - now, kPoll));
  }
}

absl::StatusOr<PooledConnection> ConnectionPool::TryAcquire(
    int keep_available, const std::function<absl::Status()>& stopped,
    const ConnectionSetUp& set_up) {
  std::unique_lock<std::mutex> lock(mu_);
  const int in_use = open_ - static_cast<int>(idle_.size());
  if (max_size_ - in_use - 1 < keep_available) {
    return absl::ResourceExhaustedError(
        absl::StrCat(in_use, " of ", max_size_, " database connections are busy"));
  }
  absl::StatusOr<PooledConnection> conn = TakeLocked(lock, stopped, set_up);
  if (lock.owns_lock()) lock.unlock();  // Served may release a connection: that takes mu_
  return Served(std::move(conn));
}

absl::StatusOr<PooledConnection> ConnectionPool::TakeLocked(
    std::unique_lock<std::mutex>& lock, const std::function<absl::Status()>& stopped,
    const ConnectionSetUp& set_up) {
  // An idle connection may have died meanwhile (backend terminated, server
  // restarted): drop those and open a fresh one instead.
  while (!idle_.empty()) {
    std::unique_ptr<DatabaseConnection> conn = std::move(idle_.back());
    idle_.pop_back();
    if (conn->StillConnected()) return PooledConnection(this, std::move(conn));
    --open_;
  }
  if (!conninfo_.ok()) return conninfo_.status();
  ++open_;
  lock.unlock();
  absl::StatusOr<std::unique_ptr<DatabaseConnection>> conn =
      DatabaseConnection::Open(*conninfo_, stopped);
  absl::Status status = conn.status();
  if (status.ok()) {
    (*conn)->set_version_policy(version_policy_);
    status = set_up ? set_up(**conn) : (*conn)->SetUp();
  }
  if (status.ok()) NoteVersion((*conn)->dhis2_schema().version);
  if (!status.ok()) {
    if (conn.ok()) conn->reset();  // closed outside the lock
    lock.lock();
    --open_;
    returned_.notify_one();
    return status;
  }
  return PooledConnection(this, *std::move(conn));
}

void ConnectionPool::Release(std::unique_ptr<DatabaseConnection> conn, bool discard) {
  const bool reuse = !discard && conn->is_open() && !conn->severed();
  if (!reuse) conn.reset();  // closed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  if (reuse) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
  returned_.notify_one();
}

int ConnectionPool::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_ - static_cast<int>(idle_.size());
}

absl::Status ConnectionPool::Probe(std::chrono::milliseconds timeout,
                                   const std::function<bool()>& stopped) {
  if (!conninfo_.ok()) return conninfo_.status();
  {
    // The probe's connection counts against max_size_ like the others. A full pool has
    // connections the database answered (idle ones are checked again on checkout).
    std::lock_guard<std::mutex> lock(mu_);
    if (open_ >= max_size_) return absl::OkStatus();
    ++open_;
  }
  absl::Status status =
      ProbeDatabase(*conninfo_, std::chrono::steady_clock::now() + timeout, stopped);
  {
    std::lock_guard<std::mutex> lock(mu_);
    --open_;
  }
  returned_.notify_one();
  return status;
}

}  // namespace dvexport::db
