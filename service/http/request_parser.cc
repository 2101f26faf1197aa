#include "service/http/request_parser.h"

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <boost/url/authority_view.hpp>
#include <boost/url/parse.hpp>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "service/http/http_options.h"

namespace dvexport::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// Beast keeps a field's value length in 16 bits and throws above 65,533 bytes: refused before.
constexpr size_t kMaxFieldValueBytes = 65000;
// What a read adds to a buffer at once (Beast's own read size), beyond a head's worth.
constexpr size_t kReadSlack = 16 * 1024;

absl::string_view Absl(beast::string_view text) { return {text.data(), text.size()}; }

bool IsHttpParseError(const beast::error_code& error) {
  return error.category() == bhttp::make_error_code(bhttp::error::bad_method).category();
}

// A Host value as RFC 9112 3.2 takes it: uri-host [":" port], no user information; empty is
// valid.
bool ValidHost(beast::string_view value) {
  if (value.empty()) return true;
  const boost::urls::result<boost::urls::authority_view> authority =
      boost::urls::parse_authority(boost::urls::string_view(value.data(), value.size()));
  return authority.has_value() && !authority->has_userinfo();
}

}  // namespace

RequestLimits LimitsOf(const HttpServerOptions& options) {
  RequestLimits limits;
  limits.max_head_bytes = options.max_header_bytes;
  limits.max_target_bytes = options.max_url_bytes;
  limits.max_fields = options.max_header_fields;
  return limits;
}

size_t ReadBufferLimit(const RequestLimits& limits) {
  return std::max(limits.max_head_bytes, kReadSlack) + kReadSlack;
}

RequestParser::RequestParser(const RequestLimits& limits) : limits_(limits) {
  header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(limits.max_head_bytes, std::numeric_limits<std::uint32_t>::max())));
  body_limit(limits.max_body_bytes);
}

void RequestParser::Refuse(int status, std::string message, beast::error_code& ec) {
  refusal_ = WireRefusal{.status = status, .message = std::move(message)};
  // Any parse error ends the parse; Refusal() answers with refusal_ rather than its text.
  ec = bhttp::error::bad_value;
}

void RequestParser::on_request_impl(bhttp::verb method, beast::string_view method_string,
                                    beast::string_view target, int version, beast::error_code& ec) {
  has_request_line_ = true;
  // (Beast's method() throws for verb::unknown: a method it does not know is kept as text.)
  if (method == bhttp::verb::unknown) {
    head_.method_string(method_string);
  } else {
    head_.method(method);
  }
  head_.target(target);
  head_.version(static_cast<unsigned>(version));
  field_bytes_ = method_string.size() + target.size() + 11;  // " " and " HTTP/1.1\r\n"
  if (target.size() > limits_.max_target_bytes) Refuse(414, "The request target is too long", ec);
}

void RequestParser::on_response_impl(int, beast::string_view, int, beast::error_code& ec) {
  ec = bhttp::error::bad_method;  // a request parser never sees a status line
}

void RequestParser::on_field_impl(bhttp::field name, beast::string_view name_string,
                                  beast::string_view value, beast::error_code& ec) {
  const bool trailer = is_header_done();
  ++fields_;
  field_bytes_ += name_string.size() + value.size() + 4;
  if (fields_ > limits_.max_fields) {
    if (trailer) {
      Refuse(400,
             absl::StrCat("The request has more than ", limits_.max_fields,
                          " header and trailer fields"),
             ec);
    } else {
      Refuse(431, absl::StrCat("The request has more than ", limits_.max_fields, " header fields"),
             ec);
    }
    return;
  }
  if (field_bytes_ > limits_.max_head_bytes || value.size() > kMaxFieldValueBytes) {
    if (trailer) {
      Refuse(400, "The request's trailer fields are too large", ec);
    } else {
      Refuse(431, "The request header fields are too large", ec);
    }
    return;
  }
  // Trailer fields are dropped: DHIS2 reads none, and none may change what the head said.
  if (!trailer) head_.insert(name, name_string, value);
}

void RequestParser::on_header_impl(beast::error_code& ec) {
  // RFC 9112 3.2: an HTTP/1.1 request has exactly one valid Host; HTTP/1.0 at most one.
  int hosts = 0;
  bool valid_hosts = true;
  for (auto [field, end] = head_.equal_range(bhttp::field::host); field != end; ++field) {
    ++hosts;
    valid_hosts = valid_hosts && ValidHost(field->value());
  }
  if (hosts > 1) {
    Refuse(400, "The request has more than one Host header", ec);
    return;
  }
  if (hosts == 0 && head_.version() >= 11) {
    Refuse(400, "An HTTP/1.1 request must have a Host header", ec);
    return;
  }
  if (!valid_hosts) {
    Refuse(400, "The request's Host header is not a valid host[:port]", ec);
    return;
  }
  // RFC 9112 6.1 and 6.3: the body's length is known only when the final transfer coding is
  // chunked; otherwise 400 and the connection closes (Beast would read such a body as the next
  // request). a coding dvexport does not understand is RFC 9112's 501, and HTTP/1.0 has none.
  std::vector<absl::string_view> codings;
  bool transfer_encoding = false;
  for (auto [field, end] = head_.equal_range(bhttp::field::transfer_encoding); field != end;
       ++field) {
    transfer_encoding = true;
    for (absl::string_view coding : absl::StrSplit(Absl(field->value()), ',')) {
      coding = absl::StripAsciiWhitespace(coding);
      if (!coding.empty()) codings.push_back(coding);
    }
  }
  if (!transfer_encoding) return;
  if (head_.version() < 11) {
    Refuse(400, "An HTTP/1.0 request cannot have a Transfer-Encoding", ec);
    return;
  }
  if (codings.empty() || !absl::EqualsIgnoreCase(codings.back(), "chunked")) {
    Refuse(400, "The request's final transfer coding is not chunked: its length is unknown", ec);
    return;
  }
  for (size_t i = 0; i + 1 < codings.size(); ++i) {
    if (absl::EqualsIgnoreCase(codings[i], "chunked")) {
      Refuse(400, "The request's body is chunked more than once", ec);
    } else {
      Refuse(501,
             absl::StrCat("The transfer coding \"", codings[i].substr(0, 64),
                          "\" is not supported: send the body chunked alone"),
             ec);
    }
    return;
  }
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>&,
                                      beast::error_code& ec) {
  ec = {};
}

size_t RequestParser::on_body_impl(beast::string_view body, beast::error_code& ec) {
  body_bytes_ += body.size();
  if (body_bytes_ > limits_.max_body_bytes) {
    Refuse(413, "The request body is too large: a GET carries no body", ec);
  }
  return body.size();
}

void RequestParser::on_chunk_header_impl(std::uint64_t, beast::string_view extensions,
                                         beast::error_code& ec) {
  extension_bytes_ += extensions.size();
  if (extension_bytes_ > limits_.max_chunk_extension_bytes) {
    Refuse(400, "The request's chunk extensions are too long", ec);
  }
}

size_t RequestParser::on_chunk_body_impl(std::uint64_t, beast::string_view body,
                                         beast::error_code& ec) {
  return on_body_impl(body, ec);
}

void RequestParser::on_finish_impl(beast::error_code& ec) { ec = {}; }

std::optional<WireRefusal> RequestParser::Refusal(const beast::error_code& error) const {
  if (refusal_.has_value()) return refusal_;
  if (error == bhttp::error::header_limit ||
      (error == bhttp::error::buffer_overflow && !is_header_done())) {
    // The head outgrew its limit. Without a request line, the target is what is too long.
    if (!has_request_line_) return WireRefusal{414, "The request target is too long"};
    return WireRefusal{431, "The request header fields are too large"};
  }
  if (error == bhttp::error::buffer_overflow) {
    return WireRefusal{400, "A chunk line or the trailer of the request's body is too large"};
  }
  if (error == bhttp::error::body_limit) {
    return WireRefusal{413, "The request body is too large: a GET carries no body"};
  }
  if (error == bhttp::error::end_of_stream || error == bhttp::error::partial_message ||
      !IsHttpParseError(error)) {
    return std::nullopt;
  }
  return WireRefusal{400, absl::StrCat("The request is not valid HTTP/1.1: ", error.message())};
}

OriginTarget ToOriginTarget(std::string_view target) {
  OriginTarget result;
  if (!target.empty() && target.front() == '/') {
    result.target = std::string(target);
    return result;
  }
  const boost::urls::result<boost::urls::url_view> absolute =
      boost::urls::parse_absolute_uri(boost::urls::string_view(target.data(), target.size()));
  if (!absolute.has_value() || !absolute->has_authority() ||
      (absolute->scheme_id() != boost::urls::scheme::http &&
       absolute->scheme_id() != boost::urls::scheme::https)) {
    result.refusal = WireRefusal{400, "The request target is neither a path nor an http URL"};
    return result;
  }
  const boost::urls::string_view path = absolute->encoded_path();
  result.target = path.empty() ? std::string("/") : std::string(path.data(), path.size());
  if (absolute->has_query()) {
    const boost::urls::string_view query = absolute->encoded_query();
    result.target.push_back('?');
    result.target.append(query.data(), query.size());
  }
  return result;
}

}  // namespace dvexport::http
