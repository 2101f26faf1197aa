#ifndef DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_H_
#define DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_H_

// The route of DHIS2's GET /api/dataValueSets: its paths, and the binding of its parameters into
// an ExportFileRequest with the headers and file name of its 200 (no I/O).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dvexport/v1/export.pb.h"
#include "service/http/web_message.h"

namespace dvexport::http {

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
// - the format (content_negotiation.h): `format=` (exact: xml, adx+xml, csv; anything else
//   JSON) first, then a registered path suffix (json, xml, csv, adx.xml), then "accept" (the
//   Accept header, may be empty; q-values honoured, q=0 excluded), then JSON;
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

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_H_
