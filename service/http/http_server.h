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
#include "service/http/connection_tracker.h"
#include "service/http/http_connection.h"
#include "service/http/http_options.h"
#include "service/http/trusted_proxies.h"
#include "service/pipeline/export.h"

namespace dvexport::http {

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
