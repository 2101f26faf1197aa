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
  // The headers of a 200, in order: Content-Type (2.42: of the plain format, also when
  // compressed; 2.43: with the compression), Content-Disposition and Content-Transfer-Encoding by
  // the version's rules, Cache-Control "no-cache,
  // no-store, max-age=0, must-revalidate", and DHIS2's X-Content-Type-Options and
  // X-XSS-Protection. Never Content-Encoding.
  std::vector<std::pair<std::string, std::string>> headers;
  // How a refusal of this request is written.
  MessageFormat message_format = MessageFormat::kJson;
};

// Whether "path" (the request target before '?', compared raw, not percent-decoded) is one of the
// export's routes on a database of DHIS2 2.<dhis2> (42 for 2.40 to 2.42, 43 for 2.43; any other
// value below 43 is taken for 42, any above for 43): /api/dataValueSets and
// /api/{28..42}/dataValueSets (2.42's DhisApiVersion), /api/{28..43}/dataValueSets on 2.43
// (ApiVersionFilter), each with an optional ".<suffix>" (any text without '/') or an optional
// trailing '/'. Not both: Spring's AntPathMatcher tries "dataValueSets.*" and "dataValueSets/"
// separately, so DHIS2 answers /api/dataValueSets.json/ with 404, and so does dvexport.
bool IsDataValueSetsPath(std::string_view path, int dhis2);

// Parses the target ("/api/dataValueSets.csv?dataSet=a,b&orgUnit=...") as DHIS2 2.<dhis2> binds
// it (42 for 2.40 to 2.42, 43; as IsDataValueSetsPath). On 2.42:
// - the format (content_negotiation.h): `format=` (exact: xml, adx+xml, csv; anything else
//   JSON) first, then a registered path suffix (json, xml, csv, adx.xml), then "accept" (the
//   Accept header, may be empty; q-values honoured, q=0 excluded), then JSON;
// - DHIS2's camelCase parameters into export_request.query: lists repeated or comma-separated,
//   booleans and integers as Spring converts them, dates checked (startDate and endDate are kept
//   only when no period is given and both are), unknown parameters ignored; `changesSince` for
//   dvexport's change tokens; `compression` (gzip, zip, zstd, any case; anything else: none),
//   `compressionLevel` and `attachment` into the ExportFileRequest.
// On 2.43 (data_value_sets_request_243.h): the format from `format=`, else the path's end
// (.adx+xml, .xml, .csv), else JSON, never from Accept (no 406); startDate and endDate each kept
// on its own; `compression` none, gzip, zip (and zstd) only, anything else a 400; 2.43's
// parameters bound (categoryOptionCombo, offset, level, order, orderByPeriod,
// inputUseCodeFallback, excludeDefaultCoc, excludeDefaultAoc; unfoldOptionCombos refused where it
// asks for what dvexport does not write); 2.43's headers and file name.
// It does not validate the query (ValidateExportRequest does, with RuleOrder::kLastFailure).
// A refusal is the HttpResponse to send, a WebMessage in the request's message format (from the
// Accept header and path suffix, on both versions): 404 for a path that is not a route, 406 (2.42
// only) when no format can be produced (a suffix such as .json.gz or .pdf without `format`, an
// Accept header naming no format), 400 naming the parameter for a value that does not bind
// (invalid percent-encoding, invalid UTF-8, a boolean, integer, date or enum that does not parse,
// an attachment that cannot be a header's file name).
struct ParsedRequest {
  std::optional<DataValueSetsRequest> request;  // set when the request can be exported
  std::optional<HttpResponse> refusal;          // set otherwise
  // How a refusal of this request is written (also when "request" is not set).
  MessageFormat message_format = MessageFormat::kJson;
};
ParsedRequest ParseDataValueSetsRequest(std::string_view target, std::string_view accept,
                                        int dhis2);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_H_
