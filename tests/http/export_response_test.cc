// ExportResponse: the bytes of an export's HTTP answer, read back with Beast's own parser.
#include "service/http/export_response.h"

#include <gtest/gtest.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace dvexport::http {
namespace {

namespace bhttp = boost::beast::http;

constexpr char kToken[] = "dvx1.token";

RoutedRequest ExportRequest(MessageFormat format = MessageFormat::kJson) {
  RoutedRequest routed;
  routed.request.emplace();
  routed.request->export_request.set_format(dvexport::v1::FORMAT_CSV);
  routed.request->headers = {{"Content-Type", "application/csv;charset=UTF-8"}};
  routed.message_format = format;
  return routed;
}

RoutedRequest DoorRefused(int status) {
  RoutedRequest routed;
  routed.refusal = WebMessageResponse(status, "Not Found", "", MessageFormat::kJson);
  return routed;
}

// Everything written for "chunks" (the last one the trailer), as one string; each Frame's result
// in "writes".
std::string Written(ExportResponse& response, const std::vector<std::string>& chunks,
                    std::vector<ExportResponse::Write>* writes) {
  std::string wire;
  for (size_t i = 0; i < chunks.size(); ++i) {
    ResponseBytes out;
    const ExportResponse::Write write =
        response.Frame(chunks[i], /*trailer=*/i + 1 == chunks.size(), kToken, &out);
    writes->push_back(write);
    if (write != ExportResponse::Write::kNothing) {
      wire += out.head;
      wire += out.body;
      wire += out.tail;
    }
    if (write == ExportResponse::Write::kHeadOnly) break;
  }
  return wire;
}

// "wire" read as one complete HTTP response by Beast; fails the test where it is not one.
bhttp::response<bhttp::string_body> Parsed(const std::string& wire, bool eof_ends_body = false) {
  bhttp::response_parser<bhttp::string_body> parser;
  parser.eager(true);
  boost::beast::error_code error;
  const size_t used = parser.put(boost::asio::buffer(wire), error);
  if (error == bhttp::error::need_more) error = {};
  if (!error && !parser.is_done() && eof_ends_body) parser.put_eof(error);
  EXPECT_FALSE(error) << error.message();
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(used, wire.size());
  return parser.release();
}

TEST(ExportResponseTest, ChunkedAnswerCarriesEveryDataChunkAndTheChangeToken) {
  ExportResponse response;
  absl::StatusOr<dvexport::v1::ExportFileRequest> request =
      response.Start(ExportRequest(), ResponseFraming{11, false, true}, false);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->format(), dvexport::v1::FORMAT_CSV);

  std::vector<ExportResponse::Write> writes;
  const std::string wire =
      Written(response, {"dataelement,period\n", "", std::string(70000, 'x'), "trailer"}, &writes);
  EXPECT_EQ(writes, (std::vector<ExportResponse::Write>{
                        ExportResponse::Write::kBytes, ExportResponse::Write::kNothing,
                        ExportResponse::Write::kBytes, ExportResponse::Write::kBytes}));
  EXPECT_EQ(wire.rfind("0\r\n\r\n"), wire.size() - 5);
  const bhttp::response<bhttp::string_body> parsed = Parsed(wire);
  EXPECT_EQ(parsed.result_int(), 200);
  EXPECT_TRUE(parsed.chunked());
  EXPECT_EQ(parsed["Dvexport-Change-Token"], kToken);
  EXPECT_EQ(parsed["Content-Type"], "application/csv;charset=UTF-8");
  EXPECT_EQ(parsed.body(), "dataelement,period\n" + std::string(70000, 'x'));

  HttpResponse refusal;
  EXPECT_EQ(response.Finish(absl::OkStatus(), &refusal), ExportResponse::Ending::kNextRequest);
  EXPECT_TRUE(response.ReuseConnection());
}

TEST(ExportResponseTest, Http10WritesTheBodyUnframedAndEndsWithTheConnection) {
  ExportResponse response;
  ASSERT_TRUE(response.Start(ExportRequest(), ResponseFraming{10, false, true}, false).ok());
  std::vector<ExportResponse::Write> writes;
  const std::string wire = Written(response, {"a,b\n", "1,2\n", "trailer"}, &writes);
  // The trailer's bytes are not part of the file, and HTTP/1.0 has no last chunk.
  EXPECT_EQ(writes.back(), ExportResponse::Write::kNothing);
  const bhttp::response<bhttp::string_body> parsed = Parsed(wire, /*eof_ends_body=*/true);
  EXPECT_FALSE(parsed.chunked());
  EXPECT_FALSE(parsed.keep_alive());
  EXPECT_EQ(parsed.body(), "a,b\n1,2\n");
  HttpResponse refusal;
  EXPECT_EQ(response.Finish(absl::OkStatus(), &refusal), ExportResponse::Ending::kNextRequest);
  EXPECT_FALSE(response.ReuseConnection());
}

TEST(ExportResponseTest, Http10EmptyExportStillSendsItsHead) {
  ExportResponse response;
  ASSERT_TRUE(response.Start(ExportRequest(), ResponseFraming{10, false, false}, false).ok());
  std::vector<ExportResponse::Write> writes;
  const std::string wire = Written(response, {"trailer"}, &writes);
  EXPECT_EQ(writes, std::vector<ExportResponse::Write>{ExportResponse::Write::kBytes});
  EXPECT_EQ(Parsed(wire, /*eof_ends_body=*/true).body(), "");
}

TEST(ExportResponseTest, HeadSendsTheHeadersOfGetAndNoBody) {
  ExportResponse get;
  ASSERT_TRUE(get.Start(ExportRequest(), ResponseFraming{11, false, true}, false).ok());
  ResponseBytes get_bytes;
  ASSERT_EQ(get.Frame("a,b\n", false, kToken, &get_bytes), ExportResponse::Write::kBytes);

  ExportResponse head;
  ASSERT_TRUE(head.Start(ExportRequest(), ResponseFraming{11, true, true}, false).ok());
  ResponseBytes head_bytes;
  EXPECT_EQ(head.Frame("a,b\n", false, kToken, &head_bytes), ExportResponse::Write::kHeadOnly);
  EXPECT_TRUE(head_bytes.body.empty());
  EXPECT_TRUE(head_bytes.tail.empty());
  // GET's first write is its head and then its first chunk's size line.
  EXPECT_EQ(get_bytes.head, head_bytes.head + "4\r\n");

  // The export is cancelled once the head went out: the connection goes on all the same.
  HttpResponse refusal;
  EXPECT_EQ(head.Finish(HeadAnswered(), &refusal), ExportResponse::Ending::kNextRequest);
  EXPECT_TRUE(head.ReuseConnection());
}

TEST(ExportResponseTest, FailureAfterTheHeadClosesWithoutTheLastChunk) {
  ExportResponse response;
  ASSERT_TRUE(response.Start(ExportRequest(), ResponseFraming{11, false, true}, false).ok());
  ResponseBytes out;
  ASSERT_EQ(response.Frame("a,b\n", false, kToken, &out), ExportResponse::Write::kBytes);
  HttpResponse refusal;
  EXPECT_EQ(response.Finish(absl::UnavailableError("the database went away"), &refusal),
            ExportResponse::Ending::kClose);
}

TEST(ExportResponseTest, RefusalBeforeTheFirstChunkIsAWebMessageInTheRequestsFormat) {
  ExportResponse response;
  ASSERT_TRUE(
      response.Start(ExportRequest(MessageFormat::kXml), ResponseFraming{11, false, true}, false)
          .ok());
  HttpResponse refusal;
  ASSERT_EQ(response.Finish(absl::PermissionDeniedError("no access"), &refusal),
            ExportResponse::Ending::kRespond);
  const HttpResponse expected =
      RefusalResponse(absl::PermissionDeniedError("no access"), MessageFormat::kXml, false);
  EXPECT_EQ(refusal.status, expected.status);
  EXPECT_EQ(refusal.headers, expected.headers);
  EXPECT_EQ(refusal.body, expected.body);

  // An export that ends without any output is the server's failure, never an empty 200.
  ASSERT_TRUE(response.Start(ExportRequest(), ResponseFraming{11, false, true}, false).ok());
  ASSERT_EQ(response.Finish(absl::OkStatus(), &refusal), ExportResponse::Ending::kRespond);
  EXPECT_EQ(refusal.status, 500);
}

TEST(ExportResponseTest, DoorsOwnRefusalIsSentOnlyOnceTheCallerAuthenticated) {
  ExportResponse response;
  const absl::StatusOr<dvexport::v1::ExportFileRequest> request =
      response.Start(DoorRefused(404), ResponseFraming{11, false, true}, true);
  ASSERT_FALSE(request.ok());
  const absl::Status door_status = request.status();

  // The pipeline authenticated the caller and ended with the door's status: the door's 404.
  HttpResponse answer;
  ASSERT_EQ(response.Finish(door_status, &answer), ExportResponse::Ending::kRespond);
  EXPECT_EQ(answer.status, 404);

  // The caller's credentials failed: only that is told, never the 404.
  ASSERT_FALSE(response.Start(DoorRefused(404), ResponseFraming{11, false, true}, true).ok());
  ASSERT_EQ(response.Finish(absl::UnauthenticatedError("Unauthorized"), &answer),
            ExportResponse::Ending::kRespond);
  EXPECT_EQ(answer.status, 401);
}

}  // namespace
}  // namespace dvexport::http
