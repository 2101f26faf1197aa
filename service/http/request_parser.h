#ifndef DVEXPORT_SERVICE_HTTP_REQUEST_PARSER_H_
#define DVEXPORT_SERVICE_HTTP_REQUEST_PARSER_H_

// How the HTTP door reads a request off the wire, without I/O: Beast's HTTP/1.1 parser under
// dvexport's own limits and RFC 9112's framing rules, so that no bytes a client can send make
// Beast throw (its fields keep a value's length in 16 bits) or let a body be read as the next
// request. The connection (http_connection.cc) and the fuzzer (tests/fuzz/http_wire_fuzzer.cc)
// read through the same parser and the same decisions.

#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string_type.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dvexport::http {

struct HttpServerOptions;

struct RequestLimits {
  // The request line and the header fields, and the trailer fields of a chunked body, together
  // (each field counted as name, value and 4 bytes of ": " and CRLF), in bytes at most; beyond:
  // 431 for the head (414 when the request line alone is too long), 400 for a trailer.
  size_t max_head_bytes = 32 * 1024;
  // The request target, in bytes, at most; beyond: 414.
  size_t max_target_bytes = 16 * 1024;
  // Header and trailer fields together, at most (Tomcat's maxHeaderCount); beyond: 431 (400 in a
  // trailer).
  int max_fields = 100;
  // Chunk extensions of one request, in bytes, at most (Tomcat's maxExtensionSize); beyond: 400.
  size_t max_chunk_extension_bytes = 8 * 1024;
  // The body's data bytes at most (a GET may carry a body; it is read and dropped); beyond: 413.
  uint64_t max_body_bytes = 64 * 1024;
};

// The bytes a connection's read buffer holds at most under "limits": a head (or a trailer, or a
// chunk's line) that does not fit is refused, whatever the parser would still wait for.
size_t ReadBufferLimit(const RequestLimits& limits);

// The limits a connection's parser enforces under the door's options.
RequestLimits LimitsOf(const HttpServerOptions& options);

// Why a request cannot be answered: an HTTP status and its message, after which the connection
// closes (the framing of what follows cannot be trusted).
struct WireRefusal {
  int status = 400;
  std::string message;
};

// One request's parser: the head is kept (method, target, version, fields), the body's bytes are
// counted and dropped, trailer fields are counted and dropped. Every limit of RequestLimits is
// enforced as the bytes arrive; RFC 9112's framing rules are checked once the head is complete.
// Feed it with Beast's read functions (bhttp::async_read) or put(). Not thread-safe.
class RequestParser final : public boost::beast::http::basic_parser<true> {
 public:
  explicit RequestParser(const RequestLimits& limits);

  // The head once is_header_done(); its target is what the request line carried.
  const boost::beast::http::request<boost::beast::http::empty_body>& head() const { return head_; }
  // Whether a request line was read (its target is then in head()).
  bool has_request_line() const { return has_request_line_; }

  // What to answer when the parser (or the read feeding it) failed with "error", or when the
  // buffer of ReadBufferLimit(limits) filled before the message's end (error
  // boost::beast::http::error::buffer_overflow). nullopt: the client closed or the connection
  // failed (end_of_stream, partial_message, a socket error): nothing to answer.
  std::optional<WireRefusal> Refusal(const boost::beast::error_code& error) const;

 private:
  void on_request_impl(boost::beast::http::verb method, boost::beast::string_view method_string,
                       boost::beast::string_view target, int version,
                       boost::beast::error_code& ec) override;
  void on_response_impl(int, boost::beast::string_view, int, boost::beast::error_code& ec) override;
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code& ec) override;
  void on_header_impl(boost::beast::error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         boost::beast::error_code& ec) override;
  size_t on_body_impl(boost::beast::string_view body, boost::beast::error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, boost::beast::string_view extensions,
                            boost::beast::error_code& ec) override;
  size_t on_chunk_body_impl(std::uint64_t remain, boost::beast::string_view body,
                            boost::beast::error_code& ec) override;
  void on_finish_impl(boost::beast::error_code& ec) override;

  // Refuses with "status" and "message": the parse ends with an error that Refusal maps back.
  void Refuse(int status, std::string message, boost::beast::error_code& ec);

  const RequestLimits limits_;
  boost::beast::http::request<boost::beast::http::empty_body> head_;
  bool has_request_line_ = false;
  size_t field_bytes_ = 0;  // request line, header and trailer fields so far
  int fields_ = 0;
  size_t extension_bytes_ = 0;
  uint64_t body_bytes_ = 0;
  std::optional<WireRefusal> refusal_;  // set by Refuse
};

// The request's target in origin form ("/api/dataValueSets.json?..."): the target itself, or the
// path and query of an absolute-form target ("http://host:8080/api/...?..."; RFC 9112 3.2.2: a
// server must accept it). A WireRefusal (400) for a target that is neither, or an absolute one
// whose scheme is not http or https.
struct OriginTarget {
  std::string target;
  std::optional<WireRefusal> refusal;
};
OriginTarget ToOriginTarget(std::string_view target);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_REQUEST_PARSER_H_
