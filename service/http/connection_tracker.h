#ifndef DVEXPORT_SERVICE_HTTP_CONNECTION_TRACKER_H_
#define DVEXPORT_SERVICE_HTTP_CONNECTION_TRACKER_H_

// The HTTP door's connection limits and shutdown list: how many connections are open, in all and
// per client, which wait for a request's head, and the exports they run (no I/O).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace dvexport::http {

// Defined in service/http/http_connection.h; the tracker only counts and lists connections.
class HttpConnection;

// The connections of one server: how many are open, in all and per client IP, the exports they
// run, and the list Shutdown works through. Thread-safe.
class ConnectionTracker {
 public:
  // "max_pending_heads": connections waiting for a request's head at most (below
  // "max_connections", so that a complete request always finds a slot).
  ConnectionTracker(int max_connections, int max_per_peer, int max_pending_heads)
      : max_connections_(max_connections),
        max_per_peer_(max_per_peer),
        max_pending_heads_(max_pending_heads) {}

  // Counts a new connection from "peer_ip"; false, counting nothing, when either limit is reached
  // or the server is stopping (the connection is then closed at once). An admitted connection is
  // registered with Add and counted until Remove.
  bool Admit(const std::string& peer_ip);
  void Add(const std::shared_ptr<HttpConnection>& connection);
  void Remove(const HttpConnection* connection, const std::string& peer_ip);

  // A connection began waiting for a request's head (from its accept, its TLS handshake
  // included, or from the first byte of a keep-alive connection's next request), or stopped
  // waiting (the head arrived, or the connection ends). When more than max_pending_heads wait,
  // the one that has waited longest stops counting and is returned, for the caller to tell it to
  // close (HttpConnection::EvictSlowHead) outside the tracker's lock: many slow heads, from
  // however many addresses, never hold every connection slot. Null when none is evicted.
  [[nodiscard]] std::shared_ptr<HttpConnection> HeadStarted(
      const std::shared_ptr<HttpConnection>& connection);
  void HeadEnded(const HttpConnection* connection);
  // Connections waiting for a head now, and how many were closed for a newer one.
  int pending_heads() const;
  int64_t evicted_heads() const;

  // An exception ended a connection (HttpConnection) of "peer_ip": counted, and logged as one line
  // on stderr naming "what" (never request bytes or credentials). And how many did so far.
  void ConnectionFailed(const std::string& peer_ip, std::string_view what);
  int64_t failures() const { return failures_.load(std::memory_order_relaxed); }

  // An export started or ended (its Export destroyed) on one of the connections.
  void ExportStarted();
  void ExportEnded();

  // From now on no connection is admitted and stopping() is true; the connections registered.
  std::vector<std::shared_ptr<HttpConnection>> Stop();
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }
  // The connections registered now.
  std::vector<std::shared_ptr<HttpConnection>> List() const;

  // Waits until no export runs or "deadline" passed; true if none runs.
  bool WaitForExports(std::chrono::system_clock::time_point deadline);
  // Waits until every connection was removed.
  void WaitForConnections();

  int connections() const;

 private:
  const int max_connections_;
  const int max_per_peer_;
  const int max_pending_heads_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> failures_{0};

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::unordered_map<const HttpConnection*, std::weak_ptr<HttpConnection>> open_
      ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, int> per_peer_ ABSL_GUARDED_BY(mu_);
  // The connections waiting for a head, the longest-waiting first, and where each is in it.
  std::list<std::pair<const HttpConnection*, std::weak_ptr<HttpConnection>>> heads_
      ABSL_GUARDED_BY(mu_);
  std::unordered_map<const HttpConnection*, decltype(heads_)::iterator> head_of_
      ABSL_GUARDED_BY(mu_);
  int64_t evicted_heads_ ABSL_GUARDED_BY(mu_) = 0;
  int admitted_ ABSL_GUARDED_BY(mu_) = 0;
  int exports_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_CONNECTION_TRACKER_H_
