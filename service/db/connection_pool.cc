#include "service/db/connection_pool.h"

#include "absl/strings/str_cat.h"

namespace dvexport::db {

PooledConnection::~PooledConnection() {
  if (conn_ != nullptr) pool_->Release(std::move(conn_));
}

ConnectionPool::ConnectionPool(std::string conninfo, int max_size)
    : conninfo_(std::move(conninfo)), max_size_(max_size < 1 ? 1 : max_size) {}

absl::StatusOr<PooledConnection> ConnectionPool::Acquire(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  bool ready = returned_.wait_for(lock, wait, [&] { return !idle_.empty() || open_ < max_size_; });
  if (!ready) {
    return absl::ResourceExhaustedError(
        absl::StrCat("all ", max_size_, " database connections are busy"));
  }
  return TakeLocked(lock);
}

absl::StatusOr<PooledConnection> ConnectionPool::TryAcquire(int keep_available) {
  std::unique_lock<std::mutex> lock(mu_);
  const int in_use = open_ - static_cast<int>(idle_.size());
  if (max_size_ - in_use - 1 < keep_available) {
    return absl::ResourceExhaustedError(
        absl::StrCat(in_use, " of ", max_size_, " database connections are busy"));
  }
  return TakeLocked(lock);
}

absl::StatusOr<PooledConnection> ConnectionPool::TakeLocked(std::unique_lock<std::mutex>& lock) {
  // An idle connection may have died meanwhile (backend terminated, server
  // restarted): drop those and open a fresh one instead.
  while (!idle_.empty()) {
    std::unique_ptr<PgConnection> conn = std::move(idle_.back());
    idle_.pop_back();
    if (conn->StillConnected()) return PooledConnection(this, std::move(conn));
    --open_;
  }
  ++open_;
  lock.unlock();
  absl::StatusOr<std::unique_ptr<PgConnection>> conn = PgConnection::Connect(conninfo_);
  if (!conn.ok()) {
    lock.lock();
    --open_;
    returned_.notify_one();
    return conn.status();
  }
  return PooledConnection(this, *std::move(conn));
}

void ConnectionPool::Release(std::unique_ptr<PgConnection> conn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (conn->ReadyForReuse()) {
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

}  // namespace dvexport::db
