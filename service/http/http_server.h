#ifndef DVEXPORT_SERVICE_HTTP_HTTP_SERVER_H_
#define DVEXPORT_SERVICE_HTTP_HTTP_SERVER_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "service/http/http_connection.h"
#include "service/pipeline/export.h"

namespace dvexport::http {

struct HttpServerOptions {
  // host:port to listen on ("0.0.0.0:8080", "[::]:8080", "localhost:0"); port 0 picks a free one
  // (see port()).
  std::string listen;
  // Threads running the connections (an asio io_context; each connection on a strand of its own).
  int threads = 2;
  // TLS, as the gRPC door's: PEM files of the server's certificate chain and private key; both
  // empty: plaintext HTTP. With "tls_client_ca_file" too, clients must present a certificate that
  // CA signed, and a certificate listed in the pipeline options' client_identities stands for its
  // DHIS2 user.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // Connections open at most; a new one beyond is closed at once, before any byte is read.
  int max_connections = 4096;
  // Connections from one client IP (the socket's peer) at most; beyond: closed at once.
  int max_connections_per_peer = 256;
  // The whole request head (request line and headers, and the small body a GET may carry) must
  // arrive within this long of its first byte (of the accept for a connection's first request,
  // the TLS handshake included), else the connection is closed: a client sending a byte a second
  // holds nothing for long.
  std::chrono::milliseconds header_timeout{10000};
  // A keep-alive connection that sends no byte of its next request for this long is closed.
  std::chrono::milliseconds idle_timeout{30000};
  // Connections waiting for a request's head at most (a connection's first head counts from
  // its accept); one more closes the one that has waited longest. 0: half of max_connections.
  // Must be below max_connections (when that is above 1), so that a complete request always
  // finds a connection slot however many slow heads arrive, from however many addresses.
  int max_pending_heads = 0;
  // Request line and headers, and the trailer of a chunked body, in bytes, at most; beyond: 431
  // (400 for a trailer) and the connection is closed. At most kMaxHeaderBytesLimit.
  size_t max_header_bytes = 32 * 1024;
  // Header and trailer fields at most; beyond: 431 (400 in a trailer), and the connection closes.
  int max_header_fields = 100;
  // The request target, in bytes, at most; beyond: 414 and the connection is closed.
  size_t max_url_bytes = 16 * 1024;
  // Addresses ("10.0.0.1", "::1") or networks ("10.0.0.0/8") of reverse proxies whose
  // X-Forwarded-For is believed, and how many of them stand one behind the other
  // (TrustedProxies::ClientAddress: from a trusted peer, the rightmost entry, and further left
  // only through trusted proxies, at most trusted_proxy_hops entries).
  std::vector<std::string> trusted_proxies;
  int trusted_proxy_hops = 1;
  // Tests only: called with each request's target, on the connection's strand, before it is
  // routed (an exception it throws must end that connection alone).
  std::function<void(std::string_view target)> on_request_for_testing;
};

// The largest max_header_bytes: Beast keeps a field's length in 16 bits (65,535 bytes); the
// door's limits stay below that whatever is configured.
constexpr size_t kMaxHeaderBytesLimit = 63 * 1024;

// DHIS2's GET /api/dataValueSets (and HEAD) over HTTP/1.1 and HTTP/1.0, with or without TLS, on
// Boost.Beast: the HTTP door of the export pipeline, beside the gRPC one. Each request is parsed
// (ParseDataValueSetsRequest) and runs as a pipeline::Export; its chunks go out as HTTP chunks,
// one write at a time, so that the client's pace holds back the readers (HttpConnection says how
// each outcome is written). Other paths answer 404, other methods on the export's paths 405.
// Thread-safe.
class HttpServer {
 public:
  // Binds, and starts serving on "options.threads" threads. InvalidArgument for options that
  // cannot work (threads below 1, a listen address without a port, TLS files that do not load,
  // a trusted proxy that is neither an address nor a network); Unavailable when the address
  // cannot be bound. "*pipeline" must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                           pipeline::ExportPipeline* pipeline);

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Shutdown(now) unless Shutdown was called.
  ~HttpServer();

  // The port actually bound.
  int port() const { return port_; }

  // Connections open now; those waiting for a request's head, and those closed for a newer one.
  int connections() const { return tracker_.connections(); }
  int pending_heads() const { return tracker_.pending_heads(); }
  int64_t evicted_heads() const { return tracker_.evicted_heads(); }
  // Exceptions that left a handler of the door's threads (each ended its connection, or was
  // caught around the event loop), since the start.
  int64_t connection_failures() const { return tracker_.failures() + failures_.load(); }

  // Stops accepting and closes the connections that run no export; exports still running at
  // "deadline" are cancelled (an export still waiting for its first chunk answers 503); once
  // every export has ended and every connection is closed, the threads are joined. Blocks until
  // then; later calls return at once. Not from the server's own threads.
  void Shutdown(std::chrono::system_clock::time_point deadline);

 private:
  HttpServer(const HttpServerOptions& options, pipeline::ExportPipeline* pipeline,
             TrustedProxies proxies);

  // Runs the event loop on one of the door's threads until Shutdown; an exception that escapes
  // a handler is logged and the loop goes on.
  void Run();
  // Accepts the next connection.
  void Accept();
  void OnAccept(const boost::system::error_code& error, boost::asio::ip::tcp::socket socket);

  const HttpServerOptions options_;
  const TrustedProxies proxies_;
  std::unique_ptr<boost::asio::ssl::context> tls_;  // null: plaintext
  ConnectionTracker tracker_;
  ConnectionShared shared_;
  boost::asio::io_context io_;
  boost::asio::strand<boost::asio::io_context::executor_type> accept_strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;  // after EMFILE and the like; on accept_strand_
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  int port_ = 0;
  std::atomic<int64_t> failures_{0};

  std::mutex shutdown_mu_;
  bool shut_down_ = false;  // guarded by shutdown_mu_
};

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_HTTP_SERVER_H_
