// dvexport on every DHIS2 in support, against the small demo loaded in each version's schema
// with its Flyway history (deploy/demo/load.sh small <version>; scripts/test names the databases
// DVEXPORT_TEST_PG_240, _241, _243, and the refused _239 and _244; DVEXPORT_TEST_PG is 2.42).
// Covers: the version each database shows and what is served (flyway, the schema, the flags);
// 2.39 and 2.44 refused clearly, as FAILED_PRECONDITION on every call that reaches the database
// and NOT_SERVING, never INTERNAL; 2.44 served as 2.43 when the operator says so; and every
// export of the demo users (their access decisions included) on 2.40, 2.41 and 2.43 (pinned to
// 2.42's answer) the same as on 2.42, byte for byte (2.43: less the values of its new period
// types, which only it has).

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/db/connection_pool.h"
#include "service/server/export_server.h"

namespace dvexport::testing {
namespace {

using std::chrono::seconds;

// The conninfo of the demo in DHIS2 2.<minor>'s schema.
std::string Conninfo(int minor) {
  const std::string name =
      minor == 42 ? "DVEXPORT_TEST_PG" : absl::StrCat("DVEXPORT_TEST_PG_2", minor);
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) {
    ADD_FAILURE() << name << " is not set (scripts/test sets it)";
    return "";
  }
  return value;
}

// What a new connection of a pool over DHIS2 2.<minor>'s database decides, under "policy".
struct Outcome {
  absl::Status acquire;
  std::optional<dhis2::Dhis2Version> version;
  std::string category_option_table;
};

Outcome Connect(int minor, const dhis2::VersionPolicy& policy = {}) {
  db::ConnectionPool pool(Conninfo(minor), 2, policy);
  absl::StatusOr<db::PooledConnection> conn = pool.Acquire(std::chrono::milliseconds(10000));
  Outcome outcome{conn.status(), pool.dhis2_version(), ""};
  if (conn.ok()) outcome.category_option_table = (*conn)->dhis2_schema().category_option_table;
  return outcome;
}

TEST(Dhis2VersionsTest, EachSupportedDatabaseIsServedAsItsOwnVersion) {
  const std::map<int, std::string> highest = {
      {40, "2.40.33"}, {41, "2.41.59"}, {42, "2.42.52"}, {43, "2.43.64"}};
  for (const auto& [minor, migration] : highest) {
    SCOPED_TRACE(minor);
    const Outcome outcome = Connect(minor);
    ASSERT_TRUE(outcome.acquire.ok()) << outcome.acquire;
    ASSERT_TRUE(outcome.version.has_value());
    EXPECT_EQ(outcome.version->found, minor);
    EXPECT_EQ(outcome.version->served, minor);
    EXPECT_EQ(outcome.version->source, dhis2::VersionSource::kFlyway);
    // The baseline row ("1") and the failed row of a later version do not count.
    EXPECT_EQ(outcome.version->evidence, absl::StrCat("flyway_schema_history ", migration));
    EXPECT_TRUE(outcome.version->warning.empty()) << outcome.version->warning;
    EXPECT_EQ(outcome.category_option_table,
              minor == 40 ? "dataelementcategoryoption" : "categoryoption");
  }
}

TEST(Dhis2VersionsTest, UnsupportedVersionsAreRefusedNamingWhatWasFound) {
  const Outcome old = Connect(39);
  EXPECT_EQ(old.acquire.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(old.acquire.message(),
            "the database is DHIS2 2.39 (flyway_schema_history 2.39.31); dvexport serves DHIS2 "
            "2.40 to 2.43");
  ASSERT_TRUE(old.version.has_value());
  EXPECT_EQ(old.version->served, 0);

  const Outcome newer = Connect(44);
  EXPECT_EQ(newer.acquire.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(newer.acquire.message(),
            "the database is DHIS2 2.44 (flyway_schema_history 2.44.21), newer than dvexport "
            "knows; dvexport serves DHIS2 2.40 to 2.43. --serve_newer_dhis2 serves it as 2.43 at "
            "the operator's risk");

  // The operator's word: 2.44 as 2.43, with a warning; any database as --dhis2_version says.
  const Outcome served_newer = Connect(44, {.forced = std::nullopt, .serve_newer = true});
  ASSERT_TRUE(served_newer.acquire.ok()) << served_newer.acquire;
  EXPECT_EQ(served_newer.version->served, 43);
  EXPECT_EQ(served_newer.version->warning,
            "DHIS2 2.44 (flyway_schema_history 2.44.21) is newer than dvexport knows; served as "
            "2.43 (--serve_newer_dhis2)");
  const Outcome forced = Connect(41, {.forced = 42, .serve_newer = false});
  ASSERT_TRUE(forced.acquire.ok()) << forced.acquire;
  EXPECT_EQ(forced.version->served, 42);
  EXPECT_EQ(forced.version->source, dhis2::VersionSource::kFlag);
  EXPECT_NE(forced.version->warning.find("the database shows DHIS2 2.41"), std::string::npos)
      << forced.version->warning;
}

// A real server over one version's database, called as the demo users.
class Dhis2VersionServer {
 public:
  explicit Dhis2VersionServer(int minor, dhis2::VersionPolicy policy = {}) {
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.http.listen = "127.0.0.1:0";
    options.conninfo = Conninfo(minor);
    options.dhis2 = policy;
    absl::StatusOr<std::unique_ptr<server::ExportServer>> started =
        server::ExportServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    server_ = *std::move(started);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::DataValueExport::NewStub(channel_);
  }

  // The file an export writes, or its status.
  absl::StatusOr<std::string> Export(const v1::ExportFileRequest& request, const std::string& user,
                                     const std::string& password) {
    return ExportAs(request, "Basic " + absl::Base64Escape(absl::StrCat(user, ":", password)));
  }

  // The same with "authorization" as the call's credential.
  absl::StatusOr<std::string> ExportAs(const v1::ExportFileRequest& request,
                                       const std::string& authorization) {
    if (stub_ == nullptr) return absl::InternalError("no server");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    context.AddMetadata("authorization", authorization);
    std::unique_ptr<grpc::ClientReader<v1::FileChunk>> reader =
        stub_->ExportFile(&context, request);
    std::string file;
    v1::FileChunk chunk;
    while (reader->Read(&chunk)) file += chunk.data();
    const grpc::Status status = reader->Finish();
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    return file;
  }

  // GET "target" on the HTTP door (DHIS2's URL) as "user": the status and the body.
  std::pair<int, std::string> HttpGet(const std::string& target, const std::string& user,
                                      const std::string& password) {
    namespace net = boost::asio;
    namespace bhttp = boost::beast::http;
    net::io_context io;
    net::ip::tcp::socket socket(io);
    boost::beast::error_code error;
    socket.connect(
        {net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(server_->http_port())},
        error);
    if (error) return {0, error.message()};
    bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target, 11};
    request.set(bhttp::field::host, "127.0.0.1");
    request.set(bhttp::field::authorization,
                "Basic " + absl::Base64Escape(absl::StrCat(user, ":", password)));
    request.keep_alive(false);
    bhttp::write(socket, request, error);
    boost::beast::flat_buffer buffer;
    bhttp::response<bhttp::string_body> response;
    bhttp::read(socket, buffer, response, error);
    if (error && error != bhttp::error::end_of_stream) return {0, error.message()};
    return {response.result_int(), response.body()};
  }

  // The server's health ("": the whole server), waiting a little for the prober's verdict.
  std::string HealthOnce() {
    auto health = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(10));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = health->Check(&context, request, &response);
    if (!status.ok()) return absl::StrCat("error ", status.error_code());
    return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
  }

  // The server's health once it is "expected", or what it still is after 15 s: the prober's first
  // verdict may come after Start returned (a slow machine, a sanitizer build).
  std::string Health(const std::string& expected) {
    std::string health;
    for (int i = 0; i < 150; ++i) {
      health = HealthOnce();
      if (health == expected) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return health;
  }

 private:
  std::unique_ptr<server::ExportServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

struct DemoUser {
  const char* name;
  const char* password;
};
constexpr DemoUser kUsers[] = {{"admin", "district"},
                               {"district", "district-demo"},
                               {"programme", "programme-demo"},
                               {"partner", "partner-demo"},
                               {"disabled", "disabled-demo"}};

// Requests that touch what differs between the schemas: the category options' sharing (the
// attribute option combos of Partner Support), the data view hierarchy, data set sharing, ADX's
// categories, periods of every type.
std::vector<v1::ExportFileRequest> Requests() {
  std::vector<v1::ExportFileRequest> requests;
  auto add = [&](v1::Format format, const std::vector<std::string>& sets,
                 const std::string& org_unit, bool children) {
    v1::ExportFileRequest request;
    request.set_format(format);
    for (const std::string& set : sets) request.mutable_query()->add_data_set(set);
    request.mutable_query()->add_org_unit(org_unit);
    request.mutable_query()->set_children(children);
    request.mutable_query()->set_start_date("2000-01-01");
    request.mutable_query()->set_end_date("2030-12-31");
    requests.push_back(request);
  };
  add(v1::FORMAT_CSV, {"JurnHCkmDCn", "QfF9ZANatcj"}, "ImspTQPwCqd", true);
  add(v1::FORMAT_CSV, {"QfF9ZANatcj"}, "O6uvpzGd5pu", true);
  add(v1::FORMAT_JSON, {"JurnHCkmDCn"}, "O6uvpzGd5pu", true);
  add(v1::FORMAT_ADX, {"QfF9ZANatcj"}, "ImspTQPwCqd", true);
  v1::ExportFileRequest options = requests.front();
  options.mutable_query()->add_attribute_option_combo("HllvX50cXC0");
  requests.push_back(options);
  return requests;
}

// "csv" without the rows of 2.43's new period types (2024FriW6, 2024Feb, 2024Aug): the rest of
// a 2.43 export is 2.42's.
std::string Without243Periods(const std::string& csv) {
  std::string kept;
  for (absl::string_view line : absl::StrSplit(csv, '\n')) {
    if (line.empty()) continue;
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (fields.size() > 1 &&
        (fields[1] == "2024FriW6" || fields[1] == "2024Feb" || fields[1] == "2024Aug")) {
      continue;
    }
    absl::StrAppend(&kept, line, "\n");
  }
  return kept;
}

TEST(Dhis2VersionsTest, EveryDemoUsersExportIsTheSameOnEachVersion) {
  Dhis2VersionServer reference(42);
  std::map<std::string, std::string> expected;
  const std::vector<v1::ExportFileRequest> requests = Requests();
  for (const DemoUser& user : kUsers) {
    for (size_t i = 0; i < requests.size(); ++i) {
      absl::StatusOr<std::string> file = reference.Export(requests[i], user.name, user.password);
      expected[absl::StrCat(user.name, " ", i)] =
          file.ok() ? *file : absl::StrCat("refused: ", file.status().ToString());
    }
  }
  // The references refuse and accept: not a test that passes on empty files.
  EXPECT_GT(std::count(expected["admin 0"].begin(), expected["admin 0"].end(), '\n'), 1000);
  EXPECT_LT(expected["partner 0"].size(), expected["admin 0"].size());
  EXPECT_EQ(expected["disabled 0"].rfind("refused: UNAUTHENTICATED", 0), 0u);

  for (int minor : {40, 41, 43}) {
    SCOPED_TRACE(minor);
    Dhis2VersionServer server(minor);
    EXPECT_EQ(server.Health("SERVING"), "SERVING");
    for (const DemoUser& user : kUsers) {
      for (size_t i = 0; i < requests.size(); ++i) {
        SCOPED_TRACE(absl::StrCat(user.name, " request ", i));
        // 2.43 answers as 2.43 (its own order, rules and document): the request pins 2.42's,
        // which a sibling service may, and gets 2.42's export of the 2.43 database.
        v1::ExportFileRequest request = requests[i];
        if (minor == 43) request.mutable_query()->set_dhis2_version("2.42");
        absl::StatusOr<std::string> file = server.Export(request, user.name, user.password);
        std::string got = file.ok() ? *file : absl::StrCat("refused: ", file.status().ToString());
        const std::string& want = expected[absl::StrCat(user.name, " ", i)];
        if (minor == 43 && requests[i].format() == v1::FORMAT_CSV && file.ok()) {
          EXPECT_EQ(Without243Periods(got), Without243Periods(want));
        } else if (minor == 43 && requests[i].format() != v1::FORMAT_CSV && file.ok()) {
          // JSON and ADX of 2.43 carry the new periods' values too: at least as long.
          EXPECT_GE(got.size(), want.size());
        } else {
          EXPECT_EQ(got, want);
        }
      }
    }
  }
}

TEST(Dhis2VersionsTest, NewPeriodTypesOf243AreExportedWithTheirIds) {
  Dhis2VersionServer server(43);
  absl::StatusOr<std::string> file = server.Export(Requests().front(), "admin", "district");
  ASSERT_TRUE(file.ok()) << file.status();
  for (const char* period : {",2024FriW6,", ",2024Feb,", ",2024Aug,"}) {
    EXPECT_NE(file->find(period), std::string::npos) << period;
  }
}

// Personal access tokens as each version takes them (docs/DEMO.md lists the demo's): 2.40 knows
// only d2pat_ tokens, checks no checksum (its own tokens carry a CRC-32 of the code alone, which
// 2.41 and later refuse) and says "does not exists." with a full stop.
TEST(Dhis2VersionsTest, TokensAsEachVersionTakesThem) {
  const v1::ExportFileRequest request = Requests().front();
  const std::string token240 = "ApiToken d2pat_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXpp1141566371";
  const std::string token242 = "ApiToken d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb";
  // The same token on 2.40 with another (wrong) checksum: 2.40 looks it up by its key alone.
  const std::string unknown240 = "ApiToken d2pat_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXpp1141566372";
  Dhis2VersionServer v240(40);
  // Token rules follow the version the server read: wait for its first verdict.
  ASSERT_EQ(v240.Health("SERVING"), "SERVING");
  absl::StatusOr<std::string> file = v240.ExportAs(request, token240);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(*file, *v240.Export(request, "admin", "district"));
  file = v240.ExportAs(request, unknown240);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(file.status().message(), "The API token does not exists.");
  for (int minor : {41, 43}) {
    SCOPED_TRACE(minor);
    Dhis2VersionServer server(minor);
    ASSERT_EQ(server.Health("SERVING"), "SERVING");
    file = server.ExportAs(request, token242);
    EXPECT_TRUE(file.ok()) << file.status();
    // A 2.40-made token fails 2.41's checksum before any lookup.
    file = server.ExportAs(request, token240);
    EXPECT_EQ(file.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(file.status().message(), "Checksum validation failed");
  }
}

TEST(Dhis2VersionsTest, RefusedDatabaseFailsEveryCallWithFailedPreconditionAndIsNotServing) {
  for (int minor : {39, 44}) {
    SCOPED_TRACE(minor);
    Dhis2VersionServer server(minor);
    EXPECT_EQ(server.HealthOnce(), "NOT_SERVING");
    absl::StatusOr<std::string> file = server.Export(Requests().front(), "admin", "district");
    EXPECT_EQ(file.status().code(), absl::StatusCode::kFailedPrecondition) << file.status();
    EXPECT_NE(file.status().message().find(absl::StrCat("DHIS2 2.", minor)), std::string::npos)
        << file.status();
    EXPECT_NE(file.status().message().find("dvexport serves DHIS2 2.40 to 2.43"), std::string::npos)
        << file.status();
  }
  // DHIS2's URL over HTTP: the same refusal, as DHIS2's 409 WebMessage.
  Dhis2VersionServer old(39);
  const auto [status, body] =
      old.HttpGet("/api/dataValueSets.json?dataSet=QfF9ZANatcj&orgUnit=ImspTQPwCqd&period=202401",
                  "admin", "district");
  EXPECT_EQ(status, 409) << body;
  EXPECT_NE(body.find("the database is DHIS2 2.39"), std::string::npos) << body;

  Dhis2VersionServer newer(44, {.forced = std::nullopt, .serve_newer = true});
  EXPECT_EQ(newer.Health("SERVING"), "SERVING");
  absl::StatusOr<std::string> file = newer.Export(Requests().front(), "admin", "district");
  EXPECT_TRUE(file.ok()) << file.status();
}

}  // namespace
}  // namespace dvexport::testing
