// Calls that come before the server knows its database's DHIS2 version wait for one attempt to
// learn it (pipeline::Dhis2VersionGate), so that each DHIS2 is answered by its own routes,
// parameters and rules from the first call: a 2.43 with `/api/43` and `offset`, a 2.42 with its
// own document and `/api/43` a 404, and neither with a 503 "try again" (a call read by another
// version's rules). The databases are the private PostgreSQL's small demo as 2.42 and as 2.43;
// the server starts while they are down, and its health prober probes again only after 10
// minutes, so the first call's wait is what learns the version. A silent database (a proxy that
// passes nothing) holds a waiting call until its deadline.

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "service/server/export_server.h"
#include "tests/reliability/reliability_support.h"
#include "tests/reliability/silenceable_proxy.h"

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// GET "target" on 127.0.0.1:"port": the status and the body (status 0: the request failed).
std::pair<int, std::string> Get(int port, const std::string& target) {
  namespace net = boost::asio;
  namespace bhttp = boost::beast::http;
  net::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.expires_after(seconds(60));
  boost::beast::error_code error;
  stream.connect({net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)}, error);
  if (error) return {0, error.message()};
  bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target, 11};
  request.set(bhttp::field::host, "127.0.0.1");
  request.keep_alive(false);
  bhttp::write(stream, request, error);
  boost::beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  bhttp::read(stream, buffer, parser, error);
  if (error && error != bhttp::error::end_of_stream) return {0, error.message()};
  return {parser.get().result_int(), parser.get().body()};
}

// SmallRequest's query (one leaf, every data set) as DHIS2's URL: "start" (the path and the first
// parameters) then the query's. By default under /api/43, the second value only (offset and
// limit are 2.43's).
std::string SecondValueTarget(std::string start = "/api/43/dataValueSets.json?offset=1&limit=1") {
  const v1::ExportRequest query = SmallRequest().query();
  std::string target = std::move(start);
  for (const std::string& data_set : query.data_set())
    absl::StrAppend(&target, "&dataSet=", data_set);
  absl::StrAppend(&target, "&orgUnit=", query.org_unit(0), "&startDate=", query.start_date(),
                  "&endDate=", query.end_date());
  return target;
}

v1::ExportFileRequest SecondValueRequest() {
  v1::ExportFileRequest request = SmallRequest();
  request.mutable_query()->set_offset(1);
  request.mutable_query()->set_limit(1);
  return request;
}

class VersionWaitTest : public ::testing::Test {
 protected:
  void SetUp() override { proxy_ = std::make_unique<SilenceableProxy>(PrivatePostgres::port()); }

  void TearDown() override {
    server_.reset();
    proxy_.reset();
  }

  // A server on "conninfo" whose health prober probes at the start, then after 10 minutes.
  void StartServer(std::string conninfo) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;
    options.listen = "127.0.0.1:0";
    options.http.listen = "127.0.0.1:0";
    options.conninfo = std::move(conninfo);
    options.health_probe_interval = seconds(600);
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    channel_ = PlaintextChannel(server_->port());
    stub_ = v1::DataValueExport::NewStub(channel_);
  }

  std::string Conninfo243() const {
    std::string conninfo = PrivatePostgres::reader_conninfo_243();
    const std::string port = absl::StrCat("port=", PrivatePostgres::port());
    conninfo.replace(conninfo.find(port), port.size(), absl::StrCat("port=", proxy_->port()));
    return conninfo;
  }

  // An ExportFile of "request" with a deadline "timeout" from now.
  ExportOutcome Export(const v1::ExportFileRequest& request, milliseconds timeout = seconds(60)) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    return ReadExport(stub_.get(), &context, request);
  }

  // A CountDataValues of SecondValueRequest's query: its status and the count.
  std::pair<grpc::Status, int64_t> CountSecondValue() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    v1::CountResponse response;
    const grpc::Status status =
        stub_->CountDataValues(&context, SecondValueRequest().query(), &response);
    return {status, response.count()};
  }

  std::unique_ptr<SilenceableProxy> proxy_;
  std::unique_ptr<server::ExportServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

TEST_F(VersionWaitTest, CallsBeforeTheVersionIsKnownAreAnsweredBy243sRules) {
  PrivatePostgres::Down();
  StartServer(PrivatePostgres::reader_conninfo_243());
  PrivatePostgres::Up();
  const int http_port = server_->http_port();
  auto http = std::async(std::launch::async, [&] { return Get(http_port, SecondValueTarget()); });
  auto file = std::async(std::launch::async, [&] { return Export(SecondValueRequest()); });
  const auto [count_status, counted] = CountSecondValue();
  EXPECT_TRUE(count_status.ok()) << count_status.error_message();
  EXPECT_EQ(counted, 1);
  const auto [status, body] = http.get();
  EXPECT_EQ(status, 200) << body;
  EXPECT_NE(body.find("\"dataValues\":[{"), std::string::npos) << body;
  const ExportOutcome outcome = file.get();
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
  EXPECT_EQ(outcome.trailer.values(), 1);
}

TEST_F(VersionWaitTest, CallsBeforeTheVersionIsKnownAreAnsweredBy242sRules) {
  PrivatePostgres::Down();
  StartServer(PrivatePostgres::reader_conninfo());
  PrivatePostgres::Up();
  // Read by the newest version's rules, the first call would be told to try again (503).
  const auto [status, body] =
      Get(server_->http_port(), SecondValueTarget("/api/dataValueSets.json?limit=1"));
  EXPECT_EQ(status, 200) << body;
  EXPECT_NE(body.find("\"dataValues\":[{"), std::string::npos) << body;
  // 2.42 has no /api/43.
  EXPECT_EQ(Get(server_->http_port(), SecondValueTarget()).first, 404);
  const ExportOutcome outcome = Export(SmallRequest());
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
  EXPECT_GT(outcome.trailer.values(), 0);
}

TEST_F(VersionWaitTest, CallsWaitWhileTheDatabaseIsSilentThenAreAnswered) {
  StartServer(Conninfo243());
  const int http_port = server_->http_port();
  auto http = std::async(std::launch::async, [&] { return Get(http_port, SecondValueTarget()); });
  auto file = std::async(std::launch::async, [&] { return Export(SecondValueRequest()); });
  auto count = std::async(std::launch::async, [&] { return CountSecondValue(); });
  // They wait: the database does not answer.
  EXPECT_EQ(http.wait_for(milliseconds(500)), std::future_status::timeout);
  EXPECT_EQ(file.wait_for(milliseconds(0)), std::future_status::timeout);
  EXPECT_EQ(count.wait_for(milliseconds(0)), std::future_status::timeout);
  proxy_->SetSilent(false);

  const auto [status, body] = http.get();
  EXPECT_EQ(status, 200) << body;
  EXPECT_NE(body.find("\"dataValues\":[{"), std::string::npos) << body;
  const ExportOutcome outcome = file.get();
  EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
  EXPECT_EQ(outcome.trailer.values(), 1);
  const auto [count_status, counted] = count.get();
  EXPECT_TRUE(count_status.ok()) << count_status.error_message();
  EXPECT_EQ(counted, 1);
}

TEST_F(VersionWaitTest, AWaitingCallEndsAtItsDeadline) {
  StartServer(Conninfo243());
  const auto start = Clock::now();
  const ExportOutcome outcome = Export(SecondValueRequest(), milliseconds(300));
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << outcome.status.error_message();
  // Not the learner's 5 s.
  EXPECT_LT(Clock::now() - start, seconds(3));
  // The server serves on once the database answers.
  proxy_->SetSilent(false);
  const ExportOutcome served = Export(SecondValueRequest());
  EXPECT_TRUE(served.status.ok()) << served.status.error_message();
}

TEST_F(VersionWaitTest, ADatabaseThatIsDownFailsTheCallsAfterOneAttempt) {
  PrivatePostgres::Down();
  StartServer(PrivatePostgres::reader_conninfo_243());
  const auto start = Clock::now();
  const auto [status, body] = Get(server_->http_port(), SecondValueTarget());
  EXPECT_EQ(status, 503) << body;
  const ExportOutcome outcome = Export(SecondValueRequest());
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::UNAVAILABLE)
      << outcome.status.error_message();
  EXPECT_NE(outcome.status.error_message().find("cannot connect to PostgreSQL"), std::string::npos)
      << outcome.status.error_message();
  EXPECT_LT(Clock::now() - start, seconds(20));
  PrivatePostgres::Up();
  // Now learned, by the gate's attempt for this call or by the call's own connection.
  const ExportOutcome served = Export(SecondValueRequest());
  EXPECT_TRUE(served.status.ok()) << served.status.error_message();
}

}  // namespace
}  // namespace dvexport::reliability
