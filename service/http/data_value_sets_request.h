#ifndef DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_H_
#define DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "dvexport/v1/export.pb.h"

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

// One GET or HEAD of DHIS2's /api/dataValueSets, as dvexport serves it.
struct DataValueSetsRequest {
  // The query, format, compression (level 0: the default) as ExportFile takes them; the
  // "attachment" parameter's file name, if any, in export.attachment.
  dvexport::v1::ExportFileRequest export_request;
  // The headers of a 200, in order: Content-Type of the plain format (also when compressed),
  // Content-Disposition and Content-Transfer-Encoding by DHIS2's rules, Cache-Control "no-cache,
  // no-store, max-age=0, must-revalidate", and DHIS2's X-Content-Type-Options and
  // X-XSS-Protection. Never Content-Encoding.
  std::vector<std::pair<std::string, std::string>> headers;
  // How a refusal of this request is written.
  MessageFormat message_format = MessageFormat::kJson;
};

// Whether "path" (the request target before '?', compared raw, not percent-decoded) is one of the
// export's routes: /api/dataValueSets and /api/{28..42}/dataValueSets, each with an optional
// ".<suffix>" (any text without '/') or an optional trailing '/'. Not both: Spring's
// AntPathMatcher tries "dataValueSets.*" and "dataValueSets/" separately, so DHIS2 answers
// /api/dataValueSets.json/ with 404, and so does dvexport.
bool IsDataValueSetsPath(std::string_view path);

// Parses the target ("/api/dataValueSets.csv?dataSet=a,b&orgUnit=..."), as DHIS2 2.42 binds it:
// - the format: `format=` (exact: xml, adx+xml, csv; anything else JSON) first, then a
//   registered path suffix (json, xml, csv, adx.xml), then "accept" (the Accept header, may be
//   empty; q-values honoured, q=0 excluded), then JSON;
// - DHIS2's camelCase parameters into export_request.query: lists repeated or comma-separated,
//   booleans and integers as Spring converts them, dates checked (startDate and endDate are kept
//   only when no period is given and both are), unknown parameters ignored; `changesSince` for
//   dvexport's change tokens; `compression` (gzip, zip, zstd, any case; anything else: none),
//   `compressionLevel` and `attachment` into the ExportFileRequest.
// It does not validate the query (ValidateExportRequest does, with RuleOrder::kLastFailure).
// A refusal is the HttpResponse to send, a WebMessage in the request's message format: 404 for a
// path that is not a route, 406 when no format can be produced (a suffix such as .json.gz or
// .pdf without `format`, an Accept header naming no format), 400 naming the parameter for a value
// that does not bind (invalid percent-encoding, invalid UTF-8, a boolean, integer or date that
// does not parse, an attachment that cannot be a header's file name).
struct ParsedRequest {
  std::optional<DataValueSetsRequest> request;  // set when the request can be exported
  std::optional<HttpResponse> refusal;          // set otherwise
  // How a refusal of this request is written (also when "request" is not set).
  MessageFormat message_format = MessageFormat::kJson;
};
ParsedRequest ParseDataValueSetsRequest(std::string_view target, std::string_view accept);

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

#endif  // DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_H_
