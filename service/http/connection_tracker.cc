#include "service/http/connection_tracker.h"

#include <cstdio>
#include <iterator>

#include "common/json_string.h"

namespace dvexport::http {

void ConnectionTracker::ConnectionFailed(const std::string& peer_ip, std::string_view what) {
  failures_.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "{\"event\":\"http_connection_failed\",\"peer\":%s,\"error\":%s}\n",
               common::JsonString(peer_ip).c_str(), common::JsonString(what).c_str());
}

bool ConnectionTracker::Admit(const std::string& peer_ip) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping() || admitted_ >= max_connections_) return false;
  int& from_peer = per_peer_[peer_ip];
  if (from_peer >= max_per_peer_) {
    if (from_peer == 0) per_peer_.erase(peer_ip);
    return false;
  }
  ++from_peer;
  ++admitted_;
  return true;
}

void ConnectionTracker::Add(const std::shared_ptr<HttpConnection>& connection) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.emplace(connection.get(), connection);
}

void ConnectionTracker::Remove(const HttpConnection* connection, const std::string& peer_ip) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(connection);
  auto from_peer = per_peer_.find(peer_ip);
  if (from_peer != per_peer_.end() && --from_peer->second <= 0) per_peer_.erase(from_peer);
  --admitted_;
  changed_.notify_all();
}

std::shared_ptr<HttpConnection> ConnectionTracker::HeadStarted(
    const std::shared_ptr<HttpConnection>& connection) {
  std::lock_guard<std::mutex> lock(mu_);
  if (head_of_.count(connection.get()) != 0) return nullptr;
  heads_.emplace_back(connection.get(), connection);
  head_of_[connection.get()] = std::prev(heads_.end());
  if (static_cast<int>(heads_.size()) <= max_pending_heads_) return nullptr;
  std::shared_ptr<HttpConnection> evicted = heads_.front().second.lock();
  head_of_.erase(heads_.front().first);
  heads_.pop_front();
  ++evicted_heads_;
  return evicted;
}

void ConnectionTracker::HeadEnded(const HttpConnection* connection) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = head_of_.find(connection);
  if (found == head_of_.end()) return;
  heads_.erase(found->second);
  head_of_.erase(found);
}

int ConnectionTracker::pending_heads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(heads_.size());
}

int64_t ConnectionTracker::evicted_heads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evicted_heads_;
}

void ConnectionTracker::ExportStarted() {
  std::lock_guard<std::mutex> lock(mu_);
  ++exports_;
}

void ConnectionTracker::ExportEnded() {
  std::lock_guard<std::mutex> lock(mu_);
  --exports_;
  changed_.notify_all();
}

std::vector<std::shared_ptr<HttpConnection>> ConnectionTracker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true, std::memory_order_release);
  }
  return List();
}

std::vector<std::shared_ptr<HttpConnection>> ConnectionTracker::List() const {
  std::vector<std::shared_ptr<HttpConnection>> list;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, connection] : open_) {
    if (std::shared_ptr<HttpConnection> alive = connection.lock()) list.push_back(alive);
  }
  return list;
}

bool ConnectionTracker::WaitForExports(std::chrono::system_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_until(lock, deadline,
                             [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return exports_ == 0; });
}

void ConnectionTracker::WaitForConnections() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return admitted_ == 0; });
}

int ConnectionTracker::connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admitted_;
}

}  // namespace dvexport::http
