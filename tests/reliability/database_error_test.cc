// PostgreSQL errors provoked for real on the private instance, each reaching the client as the
// gRPC code of db::MapSqlState (service/db/database_error.h) with dvexport's words for the
// cause, never the database's message, host, port or user.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "service/server/export_server.h"
#include "tests/reliability/reliability_support.h"

namespace dvexport::reliability {
namespace {

using std::chrono::seconds;

class DatabaseErrorTest : public ::testing::Test {
 protected:
  // A role of its own, so that the reader role the other tests use keeps its privileges.
  static void SetUpTestSuite() {
    AdminQuery(
        "DO $$BEGIN"
        "  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dvexport_no_datavalue') THEN"
        "    CREATE ROLE dvexport_no_datavalue LOGIN;"
        "  END IF;"
        "  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dvexport_no_connection') THEN"
        "    CREATE ROLE dvexport_no_connection LOGIN CONNECTION LIMIT 0;"
        "  END IF;"
        "END$$");
    AdminQuery(
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO dvexport_no_datavalue, "
        "dvexport_no_connection");
    AdminQuery("REVOKE SELECT ON datavalue FROM dvexport_no_datavalue");
  }

  void StartServer(const std::string& user) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    // A later keyword wins in a conninfo.
    options.conninfo = absl::StrCat(PrivatePostgres::reader_conninfo(), " user=", user);
    options.health_probe_interval = std::chrono::milliseconds(200);
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    stub_ = v1::DataValueExport::NewStub(PlaintextChannel(server_->port()));
  }

  grpc::Status Export() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    return ReadExport(stub_.get(), &context, SmallRequest()).status;
  }

  grpc::Status Count() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    v1::CountResponse response;
    return stub_->CountDataValues(&context, SmallRequest().query(), &response);
  }

  static void ExpectNoDatabaseDetails(const grpc::Status& status, const std::string& user) {
    const std::string& message = status.error_message();
    EXPECT_EQ(message.find(user), std::string::npos) << message;
    EXPECT_EQ(message.find("127.0.0.1"), std::string::npos) << message;
    EXPECT_EQ(message.find(std::to_string(PrivatePostgres::port())), std::string::npos) << message;
    EXPECT_EQ(message.find("datavalue"), std::string::npos) << message;
  }

  std::unique_ptr<server::ExportServer> server_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

// 42501: the role may read every table but datavalue.
TEST_F(DatabaseErrorTest, MissingPrivilegeIsPermissionDenied) {
  StartServer("dvexport_no_datavalue");
  for (const grpc::Status& status : {Export(), Count()}) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
    EXPECT_NE(status.error_message().find("SQLSTATE 42501"), std::string::npos)
        << status.error_message();
    EXPECT_EQ(status.error_message().find("permission denied for"), std::string::npos)
        << status.error_message();
    ExpectNoDatabaseDetails(status, "dvexport_no_datavalue");
  }
}

// 53300: the role's CONNECTION LIMIT is 0, as when every connection it may have is taken.
TEST_F(DatabaseErrorTest, NoConnectionLeftIsResourceExhausted) {
  StartServer("dvexport_no_connection");
  for (const grpc::Status& status : {Export(), Count()}) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
    EXPECT_NE(status.error_message().find("53300"), std::string::npos) << status.error_message();
    ExpectNoDatabaseDetails(status, "dvexport_no_connection");
  }
}

// 57P01: pg_terminate_backend while the export's COPY waits behind a lock.
TEST_F(DatabaseErrorTest, TerminatedBackendIsUnavailable) {
  StartServer("dvexport_reader");
  DataValueLock lock;
  grpc::Status status;
  std::jthread client([&] { status = Export(); });
  ASSERT_TRUE(WaitFor([] { return ActiveCopies() == 1; }, seconds(30)));
  AdminQuery(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'dvexport_reader' "
      "AND query LIKE 'COPY%'");
  client.join();
  lock.Release();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  ExpectNoDatabaseDetails(status, "dvexport_reader");
  EXPECT_EQ(Export().error_code(), grpc::StatusCode::OK);
}

}  // namespace
}  // namespace dvexport::reliability
