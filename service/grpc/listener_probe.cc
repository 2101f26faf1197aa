#include "service/grpc/listener_probe.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dvexport::grpc_door {
namespace {

using Clock = std::chrono::steady_clock;

// The HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113 3.4, 6.5).
constexpr char kClientPreface[] =
    "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
constexpr size_t kClientPrefaceLength = sizeof(kClientPreface) - 1;
constexpr size_t kFrameHeaderLength = 9;
constexpr unsigned char kSettingsFrame = 0x04;
constexpr unsigned char kAckFlag = 0x01;
// A TLS record header: content type (22 handshake, 21 alert), version major 3, minor, length.
constexpr size_t kTlsRecordHeaderLength = 5;
constexpr unsigned char kTlsHandshake = 22;
constexpr unsigned char kTlsAlert = 21;

// Closes the descriptor when it goes.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  const int fd_;
};

// Milliseconds left until "deadline" for poll(2), at least 0.
int MillisecondsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Waits for "events" on "fd" until "deadline"; false on timeout or a poll error.
bool PollUntil(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int ready = poll(&entry, 1, MillisecondsLeft(deadline));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return false;
  }
}

absl::Status Connect(const ListenerAddress& listener, int fd, Clock::time_point deadline) {
  if (connect(fd, reinterpret_cast<const sockaddr*>(&listener.address), listener.length) == 0) {
    return absl::OkStatus();
  }
  if (errno != EINPROGRESS) {
    return absl::UnavailableError(
        absl::StrCat("connect to ", listener.name, ": ", std::strerror(errno)));
  }
  if (!PollUntil(fd, POLLOUT, deadline)) {
    return absl::UnavailableError(absl::StrCat("connect to ", listener.name, ": timed out"));
  }
  int error = 0;
  socklen_t length = sizeof(error);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("connect to ", listener.name, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

absl::Status SendAll(const ListenerAddress& listener, int fd, const char* data, size_t size,
                     Clock::time_point deadline) {
  while (size > 0) {
    const ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
    if (sent > 0) {
      data += sent;
      size -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && PollUntil(fd, POLLOUT, deadline)) {
      continue;
    }
    return absl::UnavailableError(absl::StrCat("writing to ", listener.name, ": ",
                                               sent < 0 ? std::strerror(errno) : "timed out"));
  }
  return absl::OkStatus();
}

// Reads exactly "size" bytes into "out" by "deadline".
absl::Status ReceiveExactly(const ListenerAddress& listener, int fd, unsigned char* out,
                            size_t size, Clock::time_point deadline, absl::string_view awaited) {
  size_t got = 0;
  while (got < size) {
    const ssize_t n = recv(fd, out + got, size - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      return absl::UnavailableError(
          absl::StrCat(listener.name, " closed the connection before ", awaited));
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return absl::UnavailableError(absl::StrCat("reading from ", listener.name, ": ",
                                                 std::strerror(errno), " before ", awaited));
    }
    if (!PollUntil(fd, POLLIN, deadline)) {
      return absl::UnavailableError(
          absl::StrCat("no ", awaited, " from ", listener.name,
                       " in time: the connection was made, but nothing accepted it (or answered)"));
    }
  }
  return absl::OkStatus();
}

struct SslCtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
struct SslDeleter {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

// A TLS ClientHello offering h2 (what gRPC's server expects), from OpenSSL writing into memory;
// nothing is verified, since the handshake is never finished.
absl::StatusOr<std::string> ClientHello() {
  std::unique_ptr<SSL_CTX, SslCtxDeleter> ctx(SSL_CTX_new(TLS_client_method()));
  if (ctx == nullptr) return absl::InternalError("SSL_CTX_new failed");
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof(kAlpn));
  std::unique_ptr<SSL, SslDeleter> ssl(SSL_new(ctx.get()));
  if (ssl == nullptr) return absl::InternalError("SSL_new failed");
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    return absl::InternalError("BIO_new failed");
  }
  SSL_set_bio(ssl.get(), in, out);  // "ssl" owns both now
  SSL_set_connect_state(ssl.get());
  SSL_do_handshake(ssl.get());  // writes the ClientHello, then wants to read
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);
  if (size <= 0) return absl::InternalError("OpenSSL wrote no ClientHello");
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace

absl::StatusOr<ListenerAddress> ResolveListenerAddress(absl::string_view listen, int port,
                                                       bool tls) {
  const size_t colon = listen.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("\"", listen, "\" is not host:port"));
  }
  std::string host(listen.substr(0, colon));
  if (host == "0.0.0.0" || host == "[::]") {
    host = "127.0.0.1";  // a [::] listener takes IPv4 too (gRPC binds it dual-stack)
  } else if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  const int error = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (error != 0 || found == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", host, " to probe the listener: ", gai_strerror(error)));
  }
  ListenerAddress listener;
  std::memcpy(&listener.address, found->ai_addr, found->ai_addrlen);
  listener.length = found->ai_addrlen;
  listener.tls = tls;
  listener.name = found->ai_family == AF_INET6 ? absl::StrCat("[", host, "]:", port)
                                               : absl::StrCat(host, ":", port);
  freeaddrinfo(found);
  return listener;
}

absl::Status ProbeListener(const ListenerAddress& listener, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  Socket socket(
      ::socket(listener.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (socket.fd() < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open a socket to probe ", listener.name, ": ", std::strerror(errno)));
  }
  absl::Status connected = Connect(listener, socket.fd(), deadline);
  if (!connected.ok()) return connected;

  if (!listener.tls) {
    absl::Status sent =
        SendAll(listener, socket.fd(), kClientPreface, kClientPrefaceLength, deadline);
    if (!sent.ok()) return sent;
    unsigned char header[kFrameHeaderLength];
    absl::Status received = ReceiveExactly(listener, socket.fd(), header, sizeof(header), deadline,
                                           "HTTP/2 SETTINGS frame");
    if (!received.ok()) return received;
    if (header[3] != kSettingsFrame || (header[4] & kAckFlag) != 0) {
      return absl::UnavailableError(
          absl::StrCat(listener.name, " did not begin with an HTTP/2 SETTINGS frame (frame type ",
                       static_cast<int>(header[3]), ")"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> hello = ClientHello();
  if (!hello.ok()) return hello.status();
  absl::Status sent = SendAll(listener, socket.fd(), hello->data(), hello->size(), deadline);
  if (!sent.ok()) return sent;
  unsigned char header[kTlsRecordHeaderLength];
  absl::Status received = ReceiveExactly(listener, socket.fd(), header, sizeof(header), deadline,
                                         "TLS handshake record");
  if (!received.ok()) return received;
  if ((header[0] != kTlsHandshake && header[0] != kTlsAlert) || header[1] != 3) {
    return absl::UnavailableError(
        absl::StrCat(listener.name, " did not answer the ClientHello with a TLS record"));
  }
  return absl::OkStatus();
}

}  // namespace dvexport::grpc_door
