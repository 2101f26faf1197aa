#ifndef DVEXPORT_SERVICE_HTTP_HTTP_OPTIONS_H_
#define DVEXPORT_SERVICE_HTTP_HTTP_OPTIONS_H_

// The HTTP door's options: what HttpServer is started with and every connection reads.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_HTTP_OPTIONS_H_
