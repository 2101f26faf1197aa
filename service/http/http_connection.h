#ifndef DVEXPORT_SERVICE_HTTP_HTTP_CONNECTION_H_
#define DVEXPORT_SERVICE_HTTP_HTTP_CONNECTION_H_

#include <array>
#include <atomic>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "service/pipeline/export.h"

namespace dvexport::http {

struct HttpServerOptions;

// The reverse proxies whose X-Forwarded-For is believed, and how many of them a request passes.
class TrustedProxies {
 public:
  // "entries": addresses ("10.0.0.1", "::1") or networks in CIDR form ("10.0.0.0/8", "fd00::/8");
  // InvalidArgument naming the first entry that is neither. "hops": the trusted proxies in
  // front of dvexport, one behind the other (1 to 10).
  static absl::StatusOr<TrustedProxies> Parse(const std::vector<std::string>& entries,
                                              int hops = 1);

  // Whether "address" is one of them (an IPv4-mapped IPv6 address counts as its IPv4 address).
  bool Contains(const boost::asio::ip::address& address) const;

  // The client's address as text ("10.0.0.7", "::1"): "peer" (the socket's) unless it is a
  // trusted proxy; X-Forwarded-For is never read otherwise. From a trusted proxy, the addresses
  // of "forwarded_for" (the X-Forwarded-For values in the order they came, each a
  // comma-separated list) are taken from the right, hop by hop, as Express's "trust proxy = N":
  // the rightmost is the address the proxy itself saw; the walk goes further left only through
  // addresses that are themselves trusted proxies, and at most "hops" entries in all. So a
  // client that happens to sit inside a trusted range cannot move its own address: what it
  // writes into X-Forwarded-For lies left of what its proxy appended. An entry that is not an
  // address (or no entry at all) ends the walk at the last address believed.
  std::string ClientAddress(const boost::asio::ip::address& peer,
                            const std::vector<std::string_view>& forwarded_for) const;

  int hops() const { return hops_; }

 private:
  struct Network {
    bool v6 = false;
    std::array<unsigned char, 16> bytes{};
    int prefix = 0;  // leading bits that must match
  };
  std::vector<Network> networks_;
  int hops_ = 1;
};

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
  // the one that has waited longest is told to close (HttpConnection::EvictSlowHead): many slow
  // heads, from however many addresses, never hold every connection slot.
  void HeadStarted(const std::shared_ptr<HttpConnection>& connection);
  void HeadEnded(const HttpConnection* connection);
  // Connections waiting for a head now, and how many were closed for a newer one.
  int pending_heads() const;
  int64_t evicted_heads() const;

  // An exception ended a connection (HttpConnection), and how many did so far.
  void CountFailure() { failures_.fetch_add(1, std::memory_order_relaxed); }
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

// What every connection of one server shares; all outlive the connections.
struct ConnectionShared {
  const HttpServerOptions* options = nullptr;
  pipeline::ExportPipeline* pipeline = nullptr;
  boost::asio::ssl::context* tls = nullptr;  // null: plaintext
  const TrustedProxies* proxies = nullptr;
  ConnectionTracker* tracker = nullptr;
};

// One client connection of the HTTP door, on a strand of its own: requests one after the other
// (keep-alive), each a refusal or one pipeline::Export whose Ready and Abort come back to the
// strand. How an export is written:
// - a refusal before the first chunk (kDone with an error): RefusalResponse with Content-Length,
//   and the connection is kept;
// - the first chunk: 200 with the request's headers, Transfer-Encoding: chunked and the export's
//   Dvexport-Change-Token; each data chunk then goes out as one HTTP chunk, one write at a time,
//   the next taken only once the last write completed (and was reported Sent): memory per
//   connection stays one chunk;
// - the trailer: the last chunk; the connection is kept (unless the request said otherwise);
// - a failure after the 200: the connection is closed without the last chunk, so that the client
//   sees a broken transfer, never a complete-looking file;
// - HTTP/1.0: no chunked encoding; the body ends when the connection closes;
// - HEAD: the export runs until its first chunk (or its refusal), so that the headers are GET's;
//   the headers are sent, the export is cancelled, and the connection kept;
// - a client that goes away (a failed write, or a socket no longer ESTABLISHED, checked every
//   200 ms while an export runs) cancels the export; a stalled client (Abort) has its connection
//   closed. The connection keeps the Export until TakeNext returned kDone.
class HttpConnection : public pipeline::ExportConsumer,
                       public std::enable_shared_from_this<HttpConnection> {
 public:
  // Admits "socket" (ConnectionTracker::Admit; else closes it and returns null), registers it,
  // and starts serving it (the TLS handshake first, when "shared.tls" is set). "socket" must run
  // on a strand of its own.
  static std::shared_ptr<HttpConnection> Start(boost::asio::ip::tcp::socket socket,
                                               const ConnectionShared& shared);

  // Shutdown, first step: closes the connection unless an export or a response is under way
  // (the connection then closes once it is done). Any thread.
  virtual void Stop() = 0;
  // Shutdown, at the deadline: cancels the export (the client gets 503 if nothing was sent yet)
  // and closes the connection. Any thread.
  virtual void CancelExport() = 0;
  // Closes the connection if it still waits for a request's head (ConnectionTracker::HeadStarted
  // found too many waiting). Any thread.
  virtual void EvictSlowHead() = 0;

 protected:
  HttpConnection() = default;
  // The first step, on the connection's strand.
  virtual void Begin() = 0;
};

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_HTTP_CONNECTION_H_
