#include "service/http/http_connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/http/export_response.h"
#include "service/http/request_origin.h"
#include "service/http/request_parser.h"
#include "service/http/request_route.h"
#include "service/http/response_head.h"
#include "service/http/tls_identity.h"
#include "service/http/version_wait.h"
#include "service/http/web_message.h"
#include "service/pipeline/export_pipeline.h"

namespace dvexport::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

// Bytes read at once while waiting for a request, or discarding the client's last bytes.
constexpr size_t kReadBytes = 16 * 1024;
// How often a running export's socket is checked for a client that went away.
constexpr std::chrono::milliseconds kWatchInterval{200};
// A closing connection gives its client this long to take the last response (the TLS
// close_notify exchange, or the lingering read before close), and a response to a client that
// does not read gets this long while the server shuts down.
constexpr std::chrono::milliseconds kCloseGrace{1000};

// Whether the client of a running export has gone: the socket is no longer ESTABLISHED. A
// client that half-closed its side (CLOSE_WAIT: it sent FIN and may still read) counts as gone,
// as nginx treats a client's EOF during a response: HTTP clients do not half-close while they
// wait for a response, and a FIN is how a client that stops waiting usually says so.
bool ClientGone(int fd) {
  tcp_info info{};
  socklen_t length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return true;
  return info.tcpi_state != TCP_ESTABLISHED;
}

absl::Status ShuttingDown() {
  return absl::UnavailableError("the server is shutting down; try again");
}

template <class Stream>
class Connection final : public HttpConnection {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  Connection(tcp::socket socket, const ConnectionShared& shared, const net::ip::address& peer,
             unsigned short port)
      : shared_(shared),
        options_(*shared.options),
        limits_(LimitsOf(*shared.options)),
        strand_(socket.get_executor()),
        stream_(MakeStream(std::move(socket), shared.tls)),
        watch_(strand_),
        peer_address_(peer),
        port_(port),
        peer_ip_(AddressText(peer)),
        accepted_(std::chrono::steady_clock::now()),
        buffer_(ReadBufferLimit(limits_)) {}

  ~Connection() override {
    shared_.tracker->HeadEnded(this);
    shared_.tracker->Remove(this, peer_ip_);
  }

  void Begin() override {
    net::dispatch(strand_, [self = Self()] { self->Guarded([&] { self->Open(); }); });
  }

  void Stop() override {
    net::post(strand_, [self = Self()] {
      self->Guarded([&] {
        if (self->export_ == nullptr && !self->writing_) self->CloseSocket();
      });
    });
  }

  void CancelExport() override {
    net::post(strand_, [self = Self()] {
      self->Guarded([&] {
        if (self->export_ != nullptr) {
          self->export_->Cancel(ShuttingDown());
          // A write in flight might never complete; without one, the refusal (503) still goes
          // out.
          if (self->writing_) self->CloseSocket();
        } else {
          self->CloseSocket();
        }
      });
    });
  }

  void EvictSlowHead() override {
    net::post(strand_, [self = Self()] {
      self->Guarded([&] {
        if (self->awaiting_head_) self->CloseSocket();
      });
    });
  }

  void Ready() override {
    net::post(strand_, [self = Self()] { self->Guarded([&] { self->Pump(); }); });
  }

  void Abort(const absl::Status& /*status*/) override {
    // The client took nothing for the stall timeout: its write in flight will not complete.
    net::post(strand_, [self = Self()] {
      self->Guarded([&] {
        if (self->export_ == nullptr) return;
        self->draining_ = true;
        self->CloseSocket();
      });
    });
  }

 private:
  static Stream MakeStream(tcp::socket socket, net::ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls);
    } else {
      return Stream(std::move(socket));
    }
  }

  std::shared_ptr<Connection> Self() {
    return std::static_pointer_cast<Connection>(shared_from_this());
  }

  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  bool stopping() const { return shared_.tracker->stopping(); }

  // Runs "body" (a completion handler's work on the strand) so that no exception leaves the
  // connection: one that does ends this connection alone (Fail), never the process.
  template <class Body>
  void Guarded(Body&& body) noexcept {
    try {
      body();
    } catch (const std::exception& error) {
      Fail(error.what());
    } catch (...) {
      Fail("an exception of unknown type");
    }
  }

  // An exception left the request handling: logged; a running export is cancelled (the
  // connection keeps it until kDone, as always) and the connection closed; otherwise the client
  // gets a 500 where one can still be sent, and the connection closes.
  void Fail(std::string_view what) noexcept {
    try {
      shared_.tracker->ConnectionFailed(peer_ip_, what);
      SetAwaitingHead(false);
      if (export_ != nullptr) {
        export_->Cancel(absl::InternalError("the HTTP connection failed"));
        draining_ = true;
        CloseSocket();
        return;
      }
      if (open_ && !writing_ && !failed_) {
        failed_ = true;
        RespondAndClose(500, "The server failed to handle the request");
        return;
      }
      CloseSocket();
    } catch (...) {
      open_ = false;
      beast::error_code ignored;
      lowest().socket().close(ignored);
    }
  }

  // Whether the connection waits for a request's head; told to the tracker (HeadStarted), which
  // may close the connection that has waited longest.
  void SetAwaitingHead(bool awaiting) {
    if (awaiting == awaiting_head_) return;
    awaiting_head_ = awaiting;
    if (awaiting) {
      // Outside the tracker's lock: the evicted connection closes on its own strand.
      const std::shared_ptr<HttpConnection> evicted = shared_.tracker->HeadStarted(Self());
      if (evicted != nullptr) evicted->EvictSlowHead();
    } else {
      shared_.tracker->HeadEnded(this);
    }
  }

  void Open() {
    if (stopping()) {
      CloseSocket();
      return;
    }
    SetAwaitingHead(true);
    if constexpr (kTls) {
      lowest().expires_at(accepted_ + options_.header_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = Self()](const beast::error_code& error) {
                                self->Guarded([&] { self->OnHandshake(error); });
                              });
    } else {
      ReadRequest();
    }
  }

  void OnHandshake(const beast::error_code& error) {
    if (error) {
      CloseSocket();
      return;
    }
    if constexpr (kTls) certificate_ = VerifiedCertificate(stream_.native_handle());
    ReadRequest();
  }

  // The next request: a connection's first within header_timeout of the accept; a later one
  // within idle_timeout to its first byte, then header_timeout.
  void ReadRequest() {
    if (stopping()) {
      GracefulClose();
      return;
    }
    parser_.emplace(limits_);
    if (requests_ == 0) {
      lowest().expires_at(accepted_ + options_.header_timeout);
      ReadHead();
    } else if (buffer_.size() > 0) {
      SetAwaitingHead(true);
      lowest().expires_after(options_.header_timeout);
      ReadHead();
    } else {
      lowest().expires_after(options_.idle_timeout);
      stream_.async_read_some(buffer_.prepare(kReadBytes),
                              [self = Self()](const beast::error_code& error, size_t bytes) {
                                self->Guarded([&] {
                                  if (error) {
                                    self->CloseSocket();
                                    return;
                                  }
                                  self->buffer_.commit(bytes);
                                  self->SetAwaitingHead(true);
                                  self->lowest().expires_after(self->options_.header_timeout);
                                  self->ReadHead();
                                });
                              });
    }
  }

  void ReadHead() {
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = Self()](const beast::error_code& error, size_t) {
                        self->Guarded([&] {
                          self->lowest().expires_never();
                          self->SetAwaitingHead(false);
                          if (error) {
                            self->OnReadError(error);
                          } else {
                            self->Serve();
                          }
                        });
                      });
  }

  void OnReadError(const beast::error_code& error) {
    const std::optional<WireRefusal> refusal = parser_->Refusal(error);
    if (!refusal.has_value()) {
      // The client closed, the connection failed, or the head did not arrive in time.
      CloseSocket();
      return;
    }
    // Once the framing failed, nothing more is read as a request.
    RespondAndClose(refusal->status, refusal->message);
  }

  void Serve() {
    if (version_wait_.Waiting(shared_.pipeline, stopping())) {
      // Serve again later (the watch timer is idle until an export runs).
      watch_.expires_after(VersionWait::kPoll);
      watch_.async_wait([self = Self()](const beast::error_code&) {
        self->Guarded([&] {
          if (self->open_) self->Serve();
        });
      });
      return;
    }
    ++requests_;
    const bhttp::request<bhttp::empty_body>& request = parser_->head();
    version_ = request.version();
    head_only_ = request.method() == bhttp::verb::head;
    keep_alive_ = request.keep_alive();
    if (options_.on_request_for_testing) {
      options_.on_request_for_testing(
          std::string_view(request.target().data(), request.target().size()));
    }
    RoutedRequest routed = RouteRequest(*parser_, RoutesVersion(shared_.pipeline));
    if (routed.wire_refusal.has_value()) {
      RespondAndClose(routed.wire_refusal->status, routed.wire_refusal->message);
      return;
    }
    pipeline::CallOrigin origin =
        RequestOrigin(request, peer_address_, port_, *shared_.proxies, certificate_);
    const bool token_credential = PresentsApiToken(origin);
    if (stopping()) {
      Respond(RefusalResponse(ShuttingDown(), routed.message_format, token_credential), false);
      return;
    }
    StartExport(std::move(routed), std::move(origin), token_credential);
  }

  // Runs the request's export (ExportResponse::Start: for a request the door refuses itself, an
  // export that only authenticates).
  void StartExport(RoutedRequest routed, pipeline::CallOrigin origin, bool token_credential) {
    absl::StatusOr<dvexport::v1::ExportFileRequest> export_request = response_.Start(
        std::move(routed), ResponseFraming{version_, head_only_, keep_alive_}, token_credential);
    draining_ = false;
    export_self_ = Self();
    shared_.tracker->ExportStarted();
    export_ =
        pipeline::Export::StartFile(shared_.pipeline, std::move(origin), export_request, this);
    if (!watching_) {
      watching_ = true;
      Watch();
    }
  }

  // Checks every kWatchInterval, while an export runs, that its client is still there.
  void Watch() {
    watch_.expires_after(kWatchInterval);
    watch_.async_wait([self = Self()](const beast::error_code&) {
      self->Guarded([&] {
        if (self->export_ == nullptr) {
          self->watching_ = false;
          return;
        }
        if (self->open_ && !self->draining_ &&
            ClientGone(self->lowest().socket().native_handle())) {
          self->export_->Cancel(pipeline::ClientGoneError());
          self->draining_ = true;
          self->CloseSocket();
          self->Pump();
        }
        self->Watch();
      });
    });
  }

  // Takes the export's next chunk and writes it, unless a write is in flight.
  void Pump() {
    while (export_ != nullptr && !writing_) {
      pipeline::Chunk chunk;
      switch (export_->TakeNext(&chunk)) {
        case pipeline::Export::Next::kEmpty:
          return;
        case pipeline::Export::Next::kDone:
          EndExport();
          return;
        case pipeline::Export::Next::kChunk:
          break;
      }
      // The client is gone, or a HEAD has its headers: the export is cancelled, and what it had
      // queued is dropped until kDone.
      if (draining_ || !open_) continue;
      if (WriteChunk(std::move(chunk))) return;
    }
  }

  // Writes "chunk" as ExportResponse frames it; false when there was nothing to write.
  bool WriteChunk(pipeline::Chunk chunk) {
    const bool trailer = chunk.kind == pipeline::Chunk::Kind::kFileTrailer;
    switch (response_.Frame(std::move(chunk.bytes), trailer, export_->change_token(), &out_)) {
      case ExportResponse::Write::kNothing:
        export_->Sent(0);
        return false;
      case ExportResponse::Write::kHeadOnly:
        export_->Cancel(HeadAnswered());
        draining_ = true;
        Write(/*report_sent=*/false);
        return true;
      case ExportResponse::Write::kBytes:
        Write(/*report_sent=*/true);
        return true;
    }
    return false;
  }

  // One write of "out_"; "report_sent": the export is told its bytes were sent.
  void Write(bool report_sent) {
    writing_ = true;
    // No timeout: the pipeline's stall timeout ends an export whose client reads nothing (Abort).
    lowest().expires_never();
    net::async_write(stream_,
                     std::array<net::const_buffer, 3>{
                         net::buffer(out_.head), net::buffer(out_.body), net::buffer(out_.tail)},
                     [self = Self(), report_sent](const beast::error_code& error, size_t bytes) {
                       self->Guarded([&] { self->OnChunkWritten(error, bytes, report_sent); });
                     });
  }

  void OnChunkWritten(const beast::error_code& error, size_t bytes, bool report_sent) {
    writing_ = false;
    out_.body.clear();
    if (export_ == nullptr) return;
    if (error) {
      export_->Cancel(pipeline::ClientGoneError());
      draining_ = true;
      CloseSocket();
    } else if (report_sent) {
      export_->Sent(bytes);
    }
    Pump();
  }

  // TakeNext said kDone: the export is destroyed, and the connection answers, goes on or closes.
  void EndExport() {
    const absl::Status status = export_->status();
    export_.reset();
    shared_.tracker->ExportEnded();
    watch_.cancel();
    // The last reference may be this one: the connection lives until the end of this call.
    const std::shared_ptr<Connection> self = std::move(export_self_);
    if (!open_) return;
    HttpResponse refusal;
    switch (response_.Finish(status, &refusal)) {
      case ExportResponse::Ending::kRespond:
        Respond(std::move(refusal), keep_alive_);
        return;
      case ExportResponse::Ending::kNextRequest:
        Continue(response_.ReuseConnection());
        return;
      case ExportResponse::Ending::kClose:
        CloseSocket();
        return;
    }
  }

  void Continue(bool keep_alive) {
    if (keep_alive && !stopping()) {
      ReadRequest();
    } else {
      GracefulClose();
    }
  }

  // A complete response with Content-Length; then the next request, or the end if not
  // "keep_alive".
  void Respond(HttpResponse response, bool keep_alive) {
    keep_alive = keep_alive && !stopping();
    out_.head = ResponseHead(response, version_, keep_alive);
    out_.body = head_only_ ? std::string() : std::move(response.body);
    writing_ = true;
    lowest().expires_after(stopping() ? kCloseGrace : options_.header_timeout);
    net::async_write(
        stream_, std::array<net::const_buffer, 2>{net::buffer(out_.head), net::buffer(out_.body)},
        [self = Self(), keep_alive](const beast::error_code& error, size_t) {
          self->Guarded([&] {
            self->writing_ = false;
            self->lowest().expires_never();
            self->out_.body.clear();
            if (error) {
              self->CloseSocket();
            } else {
              self->Continue(keep_alive);
            }
          });
        });
  }

  // An answer to a request that cannot be read on: then the connection closes.
  void RespondAndClose(int status, std::string_view message) {
    if (requests_ == 0) version_ = 11;
    head_only_ = false;
    Respond(WebMessageResponse(status, absl::string_view(message.data(), message.size()), "",
                               MessageFormat::kJson),
            /*keep_alive=*/false);
  }

  // Ends the connection after a complete response: TLS sends its close_notify; plaintext sends
  // FIN and reads what the client still sends for a moment before closing, so that the kernel
  // does not answer unread bytes with a reset that could destroy the response in flight.
  void GracefulClose() {
    if (!open_) return;
    lowest().expires_after(kCloseGrace);
    if constexpr (kTls) {
      stream_.async_shutdown([self = Self()](const beast::error_code&) {
        self->Guarded([&] { self->CloseSocket(); });
      });
    } else {
      beast::error_code ignored;
      lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      Discard();
    }
  }

  void Discard() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(kReadBytes),
                            [self = Self()](const beast::error_code& error, size_t) {
                              self->Guarded([&] {
                                if (error) {
                                  self->CloseSocket();
                                } else {
                                  self->Discard();
                                }
                              });
                            });
  }

  void CloseSocket() {
    if (!open_) return;
    open_ = false;
    lowest().close();
  }

  const ConnectionShared& shared_;
  const HttpServerOptions& options_;
  const RequestLimits limits_;
  const net::any_io_executor strand_;
  Stream stream_;
  net::steady_timer watch_;
  const net::ip::address peer_address_;
  const unsigned short port_;  // the socket's peer's
  const std::string peer_ip_;  // the socket's
  const std::chrono::steady_clock::time_point accepted_;
  // The client certificate TLS verified at the handshake, if any.
  std::optional<pipeline::ClientCertificate> certificate_;

  // Everything below is touched on the strand only.
  beast::flat_buffer buffer_;  // at most ReadBufferLimit(limits_) bytes
  std::optional<RequestParser> parser_;
  bool open_ = true;  // the socket is not closed
  bool writing_ = false;
  bool awaiting_head_ = false;  // counted by the tracker's HeadStarted
  bool failed_ = false;         // Fail answered once
  bool watching_ = false;
  int requests_ = 0;

  // The request being answered.
  unsigned version_ = 11;
  bool head_only_ = false;
  bool keep_alive_ = true;
  ExportResponse response_;

  // Its export, until TakeNext said kDone; "export_self_" keeps the connection (the export's
  // consumer) alive until then.
  std::unique_ptr<pipeline::Export> export_;
  std::shared_ptr<Connection> export_self_;
  bool draining_ = false;

  VersionWait version_wait_;

  // What the write in flight sends.
  ResponseBytes out_;
};

}  // namespace

std::shared_ptr<HttpConnection> HttpConnection::Start(tcp::socket socket,
                                                      const ConnectionShared& shared) {
  beast::error_code error;
  const tcp::endpoint remote = socket.remote_endpoint(error);
  const net::ip::address peer = Unmapped(remote.address());
  if (error || !shared.tracker->Admit(AddressText(peer))) {
    socket.close(error);
    return nullptr;
  }
  socket.set_option(tcp::no_delay(true), error);
  std::shared_ptr<HttpConnection> connection;
  if (shared.tls != nullptr) {
    connection = std::make_shared<Connection<beast::ssl_stream<beast::tcp_stream>>>(
        std::move(socket), shared, peer, remote.port());
  } else {
    connection = std::make_shared<Connection<beast::tcp_stream>>(std::move(socket), shared, peer,
                                                                 remote.port());
  }
  // Registered before it starts, so that a Shutdown either lists it or is seen by it (Open).
  shared.tracker->Add(connection);
  connection->Begin();
  return connection;
}

}  // namespace dvexport::http
