// TLS and mutual TLS with certificates openssl makes at test time: a CA, a
// server certificate for 127.0.0.1 and localhost (subjectAltName), a client
// certificate. The client side is client::CreateChannel(target, ChannelOptions).

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/export_client.h"
#include "service/server/export_server.h"
#include "tests/reliability/reliability_support.h"

namespace dvexport::reliability {
namespace {

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "dvexport-tls-", getpid()));
    MakeTestCertificates(*dir_);
  }

  static void TearDownTestSuite() {
    std::system(("rm -rf " + *dir_).c_str());
    delete dir_;
  }

  static std::string File(const std::string& name) { return *dir_ + "/" + name; }

  // TLS trusting "ca", without a client certificate.
  static client::ChannelOptions TrustOnly(const std::string& ca) {
    client::ChannelOptions options;
    options.tls_ca_file = File(ca);
    return options;
  }

  void StartServer(bool mutual) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = PrivatePostgres::reader_conninfo();
    options.tls_cert_file = File("server.pem");
    options.tls_key_file = File("server.key");
    if (mutual) options.tls_client_ca_file = File("ca.pem");
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
  }

  std::shared_ptr<grpc::Channel> Channel(const client::ChannelOptions& options) {
    auto channel = client::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()), options);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return *channel;
  }

  static ExportOutcome SmallExport(const std::shared_ptr<grpc::Channel>& channel) {
    auto stub = v1::DataValueExport::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return ReadExport(stub.get(), &context, SmallRequest());
  }

  static std::string* dir_;
  std::unique_ptr<server::ExportServer> server_;
};

std::string* TlsTest::dir_ = nullptr;

TEST_F(TlsTest, ExportOverTlsWorks) {
  StartServer(false);
  ExportOutcome outcome = SmallExport(Channel(TrustOnly("ca.pem")));
  EXPECT_TRUE(CompleteAndConsistent(outcome)) << outcome.status.error_message();
}

TEST_F(TlsTest, PlaintextClientIsRefusedByTlsServer) {
  StartServer(false);
  ExportOutcome outcome = SmallExport(PlaintextChannel(server_->port()));
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(outcome.chunks, 0);
}

TEST_F(TlsTest, ClientThatDoesNotTrustTheServerCaIsRefused) {
  StartServer(false);
  // The server's own certificate is no CA: verification fails.
  ExportOutcome outcome = SmallExport(Channel(TrustOnly("client.pem")));
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRefusesClientWithoutCertificate) {
  StartServer(true);
  ExportOutcome outcome = SmallExport(Channel(TrustOnly("ca.pem")));
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(outcome.chunks, 0);
}

TEST_F(TlsTest, MutualTlsAcceptsClientCertificate) {
  StartServer(true);
  ExportOutcome outcome = SmallExport(Channel({.tls_ca_file = File("ca.pem"),
                                               .tls_cert_file = File("client.pem"),
                                               .tls_key_file = File("client.key")}));
  EXPECT_TRUE(CompleteAndConsistent(outcome)) << outcome.status.error_message();
}

TEST_F(TlsTest, TlsFlagsAreValidated) {
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.tls_cert_file = File("server.pem");
  EXPECT_EQ(server::ExportServer::Start(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.tls_key_file = File("missing.key");
  EXPECT_EQ(server::ExportServer::Start(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dvexport::reliability
