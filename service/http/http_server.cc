#include "service/http/http_server.h"

#include <algorithm>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json_string.h"
#include "service/http/tls_identity.h"

namespace dvexport::http {
namespace {

namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;
using boost::system::error_code;

// How long accepting pauses after the process ran out of descriptors (or memory): the
// connection stays in the backlog until one is free.
constexpr std::chrono::milliseconds kAcceptRetry{100};

// "host:port" ("[::1]:8080" for an IPv6 address) as host and port.
absl::StatusOr<std::pair<std::string, std::string>> SplitListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("the HTTP listen address \"", listen, "\" is not host:port"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, listen.substr(colon + 1));
}

int PendingHeadsOf(const HttpServerOptions& options) {
  if (options.max_pending_heads > 0) return options.max_pending_heads;
  return std::max(1, options.max_connections / 2);
}

}  // namespace

HttpServer::HttpServer(const HttpServerOptions& options, pipeline::ExportPipeline* pipeline,
                       TrustedProxies proxies)
    : options_(options),
      proxies_(std::move(proxies)),
      tracker_(options.max_connections, options.max_connections_per_peer, PendingHeadsOf(options)),
      io_(options.threads),
      accept_strand_(net::make_strand(io_)),
      acceptor_(accept_strand_),
      accept_retry_(accept_strand_),
      work_(io_.get_executor()) {
  shared_.options = &options_;
  shared_.pipeline = pipeline;
  shared_.proxies = &proxies_;
  shared_.tracker = &tracker_;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                              pipeline::ExportPipeline* pipeline) {
  if (options.threads < 1) return absl::InvalidArgumentError("the HTTP door needs a thread");
  if (options.max_connections < 1 || options.max_connections_per_peer < 1) {
    return absl::InvalidArgumentError("the HTTP door's connection limits must be at least 1");
  }
  if (options.max_pending_heads < 0 ||
      (options.max_connections > 1 && options.max_pending_heads >= options.max_connections)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the HTTP door's pending heads (", options.max_pending_heads,
                     ") must be below its connections (", options.max_connections,
                     "), so that a complete request always finds a slot"));
  }
  if (options.max_header_bytes < 1024 || options.max_header_bytes > kMaxHeaderBytesLimit ||
      options.max_url_bytes < 1 || options.max_url_bytes > options.max_header_bytes ||
      options.max_header_fields < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the HTTP door's request limits are out of range: header bytes ", options.max_header_bytes,
        " (1 KiB to ", kMaxHeaderBytesLimit / 1024, " KiB), URL bytes ", options.max_url_bytes,
        " (at most the header bytes), fields ", options.max_header_fields, " (at least 1)"));
  }
  absl::StatusOr<TrustedProxies> proxies =
      TrustedProxies::Parse(options.trusted_proxies, options.trusted_proxy_hops);
  if (!proxies.ok()) return proxies.status();
  absl::StatusOr<std::unique_ptr<net::ssl::context>> tls = MakeTlsContext(options);
  if (!tls.ok()) return tls.status();
  absl::StatusOr<std::pair<std::string, std::string>> listen = SplitListen(options.listen);
  if (!listen.ok()) return listen.status();

  std::unique_ptr<HttpServer> server(new HttpServer(options, pipeline, *std::move(proxies)));
  server->tls_ = *std::move(tls);
  server->shared_.tls = server->tls_.get();

  error_code error;
  tcp::resolver resolver(server->io_);
  const tcp::resolver::results_type resolved =
      resolver.resolve(listen->first, listen->second, tcp::resolver::passive, error);
  if (error || resolved.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the HTTP listen address \"", options.listen,
                                                   "\" does not resolve: ", error.message()));
  }
  const tcp::endpoint endpoint = resolved.begin()->endpoint();
  tcp::acceptor& acceptor = server->acceptor_;
  acceptor.open(endpoint.protocol(), error);
  if (!error) acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  // "[::]" serves IPv4 too, as gRPC's does.
  if (!error && endpoint.address().is_v6() && endpoint.address().is_unspecified()) {
    acceptor.set_option(net::ip::v6_only(false), error);
  }
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(net::socket_base::max_listen_connections, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("the HTTP door cannot listen on ", options.listen, ": ", error.message()));
  }
  server->port_ = acceptor.local_endpoint(error).port();

  net::post(server->accept_strand_, [s = server.get()] { s->Accept(); });
  for (int i = 0; i < options.threads; ++i) {
    server->threads_.emplace_back([s = server.get()] { s->Run(); });
  }
  return server;
}

HttpServer::~HttpServer() { Shutdown(std::chrono::system_clock::now()); }

void HttpServer::Run() {
  // Each connection catches what its own handlers throw (HttpConnection); this is the last line,
  // for the acceptor's handlers and anything else: asio's run may be called again after an
  // exception left it.
  for (;;) {
    try {
      io_.run();
      return;
    } catch (const std::exception& error) {
      failures_.fetch_add(1);
      std::fprintf(stderr, "{\"event\":\"http_loop_exception\",\"error\":%s}\n",
                   common::JsonString(error.what()).c_str());
    } catch (...) {
      failures_.fetch_add(1);
      std::fprintf(stderr, "{\"event\":\"http_loop_exception\",\"error\":\"unknown\"}\n");
    }
  }
}

void HttpServer::Accept() {
  acceptor_.async_accept(
      net::make_strand(io_),
      [this](const error_code& error, tcp::socket socket) { OnAccept(error, std::move(socket)); });
}

void HttpServer::OnAccept(const error_code& error, tcp::socket socket) {
  if (!acceptor_.is_open() || error == net::error::operation_aborted) return;
  if (error) {
    const int code = error.value();
    if (error.category() == boost::system::system_category() &&
        (code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM)) {
      accept_retry_.expires_after(kAcceptRetry);
      accept_retry_.async_wait([this](const error_code& waited) {
        if (!waited && acceptor_.is_open()) Accept();
      });
      return;
    }
    // An error of that one connection (ECONNABORTED and the like): on to the next.
    Accept();
    return;
  }
  // Closed at once when over a limit (HttpConnection::Start).
  HttpConnection::Start(std::move(socket), shared_);
  Accept();
}

void HttpServer::Shutdown(std::chrono::system_clock::time_point deadline) {
  std::lock_guard<std::mutex> lock(shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  std::vector<std::shared_ptr<HttpConnection>> connections = tracker_.Stop();
  net::post(accept_strand_, [this] {
    error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  });
  for (const std::shared_ptr<HttpConnection>& connection : connections) connection->Stop();
  connections.clear();
  if (!tracker_.WaitForExports(deadline)) {
    for (const std::shared_ptr<HttpConnection>& connection : tracker_.List()) {
      connection->CancelExport();
    }
  }
  // Every export ends within about 100 ms of its Cancel; every other step of a connection is
  // bounded by header_timeout, idle_timeout or the close's grace.
  tracker_.WaitForConnections();
  work_.reset();
  io_.stop();
  for (std::thread& thread : threads_) thread.join();
}

}  // namespace dvexport::http
