#include "service/http/request_route.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/http/web_message.h"

namespace dvexport::http {
namespace bhttp = boost::beast::http;

RoutedRequest RouteRequest(const RequestParser& parser, int dhis2) {
  RoutedRequest routed;
  const bhttp::request<bhttp::empty_body>& head = parser.head();
  OriginTarget origin =
      ToOriginTarget(std::string_view(head.target().data(), head.target().size()));
  if (origin.refusal.has_value()) {
    routed.wire_refusal = std::move(origin.refusal);
    return routed;
  }
  const std::string_view target = origin.target;
  const std::string_view path = target.substr(0, target.find('?'));
  if (!IsDataValueSetsPath(path, dhis2)) {
    routed.refusal = WebMessageResponse(
        404, "Not found: dvexport serves only GET /api/dataValueSets", "", MessageFormat::kJson);
    return routed;
  }
  if (head.method() != bhttp::verb::get && head.method() != bhttp::verb::head) {
    const auto method = head.method_string();
    HttpResponse response = WebMessageResponse(
        405,
        absl::StrCat("Request method '", absl::string_view(method.data(), method.size()),
                     "' is not supported"),
        "", MessageFormat::kJson);
    response.headers.emplace_back("Allow", "GET, HEAD");
    routed.refusal = std::move(response);
    return routed;
  }
  // Several Accept headers mean their values joined (RFC 9110 5.3).
  std::string accept;
  for (auto [field, end] = head.equal_range(bhttp::field::accept); field != end; ++field) {
    if (!accept.empty()) accept.append(", ");
    accept.append(field->value().data(), field->value().size());
  }
  ParsedRequest parsed = ParseDataValueSetsRequest(target, accept, dhis2);
  routed.message_format = parsed.message_format;
  if (parsed.request.has_value()) {
    routed.request = std::move(parsed.request);
  } else {
    routed.refusal =
        parsed.refusal.has_value()
            ? *std::move(parsed.refusal)
            : WebMessageResponse(500, "The request could not be parsed", "", MessageFormat::kJson);
  }
  return routed;
}

}  // namespace dvexport::http
