#include "service/http/response_head.h"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/write.hpp>
#include <sstream>

namespace dvexport::http {
namespace {

namespace bhttp = boost::beast::http;

// The status line and headers as they go on the wire, the blank line included.
std::string HeadText(const bhttp::response<bhttp::empty_body>& head) {
  std::ostringstream out;
  out << head.base();
  return out.str();
}

}  // namespace

std::string ExportHead(const std::vector<std::pair<std::string, std::string>>& headers,
                       std::string_view change_token, unsigned version, bool keep_alive) {
  bhttp::response<bhttp::empty_body> head{bhttp::status::ok, version};
  for (const auto& [name, value] : headers) head.insert(name, value);
  if (!change_token.empty()) {
    head.set("Dvexport-Change-Token",
             boost::beast::string_view(change_token.data(), change_token.size()));
  }
  if (version >= 11) head.chunked(true);
  head.keep_alive(version >= 11 && keep_alive);
  return HeadText(head);
}

std::string ResponseHead(const HttpResponse& response, unsigned version, bool keep_alive) {
  bhttp::response<bhttp::empty_body> head{bhttp::status::ok, version < 11 ? 10u : 11u};
  head.result(static_cast<unsigned>(response.status));
  for (const auto& [name, value] : response.headers) head.insert(name, value);
  head.content_length(response.body.size());
  head.keep_alive(keep_alive);
  return HeadText(head);
}

}  // namespace dvexport::http
