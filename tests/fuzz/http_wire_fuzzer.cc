// libFuzzer target: the HTTP door's wire (service/http/request_parser.h, request_route.h) on raw
// bytes as a client sends them: request lines, headers, chunked bodies with extensions and
// trailers, pipelined requests. The bytes arrive in pieces of a size the input picks, through a
// read buffer bounded as the connection's is (ReadBufferLimit), into the door's RequestParser
// under the door's limits (the defaults, or small ones so that every limit is reached within
// the fuzzer's input size), as Beast's read loop feeds it; each complete head is routed as the
// door routes it on a DHIS2 2.42 or 2.43 database (the first byte says which). Whatever the bytes:
// - nothing throws (Beast throws for a field of 64 KiB; the parser must refuse before) or
//   crashes, and the buffer never holds more than its bound;
// - a failed read is either the client's end (nothing to answer) or a refusal of status 400 to
//   599 with a message, after which the connection closes (nothing more is parsed);
// - a complete head is routed to exactly one of: a wire refusal (400), an export, or a refusal,
//   and whatever headers the answer carries hold no CR, LF or NUL;
// - no head kept exceeds the limits: fields, bytes, target;
// - a Transfer-Encoding whose final coding is not chunked never reaches routing (RFC 9112 6.3).
// The seeds (tests/fuzz/seeds/http_wire) are the attacks of issue 32.

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "service/http/request_parser.h"
#include "service/http/request_route.h"
#include "service/http/web_message.h"

namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using dvexport::http::HttpResponse;
using dvexport::http::ReadBufferLimit;
using dvexport::http::RequestLimits;
using dvexport::http::RequestParser;
using dvexport::http::RoutedRequest;
using dvexport::http::WireRefusal;

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckResponse(const HttpResponse& response) {
  Check(response.status >= 400 && response.status <= 599);
  for (const auto& [name, value] : response.headers) {
    Check(!name.empty());
    for (const std::string* text : {&name, &value}) {
      Check(text->find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
    }
  }
}

void CheckRefusal(const WireRefusal& refusal) {
  Check(refusal.status >= 400 && refusal.status <= 599);
  Check(!refusal.message.empty());
}

// Whether the head's Transfer-Encoding (all its fields) ends in chunked, or there is none.
bool FramedByChunkedOrNothing(const RequestParser& parser) {
  std::string_view last;
  bool any = false;
  for (auto [field, end] = parser.head().equal_range(bhttp::field::transfer_encoding); field != end;
       ++field) {
    any = true;
    for (absl::string_view coding :
         absl::StrSplit(absl::string_view(field->value().data(), field->value().size()), ',')) {
      coding = absl::StripAsciiWhitespace(coding);
      if (!coding.empty()) last = std::string_view(coding.data(), coding.size());
    }
  }
  return !any || absl::EqualsIgnoreCase(absl::string_view(last.data(), last.size()), "chunked");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  RequestLimits limits;
  if (data[0] & 1) {
    limits.max_head_bytes = 1024;
    limits.max_target_bytes = 512;
    limits.max_fields = 8;
    limits.max_chunk_extension_bytes = 64;
    limits.max_body_bytes = 256;
  }
  // The database's DHIS2 whose routes and parameters the door follows: 2.42 or 2.43.
  const int dhis2 = (data[0] & 2) != 0 ? 43 : 42;
  // Pieces of 1 to 128 bytes (0: everything at once, as a fast client's bytes arrive).
  const size_t piece = data[1] % 129 == 0 ? size : data[1] % 129;
  data += 2;
  size -= 2;

  const size_t buffer_limit = ReadBufferLimit(limits);
  beast::flat_buffer buffer(buffer_limit);
  size_t offset = 0;
  // Pipelined requests on one connection, until one fails or closes it.
  for (int request = 0; request < 64; ++request) {
    RequestParser parser(limits);
    parser.eager(true);  // as bhttp::async_read sets it
    beast::error_code error;
    // Beast's read loop (bhttp::read_some): put what the buffer holds; on need_more read more,
    // within the buffer's bound; at the end of the input, the client closed.
    for (;;) {
      if (buffer.size() > 0) {
        error = {};
        const size_t used = parser.put(buffer.data(), error);
        buffer.consume(used);
        if (!error && parser.is_done()) break;
        if (error && error != bhttp::error::need_more) break;
        if (error != bhttp::error::need_more && used > 0) continue;
      }
      if (offset == size) {
        error = {};
        if (parser.got_some()) {
          parser.put_eof(error);
          if (!error && !parser.is_done()) error = bhttp::error::partial_message;
        } else {
          error = bhttp::error::end_of_stream;
        }
        break;
      }
      const size_t room = buffer.max_size() - buffer.size();
      if (room == 0) {
        error = bhttp::error::buffer_overflow;
        break;
      }
      const size_t n = std::min({piece, room, size - offset});
      std::memcpy(buffer.prepare(n).data(), data + offset, n);
      buffer.commit(n);
      offset += n;
      Check(buffer.size() <= buffer_limit);
    }
    if (error) {
      if (const std::optional<WireRefusal> refusal = parser.Refusal(error)) {
        CheckRefusal(*refusal);
      } else {
        Check(error == bhttp::error::end_of_stream || error == bhttp::error::partial_message);
      }
      return 0;  // the connection closes
    }
    Check(parser.is_header_done() && parser.has_request_line());
    Check(parser.head().target().size() <= limits.max_target_bytes);
    size_t fields = 0;
    for (const auto& field : parser.head()) {
      ++fields;
      Check(field.value().size() <= limits.max_head_bytes);
    }
    Check(fields <= static_cast<size_t>(limits.max_fields));
    Check(FramedByChunkedOrNothing(parser));
    if (parser.head().version() >= 11) Check(parser.head().count(bhttp::field::host) == 1);

    const RoutedRequest routed = RouteRequest(parser, dhis2);
    Check(routed.wire_refusal.has_value() + routed.request.has_value() +
              routed.refusal.has_value() ==
          1);
    if (routed.wire_refusal.has_value()) {
      CheckRefusal(*routed.wire_refusal);
      return 0;
    }
    if (routed.refusal.has_value()) CheckResponse(*routed.refusal);
    if (routed.request.has_value()) {
      for (const auto& [name, value] : routed.request->headers) {
        Check(value.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
      }
    }
    if (!parser.keep_alive()) return 0;
  }
  return 0;
}
