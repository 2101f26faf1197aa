#ifndef DVEXPORT_SERVICE_HTTP_HTTP_CONNECTION_H_
#define DVEXPORT_SERVICE_HTTP_HTTP_CONNECTION_H_

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "service/http/connection_tracker.h"
#include "service/http/http_options.h"
#include "service/http/trusted_proxies.h"
#include "service/pipeline/export.h"

namespace dvexport::http {

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
// strand. ExportResponse decides the bytes of each answer (the 200's head and chunks, HTTP/1.0,
// HEAD, a refusal before the first chunk, a broken transfer after a failure); the connection
// writes them one write at a time, the next chunk taken only once the last write completed (and
// was reported Sent): memory per connection stays one chunk.
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
