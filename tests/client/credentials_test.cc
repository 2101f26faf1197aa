// DHIS2 credentials in the client library: the authorization values, token
// files, and what reaches a real gRPC server over a plaintext channel, for
// each method.

#include "client/credentials.h"

#include <fcntl.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/export_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/scripted_export_server.h"
#include "tests/client/test_files.h"

namespace dvexport::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testutil::GoodScript;
using testutil::MakeFileContent;
using testutil::ReceivedAuthorization;

// The demo database's superuser token (V2, d2p_), as DHIS2 writes them.
constexpr char kToken[] = "d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb";

TEST(AuthorizationValueTest, IsApiTokenOrBasicAsDhis2ClientsSendThem) {
  EXPECT_EQ(*AuthorizationValue(CallCredentialsSpec::Token(kToken)),
            absl::StrCat("ApiToken ", kToken));
  // RFC 7617's encoding: base64 of "admin:district".
  EXPECT_EQ(*AuthorizationValue(CallCredentialsSpec::Password("admin", "district")),
            "Basic YWRtaW46ZGlzdHJpY3Q=");
  // A password may hold ':' and anything else; only the username may not.
  EXPECT_EQ(*AuthorizationValue(CallCredentialsSpec::Password("a", "b:c d")), "Basic YTpiOmMgZA==");
}

TEST(AuthorizationValueTest, RefusesWhatCannotBeSentWithoutNamingTheSecret) {
  const std::string secret = "d2p_secretpart";
  for (const std::string& token : {secret + "\n", secret + " x", "\t" + secret, secret + "\x7f"}) {
    absl::StatusOr<std::string> value = AuthorizationValue(CallCredentialsSpec::Token(token));
    EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(value.status().message(), Not(HasSubstr("secretpart")));
  }
  CallCredentialsSpec both = CallCredentialsSpec::Token(secret);
  both.username = "admin";
  EXPECT_EQ(AuthorizationValue(both).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      AuthorizationValue(CallCredentialsSpec::Password("ad:min", "secretpart")).status().message(),
      AllOf(HasSubstr("':'"), Not(HasSubstr("secretpart"))));
  EXPECT_EQ(AuthorizationValue(CallCredentialsSpec::Password("admin", "")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AuthorizationValue(CallCredentialsSpec::Password("", "secretpart")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AuthorizationValue(CallCredentialsSpec{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AuthorizationValueTest, DescribesWithoutTheSecret) {
  EXPECT_EQ(CallCredentialsSpec::Token(kToken).Describe(), "token");
  EXPECT_EQ(CallCredentialsSpec::Password("alice", "pw").Describe(), "user alice");
  EXPECT_EQ(CallCredentialsSpec{}.Describe(), "none");
}

class TokenFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& contents, mode_t mode = 0600) {
    const std::string path = dir_.Join("token");
    ::unlink(path.c_str());
    testutil::WriteFile(path, contents);
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }

  testutil::TemporaryDirectory dir_;
};

TEST_F(TokenFileTest, ReadsTheFirstLineTrimmed) {
  EXPECT_EQ(*ReadTokenFile(Write(absl::StrCat(kToken, "\n"))), kToken);
  EXPECT_EQ(*ReadTokenFile(Write(absl::StrCat("  ", kToken, " \r\nsecond line\n"))), kToken);
  EXPECT_EQ(*ReadTokenFile(Write(kToken, 0400)), kToken);
}

TEST_F(TokenFileTest, RefusesAFileOthersMayRead) {
  for (mode_t mode : {0640, 0604, 0644, 0620, 0602}) {
    absl::StatusOr<std::string> token = ReadTokenFile(Write(kToken, mode));
    EXPECT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition) << mode;
    EXPECT_THAT(token.status().message(), HasSubstr("chmod 600"));
    EXPECT_THAT(token.status().message(), Not(HasSubstr("EMi4vUP6")));
  }
}

TEST_F(TokenFileTest, RefusesAnEmptyOrBrokenOrMissingFile) {
  for (const std::string contents : {"", "\n", "   \n", "d2p_ab cd\n"}) {
    absl::StatusOr<std::string> token = ReadTokenFile(Write(contents));
    EXPECT_EQ(token.status().code(), absl::StatusCode::kInvalidArgument) << contents;
    EXPECT_THAT(token.status().message(), HasSubstr(dir_.Join("token")));
    EXPECT_THAT(token.status().message(), Not(HasSubstr("ab cd")));
  }
  EXPECT_EQ(ReadTokenFile(dir_.Join("absent")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReadTokenFile(dir_.path()).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(TokenFileTest, DoesNotWaitOnAFifo) {
  const std::string fifo = dir_.Join("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<std::string> token = ReadTokenFile(fifo);
  EXPECT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(token.status().message(), HasSubstr("not a regular file"));
}

TEST(TokenFromVariableTest, TrimsAndNamesTheVariable) {
  EXPECT_EQ(*TokenFromVariable("DVEXPORT_TOKEN", absl::StrCat(" ", kToken, "\n")), kToken);
  absl::StatusOr<std::string> empty = TokenFromVariable("DVEXPORT_TOKEN", " ");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("DVEXPORT_TOKEN"));
}

// Each method over a plaintext channel to a real gRPC server.
class CallCredentialsTest : public ::testing::Test {
 protected:
  CallCredentialsTest() : client_(CreateChannel(server_.address())) {
    request_.mutable_query()->add_period("202401");
    request_.set_format(dvexport::v1::FORMAT_JSON);
  }

  void SetUp() override { ASSERT_NE(server_.address(), "127.0.0.1:0"); }

  // Runs ExportToFile, ExportToFd, StreamDataValues, CountDataValues and
  // Health with "credentials"; each must succeed.
  void CallEachMethod(const CallCredentialsSpec& credentials) {
    const std::string file = MakeFileContent(5000);
    server_.SetScript(GoodScript(file, 10, 1000));
    server_.SetStreamScript({{testutil::ValueBatch(3, 0, true)}, grpc::Status::OK});
    server_.SetCountResult(42);
    ExportOptions export_options;
    export_options.credentials = credentials;
    CallOptions call_options;
    call_options.credentials = credentials;

    absl::StatusOr<ExportSummary> summary =
        client_.ExportToFile(request_, dir_.Join("out.json"), export_options);
    ASSERT_TRUE(summary.ok()) << summary.status();
    const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    summary = client_.ExportToFd(request_, null_fd, export_options);
    ::close(null_fd);
    ASSERT_TRUE(summary.ok()) << summary.status();
    absl::StatusOr<int64_t> values = client_.StreamDataValues(
        request_.query(), [](const dvexport::v1::DataValueBatch&) { return true; }, call_options);
    ASSERT_TRUE(values.ok()) << values.status();
    absl::StatusOr<int64_t> count = client_.CountDataValues(request_.query(), call_options);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(*count, 42);
    absl::StatusOr<ServingStatus> health = client_.Health("", call_options);
    ASSERT_TRUE(health.ok()) << health.status();
  }

  testutil::TemporaryDirectory dir_;
  testutil::ScriptedExportServer server_;
  ExportClient client_;
  dvexport::v1::ExportFileRequest request_;
};

TEST_F(CallCredentialsTest, EveryDataMethodSendsTheTokenOnAPlaintextChannel) {
  CallEachMethod(CallCredentialsSpec::Token(kToken));
  const std::string sent = absl::StrCat("ApiToken ", kToken);
  // Health needs no identity and gets none.
  EXPECT_THAT(server_.authorizations(), ElementsAre(ReceivedAuthorization{"ExportFile", sent},
                                                    ReceivedAuthorization{"ExportFile", sent},
                                                    ReceivedAuthorization{"StreamDataValues", sent},
                                                    ReceivedAuthorization{"CountDataValues", sent},
                                                    ReceivedAuthorization{"Check", std::nullopt}));
}

TEST_F(CallCredentialsTest, EveryDataMethodSendsBasicCredentials) {
  CallEachMethod(CallCredentialsSpec::Password("alice", "district"));
  const std::string sent = "Basic YWxpY2U6ZGlzdHJpY3Q=";
  EXPECT_THAT(server_.authorizations(), ElementsAre(ReceivedAuthorization{"ExportFile", sent},
                                                    ReceivedAuthorization{"ExportFile", sent},
                                                    ReceivedAuthorization{"StreamDataValues", sent},
                                                    ReceivedAuthorization{"CountDataValues", sent},
                                                    ReceivedAuthorization{"Check", std::nullopt}));
}

TEST_F(CallCredentialsTest, NoCredentialsSendNoAuthorization) {
  CallEachMethod(CallCredentialsSpec{});
  for (const ReceivedAuthorization& received : server_.authorizations()) {
    EXPECT_EQ(received.value, std::nullopt) << received.method;
  }
  EXPECT_EQ(server_.authorizations().size(), 5u);
}

TEST_F(CallCredentialsTest, EveryAttemptOfAnExportCarriesThem) {
  const std::string file = MakeFileContent(5000);
  testutil::ExportScript fails = GoodScript(file, 10, 1000);
  fails.messages.resize(2);
  fails.status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "went away");
  server_.SetScripts({fails, GoodScript(file, 10, 1000)});
  ExportOptions options;
  options.retry_backoff = std::chrono::milliseconds(10);
  options.credentials = CallCredentialsSpec::Token(kToken);
  absl::StatusOr<ExportSummary> summary =
      client_.ExportToFile(request_, dir_.Join("out.json"), options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->attempts, 2);
  const std::string sent = absl::StrCat("ApiToken ", kToken);
  EXPECT_THAT(server_.authorizations(), ElementsAre(ReceivedAuthorization{"ExportFile", sent},
                                                    ReceivedAuthorization{"ExportFile", sent}));
}

TEST_F(CallCredentialsTest, InvalidCredentialsFailBeforeAnyCallOrFile) {
  ExportOptions options;
  options.credentials = CallCredentialsSpec::Token("d2p_secret\nInjected: header");
  absl::StatusOr<ExportSummary> summary =
      client_.ExportToFile(request_, dir_.Join("out.json"), options);
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(summary.status().message(), Not(HasSubstr("secret")));
  EXPECT_THAT(dir_.List(), IsEmpty());
  CallOptions call_options;
  call_options.credentials = options.credentials;
  EXPECT_EQ(client_.CountDataValues(request_.query(), call_options).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(server_.authorizations(), IsEmpty());
}

// The same credentials over TLS: a server certificate for 127.0.0.1 made by
// openssl now, trusted as the channel's CA.
TEST(CallCredentialsTlsTest, TheTokenIsSentOverTlsToo) {
  testutil::TemporaryDirectory dir;
  const std::string cert = dir.Join("server.pem");
  const std::string key = dir.Join("server.key");
  ASSERT_EQ(std::system(absl::StrCat("openssl req -x509 -newkey ec -pkeyopt "
                                     "ec_paramgen_curve:prime256v1 -nodes -keyout ",
                                     key, " -out ", cert,
                                     " -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 "
                                     "-days 2 2>/dev/null")
                            .c_str()),
            0);
  testutil::ScriptedExportServer server(testutil::ReadFile(cert), testutil::ReadFile(key));
  ASSERT_NE(server.address(), "127.0.0.1:0");
  server.SetCountResult(5);
  ChannelOptions tls;
  tls.tls_ca_file = cert;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = CreateChannel(server.address(), tls);
  ASSERT_TRUE(channel.ok()) << channel.status();
  ExportClient client(*channel);
  CallOptions options;
  options.timeout = std::chrono::seconds(20);
  options.credentials = CallCredentialsSpec::Token(kToken);
  absl::StatusOr<int64_t> count = client.CountDataValues(dvexport::v1::ExportRequest(), options);
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 5);
  EXPECT_THAT(server.authorizations(), ElementsAre(ReceivedAuthorization{
                                           "CountDataValues", absl::StrCat("ApiToken ", kToken)}));
}

// Why MakeCallCredentials asks for GRPC_SECURITY_NONE: gRPC 1.51's plain
// MetadataCredentialsFromPlugin requires privacy and integrity, and fails
// every call on a plaintext channel before it reaches the server, as
// UNAUTHENTICATED "Established channel does not have a sufficient security
// level to transfer call credential." (which would read as the server's
// refusal).
TEST_F(CallCredentialsTest, GrpcRefusesPlainPluginCredentialsOnPlaintext) {
  class Plugin final : public grpc::MetadataCredentialsPlugin {
   public:
    bool IsBlocking() const override { return false; }
    grpc::Status GetMetadata(grpc::string_ref, grpc::string_ref, const grpc::AuthContext&,
                             std::multimap<grpc::string, grpc::string>* metadata) override {
      metadata->emplace("authorization", "ApiToken d2p_x");
      return grpc::Status::OK;
    }
  };
  server_.SetCountResult(1);
  auto stub = dvexport::v1::DataValueExport::NewStub(CreateChannel(server_.address()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  context.set_credentials(grpc::MetadataCredentialsFromPlugin(std::make_unique<Plugin>()));
  dvexport::v1::CountResponse response;
  const grpc::Status status = stub->CountDataValues(&context, request_.query(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("sufficient security level"));
  EXPECT_THAT(server_.authorizations(), IsEmpty());

  grpc::ClientContext ours;
  ours.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(ApplyCallCredentials(CallCredentialsSpec::Token("d2p_x"), &ours).ok());
  EXPECT_TRUE(stub->CountDataValues(&ours, request_.query(), &response).ok());
  EXPECT_THAT(server_.authorizations(),
              ElementsAre(ReceivedAuthorization{"CountDataValues", "ApiToken d2p_x"}));
}

}  // namespace
}  // namespace dvexport::client
