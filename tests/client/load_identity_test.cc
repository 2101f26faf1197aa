// dvexport-load's DHIS2 identity: the ghz configs' metadata.authorization and
// what RunLoad's calls carry to a real gRPC server.

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/load/load_generator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/scripted_export_server.h"
#include "tests/client/test_files.h"

#ifndef DVEXPORT_GHZ_CONFIG_DIR
#error "DVEXPORT_GHZ_CONFIG_DIR must name deploy/ghz"
#endif

namespace dvexport::load {
namespace {

using client::testutil::ReceivedAuthorization;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Not;

// The demo database's superuser token, which every deploy/ghz config carries.
constexpr char kDemoToken[] = "d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb";

TEST(LoadIdentityTest, EveryGhzConfigCarriesTheDemoSuperusersToken) {
  int configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DVEXPORT_GHZ_CONFIG_DIR)) {
    if (entry.path().extension() != ".json") continue;
    ++configs;
    LoadOptions options;
    absl::Status status =
        ApplyGhzConfig(client::testutil::ReadFile(entry.path().string()), &options);
    ASSERT_TRUE(status.ok()) << entry.path() << ": " << status;
    EXPECT_EQ(options.credentials.token, kDemoToken) << entry.path();
  }
  EXPECT_GE(configs, 4);
}

TEST(LoadIdentityTest, ReadsBasicCredentials) {
  LoadOptions options;
  ASSERT_TRUE(
      ApplyGhzConfig(R"({"metadata": {"authorization": "Basic YWxpY2U6ZGk6c3RyaWN0"}})", &options)
          .ok());
  EXPECT_EQ(options.credentials.username, "alice");
  EXPECT_EQ(options.credentials.password, "di:strict");
}

TEST(LoadIdentityTest, RefusesOtherMetadataAndSchemesWithoutTheirValue) {
  LoadOptions options;
  absl::Status status = ApplyGhzConfig(R"({"metadata": {"x-api-key": "secretvalue"}})", &options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("x-api-key"));
  EXPECT_THAT(status.message(), Not(HasSubstr("secretvalue")));
  for (const char* config :
       {R"({"metadata": {"authorization": "Bearer secretvalue"}})",
        R"({"metadata": {"authorization": "ApiToken secret value"}})",
        R"({"metadata": {"authorization": "Basic !!secretvalue"}})",
        R"({"metadata": {"authorization": 5}})", R"({"metadata": "secretvalue"})"}) {
    status = ApplyGhzConfig(config, &options);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << config;
    EXPECT_THAT(status.message(), Not(HasSubstr("secretvalue"))) << config;
  }
}

TEST(LoadIdentityTest, EveryCallOfEveryKindCarriesTheToken) {
  client::testutil::ScriptedExportServer server;
  server.SetScript(client::testutil::GoodScript(client::testutil::MakeFileContent(1000), 3, 400));
  server.SetStreamScript({{client::testutil::ValueBatch(2, 0, true)}, grpc::Status::OK});
  server.SetCountResult(9);
  for (LoadCall call :
       {LoadCall::kExportFile, LoadCall::kStreamDataValues, LoadCall::kCountDataValues}) {
    LoadOptions options;
    options.server = server.address();
    options.call = call;
    options.total = 6;
    options.concurrency = 3;
    options.connections = 2;
    options.timeout = std::chrono::seconds(30);
    options.credentials = client::CallCredentialsSpec::Token(kDemoToken);
    LoadReport report = RunLoad(options);
    EXPECT_TRUE(report.all_ok()) << FormatReport(report);
    EXPECT_EQ(report.count, 6);
  }
  const std::vector<ReceivedAuthorization> received = server.authorizations();
  EXPECT_EQ(received.size(), 18u);
  for (const ReceivedAuthorization& one : received) {
    EXPECT_EQ(one.value, absl::StrCat("ApiToken ", kDemoToken)) << one.method;
  }
}

}  // namespace
}  // namespace dvexport::load
