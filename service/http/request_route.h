#ifndef DVEXPORT_SERVICE_HTTP_REQUEST_ROUTE_H_
#define DVEXPORT_SERVICE_HTTP_REQUEST_ROUTE_H_

#include <optional>

#include "service/http/data_value_sets_request.h"
#include "service/http/request_parser.h"

namespace dvexport::http {

// What the door does with a request whose head was read (RequestParser, no I/O).
struct RoutedRequest {
  // The request cannot be read on (a target that is neither a path nor an http URL): answered
  // at once, before any credential is looked at, as a framing error is; the connection closes.
  std::optional<WireRefusal> wire_refusal;
  // The export to run (GET or HEAD of one of the export's paths, its parameters bound).
  std::optional<DataValueSetsRequest> request;
  // Otherwise the answer: 404 for a path that is not a route, 405 for another method, 406 and
  // 400 for parameters (ParseDataValueSetsRequest). As DHIS2's, it is given only to a caller
  // whose credentials hold: the door authenticates first, and a caller without valid
  // credentials is told only that.
  std::optional<HttpResponse> refusal;
  // How a refusal of this request (an authentication's included) is written.
  MessageFormat message_format = MessageFormat::kJson;
};

// Routes the complete head of "parser" as dvexport's HTTP door does for a database of DHIS2
// 2.<dhis2> (ParseDataValueSetsRequest: 42 for 2.40 to 2.42 and for a version not known yet, 43).
RoutedRequest RouteRequest(const RequestParser& parser, int dhis2);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_REQUEST_ROUTE_H_
