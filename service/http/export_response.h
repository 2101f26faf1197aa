#ifndef DVEXPORT_SERVICE_HTTP_EXPORT_RESPONSE_H_
#define DVEXPORT_SERVICE_HTTP_EXPORT_RESPONSE_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/http/request_route.h"
#include "service/http/web_message.h"

namespace dvexport::http {

// The framing that a request's line and headers decide.
struct ResponseFraming {
  unsigned version = 11;   // 10 or 11
  bool head_only = false;  // HEAD
  bool keep_alive = true;  // as the request asked
};

// The bytes of one write of an export's response: "head", then "body", then "tail", sent in one
// write.
struct ResponseBytes {
  std::string head;
  std::string body;
  std::string_view tail;
};

// How one request is answered from its export over HTTP/1.x, without I/O: the connection
// (http_connection.cc) moves the bytes and this decides them.
// - the first chunk: 200 with the request's headers, Transfer-Encoding: chunked and the export's
//   change token; each data chunk then is one HTTP chunk, and the trailer the last chunk;
// - HTTP/1.0: no chunked encoding; the body is the bytes, and closing the connection ends it;
// - HEAD: the 200's head alone, once the first chunk shows the export runs;
// - a refusal before the first chunk: the refusal with Content-Length (a request the door refused
//   itself gets the door's refusal once the export authenticated the caller);
// - a failure after the 200: the connection closes without the last chunk, so that the client
//   sees a broken transfer, never a complete-looking file.
class ExportResponse {
 public:
  // Starts the answer to "routed" (see RouteRequest: a request or the door's refusal, not a
  // wire refusal). Returns what the pipeline runs: the export's request, or for a request the
  // door refuses itself an error (DoorRefusal) that makes the export only authenticate, as
  // DHIS2's Spring Security does before the handler: a caller without valid credentials learns
  // nothing of the route, the method or the parameters. "token_credential": the caller presents
  // an API token (it decides a refusal's WWW-Authenticate).
  absl::StatusOr<dvexport::v1::ExportFileRequest> Start(RoutedRequest routed,
                                                        const ResponseFraming& framing,
                                                        bool token_credential);

  enum class Write {
    kNothing,   // nothing to send (HTTP/1.0's end); the chunk counts as sent
    kHeadOnly,  // HEAD: send "out" and cancel the export (HeadAnswered); the body is not sent
    kBytes,     // send "out"; then the chunk counts as sent
  };
  // The next chunk of the export's output ("trailer": the last, whose bytes are not part of the
  // file), with the export's change token: what to write into "*out".
  Write Frame(std::string bytes, bool trailer, std::string_view change_token, ResponseBytes* out);

  enum class Ending {
    kRespond,      // send "*response" with Content-Length
    kNextRequest,  // the response is complete: on to the next request (ReuseConnection)
    kClose,        // a failure after the 200: close the connection, never the last chunk
  };
  // The export ended (TakeNext said kDone) with "status".
  Ending Finish(const absl::Status& status, HttpResponse* response);

  // Whether the connection reads another request after a complete export.
  bool ReuseConnection() const { return framing_.keep_alive && framing_.version >= 11; }

 private:
  ResponseFraming framing_;
  bool token_credential_ = false;
  MessageFormat message_format_ = MessageFormat::kJson;
  std::vector<std::pair<std::string, std::string>> ok_headers_;
  // The door's own refusal of the request, sent once the export authenticated the caller.
  std::optional<HttpResponse> door_refusal_;
  bool head_sent_ = false;
};

// Why an export of a HEAD request is cancelled once its headers are known.
absl::Status HeadAnswered();

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_EXPORT_RESPONSE_H_
