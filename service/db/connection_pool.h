#ifndef DVEXPORT_SERVICE_DB_CONNECTION_POOL_H_
#define DVEXPORT_SERVICE_DB_CONNECTION_POOL_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "service/db/pg_connection.h"

namespace dvexport::db {

class ConnectionPool;

// A connection borrowed from the pool; returned when destroyed. A broken
// connection is dropped instead of returned.
class PooledConnection {
 public:
  PooledConnection(ConnectionPool* pool, std::unique_ptr<PgConnection> conn)
      : pool_(pool), conn_(std::move(conn)) {}
  PooledConnection(PooledConnection&&) = default;
  PooledConnection& operator=(PooledConnection&&) = delete;
  ~PooledConnection();

  PgConnection* operator->() const { return conn_.get(); }
  PgConnection& operator*() const { return *conn_; }

 private:
  ConnectionPool* pool_;
  std::unique_ptr<PgConnection> conn_;
};

// At most "max_size" connections to one database, opened lazily. Thread-safe.
class ConnectionPool {
 public:
  ConnectionPool(std::string conninfo, int max_size);

  // Borrows an idle connection, or opens one if fewer than max_size exist,
  // waiting at most "wait" for one to come back. Unavailable if the database
  // cannot be reached, ResourceExhausted if none came back in time.
  absl::StatusOr<PooledConnection> Acquire(std::chrono::milliseconds wait);

  // Borrows a connection without waiting, only if "keep_available" more could
  // still be borrowed after it (for the exports that may start meanwhile: an
  // extra reader of one export must not make another wait). ResourceExhausted
  // otherwise; Unavailable if a new connection cannot be opened.
  absl::StatusOr<PooledConnection> TryAcquire(int keep_available);

  // Connections currently borrowed.
  int in_use() const;

 private:
  friend class PooledConnection;
  void Release(std::unique_ptr<PgConnection> conn);
  // Takes an idle connection or opens one; "lock" holds mu_ and there is room.
  absl::StatusOr<PooledConnection> TakeLocked(std::unique_lock<std::mutex>& lock);

  const std::string conninfo_;
  const int max_size_;
  mutable std::mutex mu_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<PgConnection>> idle_;
  int open_ = 0;  // idle + borrowed + being opened
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_CONNECTION_POOL_H_
