#ifndef DVEXPORT_SERVICE_HTTP_WEB_MESSAGE_H_
#define DVEXPORT_SERVICE_HTTP_WEB_MESSAGE_H_

// DHIS2's WebMessage: the body of every answer of the HTTP door that is not an export, in JSON or
// XML, and the table that maps a refusal's status to its HTTP status and headers (no I/O).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dvexport::http {

// The body format of the WebMessage that answers a refused request: XML when the request asked
// for XML (DHIS2's XmlPathMappingJackson2XmlHttpMessageConverter), JSON otherwise.
enum class MessageFormat { kJson, kXml };

// An HTTP answer that is not an export: status, headers and a small body (sent with
// Content-Length).
struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // Content-Type first, if any
  std::string body;
};

// The answer to an export refused before its first byte, from one table of status codes:
// - Unauthenticated: the status's message (DHIS2's texts); 400 for a malformed token or a
//   failed checksum (auth::RefusalReason "malformed_token", "bad_checksum"), else 401;
//   `WWW-Authenticate: ApiToken` for a refusal of the token filter (a token's RefusalReason), or,
//   for a refusal without a reason (too many failed attempts), when "token_credential" (the
//   request presented an ApiToken);
// - a message "E<4 digits>: <text>" (DHIS2's IllegalQueryException: E2001-E2009, E2040 from
//   InvalidArgument, E2010-E2012 from PermissionDenied, E2041 from NotFound): 409, the message
//   <text> and errorCode E<4 digits>;
// - otherwise InvalidArgument 400, FailedPrecondition 409, NotFound 404 (no errorCode: dvexport's
//   message is not E1005's), PermissionDenied 403, ResourceExhausted 503 with `Retry-After: 1`,
//   Unavailable and Cancelled (the server shuts down) 503, DeadlineExceeded 504;
// - the rest 500 with DHIS2's masked message for unexpected errors (the status's own message
//   may name internals; the call log keeps it).
// The body is DHIS2's WebMessage in "format"; the headers are Content-Type, Cache-Control
// "no-cache, private" (DHIS2's for errors), X-Content-Type-Options and X-XSS-Protection, then
// WWW-Authenticate or Retry-After.
HttpResponse RefusalResponse(const absl::Status& status, MessageFormat format,
                             bool token_credential);

// DHIS2's WebMessage for the HTTP status "code" (409, whose reason phrase "Conflict" becomes
// httpStatus), "message" and the optional error code, as DHIS2's Jackson writes it:
// {"httpStatus":"Conflict","httpStatusCode":409,"status":"ERROR","message":"...",
// "errorCode":"E2006"}, or in XML <webMessage xmlns="http://dhis2.org/schema/dxf/2.0"
// httpStatus="Conflict" httpStatusCode="409" status="ERROR" errorCode="E2006"><message>...
// </message></webMessage>. The message is escaped; ill-formed UTF-8, and in XML the characters
// XML 1.0 cannot carry, become U+FFFD.
std::string WebMessageBody(int code, std::string_view message, std::string_view error_code,
                           MessageFormat format);

// The whole answer with that WebMessage: status "code", Content-Type for "format", Cache-Control
// "no-cache, private" (DHIS2's for errors), X-Content-Type-Options and X-XSS-Protection. Every
// refusal above is built on it; the connection answers with it for what never reaches the
// request parser (an unknown path, a head it cannot read).
HttpResponse WebMessageResponse(int code, absl::string_view message, absl::string_view error_code,
                                MessageFormat format);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_WEB_MESSAGE_H_
