// Server reflection is what ghz and grpcurl use to call dvexport without its
// .proto: the server must list its services and describe them.

#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/sync_stream.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "reflection/reflection_client.pb.h"
#include "service/server/export_server.h"

namespace dvexport {
namespace {

using testing::reflection::ServerReflectionRequest;
using testing::reflection::ServerReflectionResponse;

constexpr char kReflectionMethod[] =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

class ReflectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    // Reflection needs no database; nothing connects until an export runs.
    options.conninfo = "host=127.0.0.1 port=1 connect_timeout=1";
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
  }

  ServerReflectionResponse Ask(const ServerReflectionRequest& request) {
    grpc::ClientContext context;
    grpc::internal::RpcMethod method(kReflectionMethod, grpc::internal::RpcMethod::BIDI_STREAMING,
                                     channel_);
    std::unique_ptr<grpc::ClientReaderWriter<ServerReflectionRequest, ServerReflectionResponse>>
        stream(grpc::internal::ClientReaderWriterFactory<
               ServerReflectionRequest, ServerReflectionResponse>::Create(channel_.get(), method,
                                                                          &context));
    EXPECT_TRUE(stream->Write(request));
    stream->WritesDone();
    ServerReflectionResponse response;
    EXPECT_TRUE(stream->Read(&response));
    EXPECT_TRUE(stream->Finish().ok());
    return response;
  }

  std::unique_ptr<server::ExportServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ReflectionTest, ListsTheExportHealthAndReflectionServices) {
  ServerReflectionRequest request;
  request.set_list_services("");
  ServerReflectionResponse response = Ask(request);
  std::set<std::string> names;
  for (const auto& service : response.list_services_response().service()) {
    names.insert(service.name());
  }
  EXPECT_TRUE(names.count("dvexport.v1.DataValueExport")) << response.DebugString();
  EXPECT_TRUE(names.count("grpc.health.v1.Health")) << response.DebugString();
}

TEST_F(ReflectionTest, DescribesTheExportService) {
  ServerReflectionRequest request;
  request.set_file_containing_symbol("dvexport.v1.DataValueExport");
  ServerReflectionResponse response = Ask(request);
  ASSERT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0)
      << response.DebugString();
  bool found = false;
  for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    if (file.name() != "dvexport/v1/export.proto") continue;
    found = true;
    ASSERT_EQ(file.service_size(), 1);
    std::set<std::string> methods;
    for (const auto& method : file.service(0).method()) methods.insert(method.name());
    EXPECT_TRUE(methods.count("ExportFile"));
  }
  EXPECT_TRUE(found) << "dvexport/v1/export.proto not among the descriptors";
}

}  // namespace
}  // namespace dvexport
