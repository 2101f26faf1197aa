// The HTTP door's wire parser (service/http/request_parser.h) and routing (request_route.h),
// without sockets: bytes in, the head, the refusal or the route out.

#include "service/http/request_parser.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "service/http/data_value_sets_request.h"
#include "service/http/request_route.h"

namespace dvexport::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// Parses "bytes" as one request, as the door's read loop does (all bytes at once); the error
// (none when the request is complete).
beast::error_code Parse(RequestParser& parser, std::string_view bytes) {
  parser.eager(true);
  beast::error_code error;
  size_t at = 0;
  while (at < bytes.size() && !parser.is_done()) {
    const size_t used =
        parser.put(boost::asio::buffer(bytes.data() + at, bytes.size() - at), error);
    at += used;
    if (error) return error;
    if (used == 0) break;
  }
  if (!parser.is_done()) parser.put_eof(error);
  return error;
}

int RefusalStatus(std::string_view bytes, const RequestLimits& limits = {}) {
  RequestParser parser(limits);
  const beast::error_code error = Parse(parser, bytes);
  if (!error) return 0;
  const std::optional<WireRefusal> refusal = parser.Refusal(error);
  return refusal.has_value() ? refusal->status : -1;
}

TEST(RequestParserTest, KeepsTheHeadAndDropsBodyAndTrailers) {
  RequestParser parser({});
  ASSERT_FALSE(Parse(parser,
                     "GET /api/dataValueSets?x=1 HTTP/1.1\r\nHost: a\r\nAccept: text/csv\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"));
  EXPECT_EQ(parser.head().method(), bhttp::verb::get);
  EXPECT_EQ(parser.head().target(), "/api/dataValueSets?x=1");
  EXPECT_EQ(parser.head()[bhttp::field::accept], "text/csv");
  EXPECT_EQ(parser.head().count("X-T"), 0u);
}

TEST(RequestParserTest, RefusesWhatBeastWouldThrowOnOrMisframe) {
  EXPECT_EQ(RefusalStatus(absl::StrCat(
                "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: ",
                std::string(65536, 'a'), "\r\n\r\n")),
            400);
  RequestLimits largest;
  largest.max_head_bytes = 63 * 1024;
  EXPECT_EQ(RefusalStatus(absl::StrCat("GET / HTTP/1.1\r\nHost: a\r\nX: ", std::string(65536, 'a'),
                                       "\r\n\r\n"),
                          largest),
            431);
  for (const char* coding : {"gzip", "identity", "chunked, identity", "xchunked", ""}) {
    EXPECT_EQ(RefusalStatus(absl::StrCat("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ", coding,
                                         "\r\n\r\n")),
              400)
        << coding;
  }
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n"
                          "\r\n0\r\n\r\n"),
            400);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                          "0\r\n\r\n"),
            501);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), 400);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: a@b\r\n\r\n"), 400);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"), 400);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.0\r\n\r\n"), 0);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n"), 0);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost:\r\n\r\n"), 0);
}

TEST(RequestParserTest, AMethodBeastDoesNotKnowIsKeptAsText) {
  // Found by http_wire_fuzzer: a body of the wrong length makes its rest the next request line;
  // Beast's method() threw for verb::unknown.
  RequestParser parser({});
  ASSERT_FALSE(Parse(parser, "helloGET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  EXPECT_EQ(parser.head().method(), bhttp::verb::unknown);
  EXPECT_EQ(parser.head().method_string(), "helloGET");
  const RoutedRequest routed = RouteRequest(parser, 42);
  ASSERT_TRUE(routed.refusal.has_value());
  EXPECT_EQ(routed.refusal->status, 404);
}

TEST(RequestParserTest, EveryLimitHasItsStatus) {
  RequestLimits small;
  small.max_head_bytes = 1024;
  small.max_target_bytes = 100;
  small.max_fields = 4;
  small.max_chunk_extension_bytes = 16;
  small.max_body_bytes = 10;
  EXPECT_EQ(
      RefusalStatus(absl::StrCat("GET /", std::string(200, 't'), " HTTP/1.1\r\nHost: a\r\n\r\n"),
                    small),
      414);
  EXPECT_EQ(RefusalStatus(absl::StrCat("GET /", std::string(2000, 't'), " HTTP/1.1\r\n"), small),
            414);
  EXPECT_EQ(
      RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\n\r\n", small),
      431);
  EXPECT_EQ(RefusalStatus(absl::StrCat("GET / HTTP/1.1\r\nHost: a\r\nA: ", std::string(1100, 'a'),
                                       "\r\n\r\n"),
                          small),
            431);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "0\r\nA: 1\r\nB: 1\r\nC: 1\r\n\r\n",
                          small),
            400);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "1;a=12345678901234567\r\nx\r\n0\r\n\r\n",
                          small),
            400);
  EXPECT_EQ(
      RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world", small),
      413);
  EXPECT_EQ(RefusalStatus("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "b\r\nhello world\r\n0\r\n\r\n",
                          small),
            413);
  // The read buffer bounds what a chunk line or a trailer may hold before its end.
  EXPECT_GE(ReadBufferLimit(small), small.max_head_bytes);
}

TEST(RequestRouteTest, AbsoluteFormIsItsPathAndQuery) {
  EXPECT_EQ(ToOriginTarget("http://a:80/api/dataValueSets.json?x=1&y=2").target,
            "/api/dataValueSets.json?x=1&y=2");
  EXPECT_EQ(ToOriginTarget("HTTPS://a/api/dataValueSets").target, "/api/dataValueSets");
  EXPECT_EQ(ToOriginTarget("http://a").target, "/");
  EXPECT_EQ(ToOriginTarget("/x?y").target, "/x?y");
  for (const char* target : {"*", "ftp://a/api/dataValueSets", "a:80", "http:/x", ""}) {
    const OriginTarget origin = ToOriginTarget(target);
    ASSERT_TRUE(origin.refusal.has_value()) << target;
    EXPECT_EQ(origin.refusal->status, 400);
  }
  RequestParser parser({});
  ASSERT_FALSE(Parse(parser,
                     "GET http://h/api/dataValueSets.csv?dataSet=JurnHCkmDCn HTTP/1.1\r\n"
                     "Host: h\r\n\r\n"));
  const RoutedRequest routed = RouteRequest(parser, 42);
  ASSERT_TRUE(routed.request.has_value());
  EXPECT_EQ(routed.request->export_request.format(), v1::FORMAT_CSV);
}

TEST(RequestRouteTest, RefusalsNameTheirStatusInTheWebMessage) {
  for (const int code : {400, 401, 403, 404, 405, 406, 409, 413, 414, 431, 500, 501, 503, 504}) {
    const std::string body = WebMessageBody(code, "m", "", MessageFormat::kJson);
    EXPECT_NE(body.find(absl::StrCat("\"httpStatusCode\":", code)), std::string::npos) << body;
    const std::string phrase(bhttp::obsolete_reason(static_cast<bhttp::status>(code)).data(),
                             bhttp::obsolete_reason(static_cast<bhttp::status>(code)).size());
    // RFC 9110's phrases (Beast still has RFC 7231's for 413 and 414).
    if (code != 413 && code != 414) {
      EXPECT_NE(body.find(absl::StrCat("\"httpStatus\":\"", phrase, "\"")), std::string::npos)
          << body;
    }
  }
  EXPECT_NE(WebMessageBody(413, "m", "", MessageFormat::kJson).find("Content Too Large"),
            std::string::npos);
  EXPECT_NE(WebMessageBody(414, "m", "", MessageFormat::kJson).find("URI Too Long"),
            std::string::npos);
}

}  // namespace
}  // namespace dvexport::http
