// The HTTP door end to end: a real HttpServer over a real pipeline on the demo database
// (DVEXPORT_TEST_PG), real sockets over loopback, a Boost.Beast client (or raw bytes, for what
// no client library sends). Exports are compared with the gRPC door's ExportFile of the same
// request, on the same database.

#include "service/http/http_server.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/auth/client_identities.h"
#include "service/db/connection_pool.h"
#include "service/http/data_value_sets_request.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/export.h"
#include "service/pipeline/export_pipeline.h"
#include "service/server/export_server.h"
#include "tests/integration/test_database.h"
#include "tests/reliability/reliability_support.h"

namespace dvexport::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// The demo database's tokens (docs/DEMO.md): admin's, and district's expired one.
constexpr char kAdminToken[] = "ApiToken d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb";
constexpr char kExpiredToken[] = "ApiToken d2p_aV5JpuQPofsMO7Ndvtvji19xqyPeOFMFqQrfqzyfFkZH14IWVK";
// The pool's connections name themselves (with the process's id: ctest may run two of these
// tests at once), so that a test finds only its own backends in pg_stat_activity while other
// tests share the database.
std::string ApplicationName() { return absl::StrCat("dvexport_http_server_test_", getpid()); }

using Headers = std::vector<std::pair<std::string, std::string>>;

// One response as a client read it.
struct Response {
  beast::error_code error;  // of the read: none when the response was complete
  int status = 0;
  unsigned version = 0;
  Headers headers;
  std::string body;
  bool chunked = false;
  int chunks = 0;  // HTTP chunks with data

  std::string Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (beast::iequals(key, name)) return value;
    }
    return "";
  }
  bool HasHeader(std::string_view name) const {
    for (const auto& header : headers) {
      if (beast::iequals(header.first, name)) return true;
    }
    return false;
  }
};

// A blocking client on one plaintext connection.
class Client {
 public:
  // "receive_buffer": SO_RCVBUF before connecting (0: the system's), to make a client that
  // stops reading fill up soon.
  // "source": the local address to connect from (any 127.x.y.z is this host).
  explicit Client(int port, int receive_buffer = 0, const char* source = "127.0.0.1")
      : socket_(io_) {
    beast::error_code error;
    socket_.open(tcp::v4(), error);
    if (receive_buffer > 0) {
      socket_.set_option(net::socket_base::receive_buffer_size(receive_buffer), error);
    }
    socket_.bind(tcp::endpoint(net::ip::make_address(source), 0), error);
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), error);
    EXPECT_FALSE(error) << error.message();
  }

  tcp::socket& socket() { return socket_; }

  void SendRaw(std::string_view bytes) {
    beast::error_code error;
    net::write(socket_, net::buffer(bytes.data(), bytes.size()), error);
    EXPECT_FALSE(error) << error.message();
  }

  void Send(bhttp::verb method, const std::string& target, const Headers& headers = {},
            unsigned version = 11) {
    bhttp::request<bhttp::empty_body> request{method, target, version};
    request.set(bhttp::field::host, "127.0.0.1");
    for (const auto& [name, value] : headers) request.insert(name, value);
    beast::error_code error;
    bhttp::write(socket_, request, error);
    EXPECT_FALSE(error) << error.message();
  }

  // Reads one response; "head": it answers a HEAD (no body follows its headers).
  Response Read(bool head = false) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(boost::none);
    parser.skip(head);
    int chunks = 0;
    auto on_chunk = [&chunks](std::uint64_t size, beast::string_view, beast::error_code&) {
      if (size > 0) ++chunks;
    };
    parser.on_chunk_header(on_chunk);
    Response response;
    bhttp::read(socket_, buffer_, parser, response.error);
    if (parser.is_header_done()) {
      const auto& message = parser.get();
      response.status = message.result_int();
      response.version = message.version();
      for (const auto& field : message) {
        response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      response.chunked = message.chunked();
      response.body = message.body();
    }
    response.chunks = chunks;
    return response;
  }

  // Reads the status line and headers only, and whatever part of the body came with them.
  Response ReadHeader(bhttp::response_parser<bhttp::string_body>* parser) {
    parser->body_limit(boost::none);
    Response response;
    bhttp::read_header(socket_, buffer_, *parser, response.error);
    response.status = parser->get().result_int();
    return response;
  }

  // Reads on after ReadHeader, to the end of the response: the error (none if it completed).
  beast::error_code ReadBody(bhttp::response_parser<bhttp::string_body>* parser) {
    beast::error_code error;
    bhttp::read(socket_, buffer_, *parser, error);
    return error;
  }

  // Reads whatever comes until the server closes the connection (or "timeout" passes): the
  // bytes, and whether it closed.
  std::pair<std::string, bool> ReadUntilClosed(milliseconds timeout) {
    std::string bytes = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    const Clock::time_point end = Clock::now() + timeout;
    char chunk[64 * 1024];
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now());
      if (left.count() <= 0) return {bytes, false};
      pollfd waiting{socket_.native_handle(), POLLIN, 0};
      if (poll(&waiting, 1, static_cast<int>(left.count())) <= 0) continue;
      beast::error_code error;
      const size_t n = socket_.read_some(net::buffer(chunk), error);
      if (error) return {bytes, true};
      bytes.append(chunk, n);
    }
  }

  // Closes with a reset (SO_LINGER 0) instead of FIN.
  void Reset() {
    beast::error_code error;
    socket_.set_option(net::socket_base::linger(true, 0), error);
    socket_.close(error);
  }
  void Close() {
    beast::error_code error;
    socket_.close(error);
  }
  // Sends FIN and goes on reading (a half-closed client).
  void HalfClose() {
    beast::error_code error;
    socket_.shutdown(tcp::socket::shutdown_send, error);
  }

 private:
  net::io_context io_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

// Polls "condition" every 10 ms until it holds or "timeout" passes; true if it held.
bool WaitFor(const std::function<bool()>& condition, milliseconds timeout) {
  const Clock::time_point end = Clock::now() + timeout;
  while (!condition()) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

std::string ConninfoWithName() {
  return absl::StrCat(testing::TestConninfo(), " application_name=", ApplicationName());
}

class HttpServerTest : public ::testing::Test {
 protected:
  static pipeline::PipelineOptions Options() {
    pipeline::PipelineOptions options;
    options.chunk_size = 16 * 1024;     // many chunks even for small exports
    options.read_plan.max_streams = 1;  // one COPY: the order of the values is the table's
    options.max_concurrent_exports = 2;
    return options;
  }

  static void SetUpTestSuite() {
    data_sets_ =
        new std::vector<std::string>(testing::QueryColumn("SELECT uid FROM dataset ORDER BY uid"));
    roots_ = new std::vector<std::string>(testing::QueryColumn(
        "SELECT uid FROM organisationunit WHERE parentid IS NULL ORDER BY uid"));
    leaf_ = new std::string(testing::QueryColumn(
        "SELECT ou.uid FROM organisationunit ou JOIN datavalue dv ON dv.sourceid = "
        "ou.organisationunitid GROUP BY ou.uid ORDER BY count(*) DESC, ou.uid LIMIT 1")[0]);

    server::ServerOptions grpc_options;
    grpc_options.listen = "127.0.0.1:0";
    grpc_options.conninfo = testing::TestConninfo();
    grpc_options.pool_size = 4;
    grpc_options.service = Options();
    auto grpc_server = server::ExportServer::Start(grpc_options);
    ASSERT_TRUE(grpc_server.ok()) << grpc_server.status();
    grpc_server_ = grpc_server->release();
    stub_ = v1::DataValueExport::NewStub(
                grpc::CreateChannel(absl::StrCat("127.0.0.1:", grpc_server_->port()),
                                    grpc::InsecureChannelCredentials()))
                .release();
  }

  static void TearDownTestSuite() {
    delete stub_;
    delete grpc_server_;
    delete data_sets_;
    delete roots_;
    delete leaf_;
  }

  // A pipeline of the test's own on a pool of its own.
  void StartPipeline(const pipeline::PipelineOptions& options = Options()) {
    pool_ = std::make_unique<db::ConnectionPool>(ConninfoWithName(), 8);
    log_ = std::make_unique<pipeline::CallLog>(nullptr, nullptr);
    pipeline_ = std::make_unique<pipeline::ExportPipeline>(pool_.get(), options, log_.get());
  }

  void StartServer(HttpServerOptions options = {}) {
    if (pipeline_ == nullptr) StartPipeline();
    options.listen = "127.0.0.1:0";
    auto started = HttpServer::Start(options, pipeline_.get());
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  void TearDown() override {
    server_.reset();
    // Every call of the pipeline ended (readers joined) before it goes.
    if (pipeline_ != nullptr) {
      EXPECT_TRUE(pipeline_->WaitForCalls(milliseconds(10000)));
    }
    pipeline_.reset();
    log_.reset();
    pool_.reset();
  }

  // Every data set, every root with its children, all periods.
  static std::string WholeDatabaseTarget(absl::string_view suffix = "") {
    return absl::StrCat("/api/dataValueSets", suffix, "?dataSet=", absl::StrJoin(*data_sets_, ","),
                        "&orgUnit=", absl::StrJoin(*roots_, ","),
                        "&children=true&startDate=1900-01-01&endDate=2100-12-31");
  }

  // The org unit with the most values, alone: a small export.
  static std::string SmallTarget() {
    return absl::StrCat("/api/dataValueSets?dataSet=", absl::StrJoin(*data_sets_, ","),
                        "&orgUnit=", *leaf_, "&startDate=1900-01-01&endDate=2100-12-31");
  }

  // The bytes of the gRPC door's ExportFile of the request "target" stands for.
  static std::string GrpcExportFile(const std::string& target) {
    ParsedRequest parsed = ParseDataValueSetsRequest(target, "", 42);
    EXPECT_TRUE(parsed.request.has_value());
    if (!parsed.request.has_value()) return "";
    grpc::ClientContext context;
    context.AddMetadata("authorization", kAdminToken);
    auto reader = stub_->ExportFile(&context, parsed.request->export_request);
    std::string bytes;
    v1::FileChunk chunk;
    while (reader->Read(&chunk)) {
      if (!chunk.has_trailer()) bytes += chunk.data();
    }
    const grpc::Status status = reader->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    return bytes;
  }

  static std::vector<std::string>* data_sets_;
  static std::vector<std::string>* roots_;
  static std::string* leaf_;
  static server::ExportServer* grpc_server_;
  static v1::DataValueExport::Stub* stub_;

  std::unique_ptr<db::ConnectionPool> pool_;
  std::unique_ptr<pipeline::CallLog> log_;
  std::unique_ptr<pipeline::ExportPipeline> pipeline_;
  std::unique_ptr<HttpServer> server_;
};

std::vector<std::string>* HttpServerTest::data_sets_ = nullptr;
std::vector<std::string>* HttpServerTest::roots_ = nullptr;
std::string* HttpServerTest::leaf_ = nullptr;
server::ExportServer* HttpServerTest::grpc_server_ = nullptr;
v1::DataValueExport::Stub* HttpServerTest::stub_ = nullptr;

// The server's end of "client"'s connection, found among this process's descriptors (the server
// runs in the test's process); -1 until the server has accepted it.
int ServerEnd(int server_port, Client& client) {
  beast::error_code error;
  const int client_port = client.socket().local_endpoint(error).port();
  for (int fd = 0; fd < 4096; ++fd) {
    sockaddr_in local{}, peer{};
    socklen_t local_length = sizeof(local), peer_length = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0 ||
        local.sin_family != AF_INET) {
      continue;
    }
    if (ntohs(local.sin_port) == server_port && ntohs(peer.sin_port) == client_port) return fd;
  }
  return -1;
}

// Shrinks the send buffer of the server's socket of "client" before it sends anything: once the
// client stops reading, the export is held back mid-stream at once, as behind a slow network,
// whatever the loopback's buffers would otherwise take (an export of the demo database fits in
// them whole).
void ShrinkServerSendBuffer(int server_port, Client& client) {
  int fd = -1;
  ASSERT_TRUE(WaitFor([&] { return (fd = ServerEnd(server_port, client)) >= 0; }, seconds(5)));
  const int size = 4096;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)), 0);
}

// A client that asked for the whole database and stopped reading after the headers: the export
// holds its slot mid-stream.
std::unique_ptr<Client> StalledClient(int server_port, const std::string& target) {
  auto client = std::make_unique<Client>(server_port, /*receive_buffer=*/4096);
  ShrinkServerSendBuffer(server_port, *client);
  client->Send(bhttp::verb::get, target, {{"Authorization", kAdminToken}});
  return client;
}

// Ends the backends of this test's pool that are inside a transaction (an export's read
// session: its COPY, or the transaction it holds while its readers wait for the client); how many.
int TerminateExportBackends() {
  return std::stoi(testing::QueryColumn(absl::StrCat(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '",
      ApplicationName(), "' AND state IN ('active', 'idle in transaction')"))[0]);
}

// Whether a new connection to "port" is refused, or closed before anything is sent.
bool Refused(int port) {
  net::io_context io;
  tcp::socket socket(io);
  beast::error_code error;
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), error);
  if (error) return true;
  char byte;
  socket.read_some(net::buffer(&byte, 1), error);
  return static_cast<bool>(error);
}

nlohmann::json ParseJson(const std::string& body) {
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << body;
  return json;
}

TEST_F(HttpServerTest, JsonExportIsExportFileBytesInHttpChunks) {
  StartServer();
  const std::string target = WholeDatabaseTarget(".json");
  Client client(server_->port());
  client.Send(bhttp::verb::get, target, {{"Authorization", kAdminToken}});
  const Response response = client.Read();
  ASSERT_FALSE(response.error) << response.error.message();
  EXPECT_EQ(response.status, 200);
  EXPECT_TRUE(response.chunked);
  EXPECT_EQ(response.Header("Transfer-Encoding"), "chunked");
  EXPECT_FALSE(response.HasHeader("Content-Length"));
  EXPECT_EQ(response.Header("Content-Type"), "application/json;charset=UTF-8");
  EXPECT_FALSE(response.Header("Dvexport-Change-Token").empty());
  // 16 KiB chunks: one HTTP chunk each.
  EXPECT_GT(response.chunks, static_cast<int>(response.body.size() / (32 * 1024)));
  const std::string expected = GrpcExportFile(target);
  ASSERT_GT(expected.size(), 100000u);
  EXPECT_EQ(response.body.size(), expected.size());
  EXPECT_TRUE(response.body == expected) << "the HTTP body differs from ExportFile's bytes";
}

TEST_F(HttpServerTest, CsvAndGzipAreExportFileBytesToo) {
  StartServer();
  for (const std::string& target :
       {WholeDatabaseTarget(".csv"), absl::StrCat(SmallTarget(), "&compression=gzip")}) {
    Client client(server_->port());
    client.Send(bhttp::verb::get, target, {{"Authorization", kAdminToken}});
    const Response response = client.Read();
    ASSERT_FALSE(response.error) << response.error.message();
    EXPECT_EQ(response.status, 200);
    EXPECT_TRUE(response.body == GrpcExportFile(target)) << target;
  }
}

TEST_F(HttpServerTest, HeadHasGetsHeadersWithoutBodyAndKeepsTheConnection) {
  StartServer();
  const std::string target = SmallTarget();
  Client client(server_->port());
  client.Send(bhttp::verb::head, target, {{"Authorization", kAdminToken}});
  const Response head = client.Read(/*head=*/true);
  ASSERT_FALSE(head.error) << head.error.message();
  client.Send(bhttp::verb::get, target, {{"Authorization", kAdminToken}});
  const Response get = client.Read();
  ASSERT_FALSE(get.error) << get.error.message();
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(get.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_FALSE(get.body.empty());
  // The change token names each export's snapshot; every other header is the same.
  auto without_token = [](Headers headers) {
    std::erase_if(headers, [](const auto& h) { return h.first == "Dvexport-Change-Token"; });
    return headers;
  };
  EXPECT_TRUE(head.HasHeader("Dvexport-Change-Token"));
  EXPECT_EQ(without_token(head.headers), without_token(get.headers));
  // The HEAD's export was cancelled once its headers were known: it holds nothing.
  EXPECT_TRUE(WaitFor([&] { return pipeline_->live_calls() == 0; }, seconds(2)));
  EXPECT_EQ(pipeline_->active_exports(), 0);
}

TEST_F(HttpServerTest, HeadOfARefusedRequestIsTheRefusalsHeaders) {
  StartServer();
  Client client(server_->port());
  client.Send(bhttp::verb::head, "/api/dataValueSets");
  const Response head = client.Read(/*head=*/true);
  client.Send(bhttp::verb::get, "/api/dataValueSets");
  const Response get = client.Read();
  EXPECT_EQ(head.status, 401);
  EXPECT_EQ(head.headers, get.headers);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(get.Header("Content-Length"), std::to_string(get.body.size()));
}

TEST_F(HttpServerTest, NoCredentialsIs401WebMessage) {
  StartServer();
  Client client(server_->port());
  client.Send(bhttp::verb::get, SmallTarget());
  const Response response = client.Read();
  ASSERT_FALSE(response.error) << response.error.message();
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(response.Header("Content-Type"), "application/json;charset=UTF-8");
  EXPECT_FALSE(response.HasHeader("WWW-Authenticate"));
  EXPECT_FALSE(response.chunked);
  const nlohmann::json json = ParseJson(response.body);
  EXPECT_EQ(json.value("httpStatusCode", 0), 401);
  EXPECT_EQ(json.value("status", ""), "ERROR");
}

TEST_F(HttpServerTest, ExpiredTokenIs401WithWwwAuthenticateApiToken) {
  StartServer();
  Client client(server_->port());
  client.Send(bhttp::verb::get, SmallTarget(), {{"Authorization", kExpiredToken}});
  const Response response = client.Read();
  ASSERT_FALSE(response.error) << response.error.message();
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(response.Header("WWW-Authenticate"), "ApiToken");
  EXPECT_EQ(ParseJson(response.body).value("message", ""),
            "Failed to authenticate API token, token has expired.");
}

TEST_F(HttpServerTest, IllegalQueryIs409WithTheLastFailingRulesErrorCode) {
  StartServer();
  Client client(server_->port());
  // E2002 (no period) and E2006 (no org unit) both fail: DHIS2's URL reports the last.
  client.Send(bhttp::verb::get, absl::StrCat("/api/dataValueSets?dataSet=", data_sets_->at(0)),
              {{"Authorization", kAdminToken}});
  const Response response = client.Read();
  ASSERT_FALSE(response.error) << response.error.message();
  EXPECT_EQ(response.status, 409);
  const nlohmann::json json = ParseJson(response.body);
  EXPECT_EQ(json.value("httpStatusCode", 0), 409);
  EXPECT_EQ(json.value("errorCode", ""), "E2006");
  // The connection is kept after a refusal.
  client.Send(bhttp::verb::get, SmallTarget(), {{"Authorization", kAdminToken}});
  const Response next = client.Read();
  ASSERT_FALSE(next.error) << next.error.message();
  EXPECT_EQ(next.status, 200);
}

TEST_F(HttpServerTest, KeepAliveServesTwoExportsOnOneConnection) {
  StartServer();
  const std::string target = SmallTarget();
  const std::string expected = GrpcExportFile(target);
  Client client(server_->port());
  for (int i = 0; i < 2; ++i) {
    client.Send(bhttp::verb::get, target, {{"Authorization", kAdminToken}});
    const Response response = client.Read();
    ASSERT_FALSE(response.error) << i << ": " << response.error.message();
    EXPECT_EQ(response.status, 200);
    EXPECT_TRUE(response.body == expected) << i;
    EXPECT_EQ(server_->connections(), 1);
  }
  // Pipelined: both requests sent before the first answer is read.
  client.Send(bhttp::verb::get, target, {{"Authorization", kAdminToken}});
  client.Send(bhttp::verb::get, "/nowhere", {{"Authorization", kAdminToken}});
  EXPECT_EQ(client.Read().status, 200);
  EXPECT_EQ(client.Read().status, 404);
}

TEST_F(HttpServerTest, ConnectionCloseAndHttp10EndWithTheConnection) {
  StartServer();
  const std::string target = SmallTarget();
  const std::string expected = GrpcExportFile(target);
  {
    Client client(server_->port());
    client.Send(bhttp::verb::get, target,
                {{"Authorization", kAdminToken}, {"Connection", "close"}});
    const Response response = client.Read();
    ASSERT_FALSE(response.error) << response.error.message();
    EXPECT_TRUE(response.chunked);
    EXPECT_EQ(response.Header("Connection"), "close");
    EXPECT_TRUE(response.body == expected);
    EXPECT_TRUE(client.ReadUntilClosed(seconds(2)).second);
  }
  {
    // HTTP/1.0 has no chunked encoding: the body ends with the connection.
    Client client(server_->port());
    client.SendRaw(
        absl::StrCat("GET ", target, " HTTP/1.0\r\nAuthorization: ", kAdminToken, "\r\n\r\n"));
    const auto [bytes, closed] = client.ReadUntilClosed(seconds(10));
    EXPECT_TRUE(closed);
    const size_t head_end = bytes.find("\r\n\r\n");
    ASSERT_NE(head_end, std::string::npos);
    const std::string head = bytes.substr(0, head_end);
    EXPECT_TRUE(absl::StartsWith(head, "HTTP/1.0 200 OK\r\n")) << head;
    EXPECT_EQ(head.find("Transfer-Encoding"), std::string::npos) << head;
    EXPECT_EQ(head.find("Content-Length"), std::string::npos) << head;
    EXPECT_TRUE(bytes.substr(head_end + 4) == expected);
  }
}

TEST_F(HttpServerTest, OtherPathsAre404AndOtherMethods405) {
  StartServer();
  Client client(server_->port());
  client.Send(bhttp::verb::get, "/api/dataElements", {{"Authorization", kAdminToken}});
  const Response not_found = client.Read();
  EXPECT_EQ(not_found.status, 404);
  EXPECT_EQ(ParseJson(not_found.body).value("httpStatusCode", 0), 404);
  client.Send(bhttp::verb::post, SmallTarget(), {{"Authorization", kAdminToken}});
  const Response not_allowed = client.Read();
  EXPECT_EQ(not_allowed.status, 405);
  EXPECT_EQ(not_allowed.Header("Allow"), "GET, HEAD");
  EXPECT_EQ(ParseJson(not_allowed.body).value("httpStatusCode", 0), 405);
  // Both kept the connection.
  client.Send(bhttp::verb::get, "/api/dataValueSets");
  EXPECT_EQ(client.Read().status, 401);
}

TEST_F(HttpServerTest, ClientThatGoesAwayMidExportFreesItsSlotWithinASecond) {
  StartServer();
  // Closing with unread bytes sends RST; a half-close sends only FIN (CLOSE_WAIT on the server's
  // side): no write fails then, the socket's state tells.
  for (const bool reset : {false, true}) {
    std::unique_ptr<Client> client = StalledClient(server_->port(), WholeDatabaseTarget());
    bhttp::response_parser<bhttp::string_body> parser;
    ASSERT_EQ(client->ReadHeader(&parser).status, 200);
    // The export is held back by its client mid-stream.
    std::this_thread::sleep_for(milliseconds(300));
    ASSERT_EQ(pipeline_->active_exports(), 1);
    const Clock::time_point gone = Clock::now();
    if (reset) {
      client->Reset();
    } else {
      client->HalfClose();
    }
    EXPECT_TRUE(WaitFor([&] { return pipeline_->active_exports() == 0; }, milliseconds(1500)))
        << (reset ? "RST" : "FIN");
    EXPECT_LT(Clock::now() - gone, milliseconds(1500));
    EXPECT_TRUE(WaitFor([&] { return pipeline_->live_calls() == 0; }, seconds(2)));
    if (!reset) {
      // The server closed without the last chunk.
      EXPECT_TRUE(client->ReadBody(&parser));
      EXPECT_FALSE(parser.is_done());
    }
    EXPECT_TRUE(WaitFor([&] { return server_->connections() == 0; }, seconds(2)));
  }
}

TEST_F(HttpServerTest, ClientThatGoesAwayWhileQueuedFreesItsPlace) {
  pipeline::PipelineOptions options = Options();
  options.max_concurrent_exports = 1;
  StartPipeline(options);
  StartServer();
  // The only slot is held by an export whose client reads nothing.
  std::unique_ptr<Client> holder = StalledClient(server_->port(), WholeDatabaseTarget());
  ASSERT_TRUE(WaitFor([&] { return pipeline_->active_exports() == 1; }, seconds(10)));
  Client waiting(server_->port());
  waiting.Send(bhttp::verb::get, SmallTarget(), {{"Authorization", kAdminToken}});
  ASSERT_TRUE(WaitFor([&] { return pipeline_->queued_exports() == 1; }, seconds(10)));
  // Nothing was sent to it: it waits before its first byte.
  const Clock::time_point gone = Clock::now();
  waiting.Close();
  EXPECT_TRUE(WaitFor([&] { return pipeline_->queued_exports() == 0; }, milliseconds(1500)));
  EXPECT_LT(Clock::now() - gone, milliseconds(1500));
  EXPECT_EQ(pipeline_->active_exports(), 1);
  holder->Reset();
  EXPECT_TRUE(WaitFor([&] { return pipeline_->active_exports() == 0; }, milliseconds(1500)));
}

TEST_F(HttpServerTest, DatabaseFailureAfterTheFirstByteEndsWithoutTheLastChunk) {
  StartServer();
  std::unique_ptr<Client> client = StalledClient(server_->port(), WholeDatabaseTarget());
  bhttp::response_parser<bhttp::string_body> parser;
  const Response head = client->ReadHeader(&parser);
  ASSERT_EQ(head.status, 200);
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_EQ(pipeline_->active_exports(), 1);
  // The export's database session ends while its client holds it back.
  ASSERT_EQ(TerminateExportBackends(), 1);
  // The client reads on: what was sent, then the end of the connection (at once, not after the
  // idle timeout), and no last chunk.
  const Clock::time_point start = Clock::now();
  const beast::error_code error = client->ReadBody(&parser);
  EXPECT_LT(Clock::now() - start, seconds(5));
  EXPECT_EQ(error, bhttp::error::partial_message) << error.message();
  EXPECT_FALSE(parser.is_done());
  EXPECT_GT(parser.get().body().size(), 0u);
  EXPECT_TRUE(WaitFor([&] { return pipeline_->live_calls() == 0; }, seconds(2)));
}

TEST_F(HttpServerTest, StalledClientIsClosedWithoutTheLastChunk) {
  pipeline::PipelineOptions options = Options();
  options.stall_timeout = milliseconds(300);
  options.stall_timeout_contended = milliseconds(300);
  options.stall_min_rate = 0;
  StartPipeline(options);
  StartServer();
  std::unique_ptr<Client> client = StalledClient(server_->port(), WholeDatabaseTarget());
  bhttp::response_parser<bhttp::string_body> parser;
  ASSERT_EQ(client->ReadHeader(&parser).status, 200);
  // The pipeline aborts the export after the stall timeout: the server closes the connection.
  ASSERT_TRUE(WaitFor([&] { return pipeline_->live_calls() == 0; }, seconds(5)));
  const beast::error_code error = client->ReadBody(&parser);
  EXPECT_TRUE(error == bhttp::error::partial_message || error == net::error::connection_reset)
      << error.message();
  EXPECT_FALSE(parser.is_done());
}

TEST_F(HttpServerTest, SlowlorisIsClosedAfterTheHeaderTimeout) {
  HttpServerOptions options;
  options.header_timeout = milliseconds(500);
  StartServer(options);
  Client client(server_->port());
  const Clock::time_point start = Clock::now();
  client.SendRaw("GET /api/dataValueSets HTTP/1.1\r\n");
  bool closed = false;
  // A byte every 100 ms would keep an idle timer alive forever; the head's deadline does not move.
  for (int i = 0; i < 30 && !closed; ++i) {
    beast::error_code error;
    net::write(client.socket(), net::buffer("X", 1), error);
    closed = client.ReadUntilClosed(milliseconds(100)).second || error;
  }
  EXPECT_TRUE(closed);
  EXPECT_GE(Clock::now() - start, milliseconds(450));
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
  EXPECT_TRUE(WaitFor([&] { return server_->connections() == 0; }, seconds(1)));
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(300);
  StartServer(options);
  Client client(server_->port());
  client.Send(bhttp::verb::get, "/api/dataValueSets");
  EXPECT_EQ(client.Read().status, 401);
  const Clock::time_point answered = Clock::now();
  EXPECT_TRUE(client.ReadUntilClosed(seconds(3)).second);
  EXPECT_GE(Clock::now() - answered, milliseconds(250));
  EXPECT_LT(Clock::now() - answered, milliseconds(1500));
}

TEST_F(HttpServerTest, OversizedHeadIs431AndLongTargetIs414ThenClosed) {
  HttpServerOptions options;
  options.max_header_bytes = 8 * 1024;
  options.max_url_bytes = 2 * 1024;
  StartServer(options);
  {
    Client client(server_->port());
    client.Send(bhttp::verb::get, SmallTarget(), {{"X-Filler", std::string(10 * 1024, 'a')}});
    const Response response = client.Read();
    EXPECT_EQ(response.status, 431);
    EXPECT_EQ(response.Header("Connection"), "close");
    EXPECT_TRUE(client.ReadUntilClosed(seconds(2)).second);
  }
  for (const size_t length : {4 * 1024, 16 * 1024}) {
    // Within the head's limit, and beyond it (the request line itself is too long).
    Client client(server_->port());
    client.Send(bhttp::verb::get, absl::StrCat(SmallTarget(), "&x=", std::string(length, 'b')));
    const Response response = client.Read();
    EXPECT_EQ(response.status, 414) << length;
    EXPECT_TRUE(client.ReadUntilClosed(seconds(2)).second) << length;
  }
  EXPECT_TRUE(WaitFor([&] { return server_->connections() == 0; }, seconds(2)));
}

TEST_F(HttpServerTest, MalformedRequestIs400AndLargeBodyIs413ThenClosed) {
  StartServer();
  {
    Client client(server_->port());
    client.SendRaw("GARBAGE\r\n\r\n");
    const Response response = client.Read();
    EXPECT_EQ(response.status, 400);
    EXPECT_EQ(ParseJson(response.body).value("httpStatusCode", 0), 400);
    EXPECT_TRUE(client.ReadUntilClosed(seconds(2)).second);
  }
  {
    Client client(server_->port());
    client.SendRaw(absl::StrCat("GET ", SmallTarget(),
                                " HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n",
                                std::string(100000, 'c')));
    EXPECT_EQ(client.Read().status, 413);
    EXPECT_TRUE(client.ReadUntilClosed(seconds(2)).second);
  }
  {
    // A small body is read and ignored.
    Client client(server_->port());
    client.SendRaw(
        absl::StrCat("GET /api/dataValueSets HTTP/1.1\r\nHost: x\r\n"
                     "Content-Length: 5\r\n\r\nhello"));
    EXPECT_EQ(client.Read().status, 401);
  }
}

TEST_F(HttpServerTest, ConnectionsBeyondTheLimitsAreClosedAtOnce) {
  HttpServerOptions options;
  options.max_connections_per_peer = 3;
  options.max_connections = 4;
  StartServer(options);
  // Each connection is answered once, so that it waits idle between requests rather than for a
  // head (of which fewer than the connections may wait: SlowHeadsFromManyAddresses...).
  const auto answered_once = [](Client& client) {
    client.Send(bhttp::verb::get, "/api/dataValueSets");
    EXPECT_EQ(client.Read().status, 401);
  };
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<Client>(server_->port()));
    answered_once(*clients.back());
  }
  ASSERT_TRUE(WaitFor([&] { return server_->connections() == 3; }, seconds(2)));
  // A fourth from the same address: beyond max_connections_per_peer.
  Client beyond_peer(server_->port());
  EXPECT_TRUE(beyond_peer.ReadUntilClosed(seconds(2)).second);
  EXPECT_EQ(server_->connections(), 3);
  // Another address is admitted, once: then max_connections is reached.
  auto other = std::make_unique<Client>(server_->port(), 0, "127.0.0.2");
  answered_once(*other);
  ASSERT_TRUE(WaitFor([&] { return server_->connections() == 4; }, seconds(2)));
  Client beyond_total(server_->port(), 0, "127.0.0.3");
  EXPECT_TRUE(beyond_total.ReadUntilClosed(seconds(2)).second);
  EXPECT_EQ(server_->connections(), 4);
  // The admitted ones are served.
  for (Client* client : {clients[0].get(), other.get()}) {
    client->Send(bhttp::verb::get, "/api/dataValueSets");
    EXPECT_EQ(client->Read().status, 401);
  }
  // One closes: a new one is admitted.
  clients[1]->Close();
  ASSERT_TRUE(WaitFor([&] { return server_->connections() == 3; }, seconds(2)));
  Client next(server_->port());
  next.Send(bhttp::verb::get, "/api/dataValueSets");
  EXPECT_EQ(next.Read().status, 401);
}

// HTTPS with a client certificate that --client_identities maps to the demo's admin: the export
// needs no token, and its bytes are ExportFile's.
TEST_F(HttpServerTest, HttpsWithAMappedClientCertificate) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "http_server_test_tls_", getpid());
  reliability::MakeTestCertificates(dir);
  absl::StatusOr<auth::ClientIdentities> identities =
      auth::ClientIdentities::Parse("CN=dvexport-test-client admin\n", "test");
  ASSERT_TRUE(identities.ok()) << identities.status();
  pipeline::PipelineOptions pipeline_options = Options();
  pipeline_options.client_identities = &*identities;
  StartPipeline(pipeline_options);
  HttpServerOptions options;
  options.tls_cert_file = dir + "/server.pem";
  options.tls_key_file = dir + "/server.key";
  options.tls_client_ca_file = dir + "/ca.pem";
  StartServer(options);

  const std::string target = SmallTarget();
  // Members end in reverse order: the stream (and its timers) before the io_context it runs on.
  struct TlsClient {
    std::unique_ptr<net::ssl::context> context;
    std::unique_ptr<net::io_context> io;
    std::unique_ptr<beast::ssl_stream<tcp::socket>> stream;
  };
  auto connect = [&](bool with_certificate, beast::error_code* error) {
    auto context = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
    context->load_verify_file(dir + "/ca.pem");
    context->set_verify_mode(net::ssl::verify_peer);
    if (with_certificate) {
      context->use_certificate_chain_file(dir + "/client.pem");
      context->use_private_key_file(dir + "/client.key", net::ssl::context::pem);
    }
    auto io = std::make_unique<net::io_context>();
    auto stream = std::make_unique<beast::ssl_stream<tcp::socket>>(*io, *context);
    beast::get_lowest_layer(*stream).connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), server_->port()), *error);
    if (!*error) stream->handshake(net::ssl::stream_base::client, *error);
    // A failed verification may show only at the first read (TLS 1.3).
    if (!*error) {
      bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target, 11};
      request.set(bhttp::field::host, "127.0.0.1");
      bhttp::write(*stream, request, *error);
    }
    return TlsClient{std::move(context), std::move(io), std::move(stream)};
  };

  beast::error_code error;
  auto [context, io, stream] = connect(true, &error);
  ASSERT_FALSE(error) << error.message();
  const std::string expected = GrpcExportFile(target);
  beast::flat_buffer buffer;
  for (int i = 0; i < 2; ++i) {
    if (i > 0) {
      bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target, 11};
      request.set(bhttp::field::host, "127.0.0.1");
      bhttp::write(*stream, request, error);
      ASSERT_FALSE(error) << error.message();
    }
    bhttp::response<bhttp::string_body> response;
    bhttp::read(*stream, buffer, response, error);
    ASSERT_FALSE(error) << error.message();
    EXPECT_EQ(response.result_int(), 200) << response.body();
    EXPECT_TRUE(response.body() == expected);
  }

  // Without a certificate there is no connection.
  beast::error_code refused;
  auto [context2, io2, stream2] = connect(false, &refused);
  if (!refused) {
    bhttp::response<bhttp::string_body> response;
    bhttp::read(*stream2, buffer, response, refused);
  }
  EXPECT_TRUE(refused);
}

TEST_F(HttpServerTest, ShutdownCancelsExportsRunningAtTheDeadlineAndClosesEverything) {
  StartServer();
  std::unique_ptr<Client> stalled = StalledClient(server_->port(), WholeDatabaseTarget());
  bhttp::response_parser<bhttp::string_body> parser;
  ASSERT_EQ(stalled->ReadHeader(&parser).status, 200);
  Client idle(server_->port());
  ASSERT_TRUE(WaitFor([&] { return server_->connections() == 2; }, seconds(2)));
  const Clock::time_point start = Clock::now();
  server_->Shutdown(std::chrono::system_clock::now() + milliseconds(500));
  EXPECT_GE(Clock::now() - start, milliseconds(450));
  EXPECT_LT(Clock::now() - start, seconds(3));
  EXPECT_EQ(server_->connections(), 0);
  EXPECT_EQ(pipeline_->active_exports(), 0);
  EXPECT_TRUE(idle.ReadUntilClosed(seconds(1)).second);
  const beast::error_code error = stalled->ReadBody(&parser);
  EXPECT_TRUE(error) << "the stalled export looks complete";
  EXPECT_FALSE(parser.is_done());
  // Nobody is accepted any more.
  EXPECT_TRUE(Refused(server_->port()));
}

TEST_F(HttpServerTest, ShutdownLetsRunningExportsFinishBeforeTheDeadline) {
  StartServer();
  const std::string target = WholeDatabaseTarget(".json");
  Client client(server_->port());
  client.Send(bhttp::verb::get, target, {{"Authorization", kAdminToken}});
  ASSERT_TRUE(WaitFor([&] { return pipeline_->active_exports() == 1; }, seconds(10)));
  std::thread shutdown([&] { server_->Shutdown(std::chrono::system_clock::now() + seconds(30)); });
  const Response response = client.Read();
  shutdown.join();
  EXPECT_FALSE(response.error) << response.error.message();
  EXPECT_TRUE(response.body == GrpcExportFile(target));
  EXPECT_EQ(response.Header("Connection"), "");
  EXPECT_TRUE(client.ReadUntilClosed(seconds(1)).second);
}

// Sends "bytes" on a new connection and reads until the server closes it: the responses' status
// codes in order, and whether it closed within "timeout".
std::pair<std::vector<int>, bool> StatusesUntilClosed(int port, std::string_view bytes,
                                                      milliseconds timeout = seconds(5)) {
  Client client(port);
  client.SendRaw(bytes);
  const auto [received, closed] = client.ReadUntilClosed(timeout);
  std::vector<int> statuses;
  for (size_t at = received.find("HTTP/1.1 "); at != std::string::npos;
       at = received.find("HTTP/1.1 ", at + 1)) {
    // A status line ("HTTP/1.1 400 "), not the words of a message.
    const std::string code = received.substr(at + 9, 4);
    if (code.size() == 4 && absl::ascii_isdigit(code[0]) && absl::ascii_isdigit(code[1]) &&
        absl::ascii_isdigit(code[2]) && code[3] == ' ') {
      statuses.push_back(std::stoi(code.substr(0, 3)));
    }
  }
  return {statuses, closed};
}

TEST_F(HttpServerTest, AnExceptionInAConnectionEndsThatConnectionAlone) {
  HttpServerOptions options;
  options.on_request_for_testing = [](std::string_view target) {
    if (target.find("throw") != std::string_view::npos) {
      throw std::length_error("field value too large");
    }
  };
  StartServer(options);
  Client failing(server_->port());
  failing.Send(bhttp::verb::get, "/api/dataValueSets?throw=1");
  const Response failed = failing.Read();
  EXPECT_EQ(failed.status, 500);
  EXPECT_EQ(failed.Header("Connection"), "close");
  EXPECT_TRUE(failing.ReadUntilClosed(seconds(2)).second);
  EXPECT_EQ(server_->connection_failures(), 1);
  // The server serves on: other connections, and new ones.
  Client next(server_->port());
  next.Send(bhttp::verb::get, SmallTarget(), {{"Authorization", kAdminToken}});
  const Response served = next.Read();
  EXPECT_EQ(served.status, 200);
  EXPECT_FALSE(served.error) << served.error.message();
}

TEST_F(HttpServerTest, TrailersAreBoundedWithTheHeadThenRefusedAndClosed) {
  StartServer();
  // Issue 32's request: a trailer field of 64 KiB made Beast throw and ended the process.
  const std::string attack =
      absl::StrCat("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: ",
                   std::string(65536, 'a'), "\r\n\r\n");
  auto [statuses, closed] = StatusesUntilClosed(server_->port(), attack);
  EXPECT_EQ(statuses, std::vector<int>{400});
  EXPECT_TRUE(closed);
  // Head and trailer share one budget; and a count of fields.
  const std::string head_and_trailer = absl::StrCat(
      "GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\nX-Head: ", std::string(20 * 1024, 'h'),
      "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Trailer: ", std::string(20 * 1024, 't'),
      "\r\n\r\n");
  std::tie(statuses, closed) = StatusesUntilClosed(server_->port(), head_and_trailer);
  EXPECT_EQ(statuses, std::vector<int>{400});
  EXPECT_TRUE(closed);
  std::string many_trailers =
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  for (int i = 0; i < 150; ++i) absl::StrAppend(&many_trailers, "T", i, ": v\r\n");
  many_trailers += "\r\n";
  std::tie(statuses, closed) = StatusesUntilClosed(server_->port(), many_trailers);
  EXPECT_EQ(statuses, std::vector<int>{400});
  EXPECT_TRUE(closed);
  // A small trailer is read and dropped; the connection goes on.
  Client client(server_->port());
  client.SendRaw(
      "GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\nX-Checksum: 1\r\n\r\n");
  EXPECT_EQ(client.Read().status, 401);
  client.Send(bhttp::verb::get, "/api/dataValueSets");
  EXPECT_EQ(client.Read().status, 401);
  EXPECT_EQ(server_->connection_failures(), 0);
}

TEST_F(HttpServerTest, HeaderFieldsAtTheLargestLimitNeverReachBeastsFieldLimit) {
  HttpServerOptions options;
  options.max_header_bytes = kMaxHeaderBytesLimit;
  options.max_url_bytes = 16 * 1024;
  StartServer(options);
  // (Beast's own request would throw on such a field: the bytes go raw.)
  Client client(server_->port());
  client.SendRaw(absl::StrCat("GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\nX-Filler: ",
                              std::string(65536, 'a'), "\r\n\r\n"));
  const Response response = client.Read();
  EXPECT_EQ(response.status, 431);
  EXPECT_TRUE(client.ReadUntilClosed(seconds(2)).second);
  std::string many = "GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 101; ++i) absl::StrAppend(&many, "X-", i, ": v\r\n");
  many += "\r\n";
  auto [statuses, closed] = StatusesUntilClosed(server_->port(), many);
  EXPECT_EQ(statuses, std::vector<int>{431});
  EXPECT_TRUE(closed);
  HttpServerOptions beyond;
  beyond.listen = "127.0.0.1:0";
  beyond.max_header_bytes = kMaxHeaderBytesLimit + 1;
  EXPECT_EQ(HttpServer::Start(beyond, pipeline_.get()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(server_->connection_failures(), 0);
}

TEST_F(HttpServerTest, TransferEncodingThatIsNotFinallyChunkedIs400AndNothingMoreIsRead) {
  StartServer();
  // The body is a complete second request: read as one, it would be a smuggled request.
  const std::string smuggled = "GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\n\r\n";
  for (const std::string coding : {"gzip", "identity", "chunked, identity", "xchunked",
                                   "chunked\r\nTransfer-Encoding: gzip"}) {
    for (const bool with_length : {false, true}) {
      const std::string request = absl::StrCat(
          "GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: ", coding, "\r\n",
          with_length ? absl::StrCat("Content-Length: ", smuggled.size(), "\r\n") : "", "\r\n",
          smuggled);
      auto [statuses, closed] = StatusesUntilClosed(server_->port(), request);
      EXPECT_EQ(statuses, std::vector<int>{400}) << coding << " " << with_length;
      EXPECT_TRUE(closed) << coding;
    }
  }
  // Another coding before chunked: 501, a coding the server does not understand.
  auto [statuses, closed] = StatusesUntilClosed(
      server_->port(),
      "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(statuses, std::vector<int>{501});
  EXPECT_TRUE(closed);
  // HTTP/1.0 has no transfer codings.
  Client old(server_->port());
  old.SendRaw("GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(old.Read().status, 400);
}

TEST_F(HttpServerTest, ChunkExtensionsAreBounded) {
  StartServer();
  auto [statuses, closed] = StatusesUntilClosed(
      server_->port(),
      absl::StrCat("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;e=",
                   std::string(9 * 1024, 'e'), "\r\nx\r\n0\r\n\r\n"));
  EXPECT_EQ(statuses, std::vector<int>{400});
  EXPECT_TRUE(closed);
  // Many small ones add up; a line longer than the read buffer never needs to end.
  std::string request = "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 100; ++i)
    absl::StrAppend(&request, "1;e=", std::string(100, 'e'), "\r\nx\r\n");
  std::tie(statuses, closed) = StatusesUntilClosed(server_->port(), request);
  EXPECT_EQ(statuses, std::vector<int>{400});
  EXPECT_TRUE(closed);
  // One chunk line that never ends: refused once the read buffer is full, long before the
  // header timeout.
  Client endless(server_->port());
  endless.SendRaw("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;e=");
  beast::error_code error;
  const std::string part(64 * 1024, 'e');
  for (int i = 0; i < 16 && !error; ++i) net::write(endless.socket(), net::buffer(part), error);
  const auto [received, endless_closed] = endless.ReadUntilClosed(seconds(5));
  EXPECT_TRUE(absl::StartsWith(received, "HTTP/1.1 400 ")) << received.substr(0, 100);
  EXPECT_TRUE(endless_closed);
}

TEST_F(HttpServerTest, Http11NeedsOneValidHost) {
  StartServer();
  for (const std::string hosts :
       {"", "Host: a\r\nHost: b\r\n", "Host: user@a\r\n", "Host: a b\r\n", "Host: a:port\r\n"}) {
    auto [statuses, closed] = StatusesUntilClosed(
        server_->port(), absl::StrCat("GET /api/dataValueSets HTTP/1.1\r\n", hosts, "\r\n"));
    EXPECT_EQ(statuses, std::vector<int>{400}) << hosts;
    EXPECT_TRUE(closed) << hosts;
  }
  // Valid forms, and HTTP/1.0 without one: authentication comes next.
  for (const std::string request :
       {"GET /api/dataValueSets HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
        "GET /api/dataValueSets HTTP/1.1\r\nHost: dhis2.example.org\r\n\r\n",
        "GET /api/dataValueSets HTTP/1.1\r\nHost:\r\n\r\n",
        "GET /api/dataValueSets HTTP/1.0\r\n\r\n"}) {
    Client client(server_->port());
    client.SendRaw(request);
    EXPECT_EQ(client.Read().status, 401) << request;
  }
}

TEST_F(HttpServerTest, AbsoluteFormTargetIsServedAsItsPathAndQuery) {
  StartServer();
  const std::string target = SmallTarget();
  Client client(server_->port());
  client.Send(bhttp::verb::get, absl::StrCat("http://dvexport.example:8080", target),
              {{"Authorization", kAdminToken}});
  const Response response = client.Read();
  EXPECT_EQ(response.status, 200);
  EXPECT_TRUE(response.body == GrpcExportFile(target));
  auto [statuses, closed] = StatusesUntilClosed(
      server_->port(), "GET ftp://a/api/dataValueSets HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(statuses, std::vector<int>{400});
  EXPECT_TRUE(closed);
}

TEST_F(HttpServerTest, WithoutValidCredentialsEveryRefusalIs401) {
  StartServer();
  struct Case {
    bhttp::verb method;
    std::string target;
    int with_credentials;
  };
  const Case cases[] = {
      {bhttp::verb::get, "/api/dataValueSets?children=maybe", 400},
      {bhttp::verb::get, "/api/dataValueSets.pdf", 406},
      {bhttp::verb::get, "/api/dataElements", 404},
      {bhttp::verb::post, "/api/dataValueSets", 405},
  };
  Client client(server_->port());
  for (const Case& c : cases) {
    client.Send(c.method, c.target);
    const Response anonymous = client.Read();
    EXPECT_EQ(anonymous.status, 401) << c.target;
    EXPECT_EQ(ParseJson(anonymous.body).value("httpStatusCode", 0), 401) << c.target;
    client.Send(c.method, c.target, {{"Authorization", kExpiredToken}});
    EXPECT_EQ(client.Read().status, 401) << c.target;
    client.Send(c.method, c.target, {{"Authorization", kAdminToken}});
    const Response known = client.Read();
    EXPECT_EQ(known.status, c.with_credentials) << c.target;
    EXPECT_EQ(ParseJson(known.body).value("httpStatusCode", 0), c.with_credentials);
  }
}

TEST_F(HttpServerTest, SlowHeadsFromManyAddressesNeverTakeEverySlot) {
  HttpServerOptions options;
  options.max_connections = 40;
  options.max_pending_heads = 20;
  options.header_timeout = seconds(60);  // only the budget can free a slot within the test
  StartServer(options);
  // 100 slow heads from 50 addresses: each sends a part of its head and waits.
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 100; ++i) {
    const std::string source = absl::StrCat("127.0.", 10 + i % 50, ".", 1 + i / 50);
    slow.push_back(std::make_unique<Client>(server_->port(), 0, source.c_str()));
    // (A connection the server already closed may refuse the bytes.)
    beast::error_code ignored;
    net::write(slow.back()->socket(), net::buffer("GET /api/dataValueSets HTTP/1.1\r\n", 33),
               ignored);
  }
  ASSERT_TRUE(WaitFor([&] { return server_->evicted_heads() >= 40; }, seconds(10)))
      << server_->evicted_heads();
  EXPECT_LE(server_->pending_heads(), 20);
  // A complete request finds a slot at once, from anywhere.
  for (const char* source : {"127.0.10.1", "127.0.200.1"}) {
    const Clock::time_point start = Clock::now();
    Client client(server_->port(), 0, source);
    client.Send(bhttp::verb::get, "/api/dataValueSets");
    EXPECT_EQ(client.Read().status, 401) << source;
    EXPECT_LT(Clock::now() - start, seconds(10));
  }
  EXPECT_LE(server_->connections(), 40);
}

// On the demo in DHIS2 2.43's schema (DVEXPORT_TEST_PG_243, scripts/test) the door answers as
// 2.43 once the pool has read the database's version: /api/43 is a route and /api/44 is not,
// Accept no longer picks the format, a plain export names its file, a bad compression is 400.
TEST_F(HttpServerTest, OnA243DatabaseTheDoorAnswersAs243) {
  const char* conninfo = std::getenv("DVEXPORT_TEST_PG_243");
  if (conninfo == nullptr) GTEST_SKIP() << "DVEXPORT_TEST_PG_243 is not set (scripts/test sets it)";
  pool_ = std::make_unique<db::ConnectionPool>(
      absl::StrCat(conninfo, " application_name=", ApplicationName()), 8);
  log_ = std::make_unique<pipeline::CallLog>(nullptr, nullptr);
  pipeline_ = std::make_unique<pipeline::ExportPipeline>(pool_.get(), Options(), log_.get());
  StartServer();
  const auto get = [&](const std::string& target, const Headers& headers) {
    Client client(server_->port());
    Headers with_token = headers;
    with_token.emplace_back("Authorization", kAdminToken);
    client.Send(bhttp::verb::get, target, with_token);
    return client.Read();
  };
  // The first call makes the pool's first connection, which reads the version (before it, the
  // door answers as 2.42).
  get("/api/dataValueSets?dataSet=x", {});
  ASSERT_EQ(pipeline::ServedDhis2Version(pipeline_.get()), 43);

  EXPECT_EQ(get("/api/44/dataValueSets?dataSet=x", {}).status, 404);
  const Response bad = get(absl::StrCat("/api/43/", SmallTarget().substr(5), "&compression=gz"),
                           {{"Accept", "application/xml"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Header("Content-Type"), "application/xml;charset=UTF-8");
  EXPECT_TRUE(absl::StrContains(bad.body, "Valid values are: [NONE, GZIP, ZIP]")) << bad.body;

  const Response response =
      get(absl::StrCat("/api/43/", SmallTarget().substr(5)), {{"Accept", "application/xml"}});
  EXPECT_EQ(response.status, 200) << response.body.substr(0, 500);
  EXPECT_EQ(response.Header("Content-Type"), "application/json;charset=UTF-8");
  EXPECT_EQ(response.Header("Content-Disposition"),
            R"(attachment; filename="dataValues_1900-01-01_2100-12-31.json")");
  EXPECT_EQ(response.Header("Content-Transfer-Encoding"), "binary");
}

}  // namespace
}  // namespace dvexport::http
