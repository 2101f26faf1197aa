#ifndef DVEXPORT_SERVICE_HTTP_RESPONSE_HEAD_H_
#define DVEXPORT_SERVICE_HTTP_RESPONSE_HEAD_H_

// The heads of the HTTP door's responses as they go on the wire: the status line and the
// headers, the blank line included, as Beast writes them (no I/O).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/http/web_message.h"

namespace dvexport::http {

// The 200 of an export for a request of HTTP "version" (10 or 11): "headers" in order
// (DataValueSetsRequest::headers), Dvexport-Change-Token "change_token" unless it is empty (valid
// only if the body completes: the last chunk arrives), Transfer-Encoding: chunked for HTTP/1.1
// (over HTTP/1.0 the body ends with the connection), and keep-alive only for HTTP/1.1 when
// "keep_alive".
std::string ExportHead(const std::vector<std::pair<std::string, std::string>>& headers,
                       std::string_view change_token, unsigned version, bool keep_alive);

// The head of "response": HTTP/1.0 for a request "version" below 11, else HTTP/1.1; its status
// and headers in order, Content-Length of its body, and "keep_alive".
std::string ResponseHead(const HttpResponse& response, unsigned version, bool keep_alive);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_RESPONSE_HEAD_H_
