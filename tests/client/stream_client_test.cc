// ExportClient::StreamDataValues against a server that sends broken streams.

#include <cstdint>
#include <vector>

#include "client/export_client.h"
#include "gtest/gtest.h"
#include "tests/client/scripted_export_server.h"

namespace dvexport::client {
namespace {

using testutil::ScriptedExportServer;
using testutil::StreamScript;
using testutil::ValueBatch;

class StreamClientTest : public ::testing::Test {
 protected:
  absl::StatusOr<int64_t> Stream(StreamScript script, std::vector<int>* sizes = nullptr) {
    server_.SetStreamScript(std::move(script));
    ExportClient client(CreateChannel(server_.address()));
    return client.StreamDataValues(dvexport::v1::ExportRequest(),
                                   [sizes](const dvexport::v1::DataValueBatch& batch) {
                                     if (sizes != nullptr)
                                       sizes->push_back(batch.data_values_size());
                                     return true;
                                   });
  }

  ScriptedExportServer server_;
};

TEST_F(StreamClientTest, ReturnsTheValuesOfACompleteStream) {
  std::vector<int> sizes;
  absl::StatusOr<int64_t> values =
      Stream({{ValueBatch(3, 0, false), ValueBatch(2, 3, false), ValueBatch(0, 5, true)}}, &sizes);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, 5);
  EXPECT_EQ(sizes, (std::vector<int>{3, 2, 0}));
}

TEST_F(StreamClientTest, StreamWithoutItsLastBatchIsDataLoss) {
  absl::StatusOr<int64_t> values = Stream({{ValueBatch(3, 0, false), ValueBatch(2, 3, false)}});
  EXPECT_EQ(values.status().code(), absl::StatusCode::kDataLoss) << values.status();
  EXPECT_EQ(Stream({}).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(StreamClientTest, BatchAfterTheLastIsDataLoss) {
  absl::StatusOr<int64_t> values = Stream({{ValueBatch(3, 0, true), ValueBatch(2, 3, true)}});
  EXPECT_EQ(values.status().code(), absl::StatusCode::kDataLoss) << values.status();
}

TEST_F(StreamClientTest, WrongValuesSoFarIsDataLoss) {
  dvexport::v1::DataValueBatch skipped = ValueBatch(2, 3, true);
  skipped.set_values_so_far(6);
  absl::StatusOr<int64_t> values = Stream({{ValueBatch(3, 0, false), skipped}});
  EXPECT_EQ(values.status().code(), absl::StatusCode::kDataLoss) << values.status();
}

TEST_F(StreamClientTest, ServerErrorKeepsItsCodeAndMessage) {
  absl::StatusOr<int64_t> values =
      Stream({{ValueBatch(3, 0, false)}, grpc::Status(grpc::StatusCode::NOT_FOUND, "no such")});
  EXPECT_EQ(values.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(values.status().message(), "no such");
}

TEST_F(StreamClientTest, ConsumerThatStopsGetsCancelled) {
  server_.SetStreamScript(
      {{ValueBatch(1, 0, false), ValueBatch(1, 1, false), ValueBatch(1, 2, true)}});
  ExportClient client(CreateChannel(server_.address()));
  int calls = 0;
  absl::StatusOr<int64_t> values = client.StreamDataValues(
      dvexport::v1::ExportRequest(),
      [&calls](const dvexport::v1::DataValueBatch&) { return ++calls < 2; });
  EXPECT_EQ(values.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 2);
}

TEST_F(StreamClientTest, CancelledClientFailsAtOnce) {
  ExportClient client(CreateChannel(server_.address()));
  client.Cancel();
  EXPECT_EQ(client
                .StreamDataValues(dvexport::v1::ExportRequest(),
                                  [](const dvexport::v1::DataValueBatch&) { return true; })
                .status()
                .code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client.CountDataValues(dvexport::v1::ExportRequest()).status().code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(client.Health().status().code(), absl::StatusCode::kCancelled);
}

TEST_F(StreamClientTest, UnimplementedCountIsReportedAsSuch) {
  // A server without CountDataValues: the client reports the code.
  server_.SetCountResult(0, grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no count here"));
  ExportClient client(CreateChannel(server_.address()));
  EXPECT_EQ(client.CountDataValues(dvexport::v1::ExportRequest()).status().code(),
            absl::StatusCode::kUnimplemented);
  server_.SetCountResult(123);
  EXPECT_EQ(*client.CountDataValues(dvexport::v1::ExportRequest()), 123);
}

}  // namespace
}  // namespace dvexport::client
