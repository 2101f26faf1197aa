// The Prometheus endpoint of a real server (in-process, the demo database):
// scraped over a plain socket before and after exports.

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "client/export_client.h"
#include "service/server/export_server.h"
#include "tests/deploy/metrics_scrape.h"
#include "tests/integration/test_database.h"

namespace dvexport {
namespace {

using testing::HttpGet;
using testing::SumSamples;

class ServerMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.conninfo = testing::TestConninfo();
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    ASSERT_GT(server_->metrics_port(), 0);
    client_ = std::make_unique<client::ExportClient>(
        client::CreateChannel("127.0.0.1:" + std::to_string(server_->port())));
  }

  absl::StatusOr<client::ExportSummary> Export(const std::string& data_set,
                                               v1::Compression compression) {
    v1::ExportFileRequest request;
    request.mutable_query()->add_data_set(data_set);
    request.mutable_query()->add_org_unit("JhqLZoNBxt6");
    request.mutable_query()->add_period("202401");
    request.set_compression(compression);
    return client_->ExportToFd(request, devnull_.get());
  }

  struct Fd {
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    ~Fd() { close(fd); }
    int get() const { return fd; }
  } devnull_;
  std::unique_ptr<server::ExportServer> server_;
  std::unique_ptr<client::ExportClient> client_;
};

TEST_F(ServerMetricsTest, CountersMoveAfterAnExport) {
  std::string before = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(SumSamples(before, "dvexport_exports_total"), 0);
  EXPECT_NE(before.find("# TYPE dvexport_active_exports gauge"), std::string::npos) << before;
  EXPECT_NE(before.find("# TYPE dvexport_db_pool_in_use gauge"), std::string::npos) << before;

  auto gzip = Export("JurnHCkmDCn", v1::COMPRESSION_GZIP);
  ASSERT_TRUE(gzip.ok()) << gzip.status();
  ASSERT_GT(gzip->values, 0);
  auto plain = Export("JurnHCkmDCn", v1::COMPRESSION_NONE);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(Export("aaaaaaaaaaa", v1::COMPRESSION_NONE).ok());

  std::string after = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(SumSamples(after, "dvexport_exports_total",
                       {"rpc=\"ExportFile\"", "code=\"OK\"", "compression=\"COMPRESSION_GZIP\""}),
            1)
      << after;
  EXPECT_EQ(SumSamples(after, "dvexport_exports_total",
                       {"code=\"OK\"", "compression=\"COMPRESSION_NONE\"",
                        "format=\"FORMAT_UNSPECIFIED\""}),
            1)
      << after;
  EXPECT_EQ(SumSamples(after, "dvexport_exports_total", {"code=\"NOT_FOUND\""}), 1) << after;
  EXPECT_EQ(SumSamples(after, "dvexport_values_sent_total", {"rpc=\"ExportFile\""}),
            gzip->values + plain->values);
  // Serialized messages: the file bytes plus a few bytes of framing per chunk.
  EXPECT_GE(SumSamples(after, "dvexport_bytes_sent_total"), gzip->file_bytes + plain->file_bytes);
  EXPECT_EQ(SumSamples(after, "dvexport_export_duration_seconds_count"), 3);
  EXPECT_EQ(SumSamples(after, "dvexport_time_to_first_byte_seconds_count"), 2);
  EXPECT_GT(SumSamples(after, "dvexport_export_duration_seconds_sum"), 0);
  EXPECT_EQ(SumSamples(after, "dvexport_active_exports"), 0);
  EXPECT_EQ(SumSamples(after, "dvexport_db_pool_in_use"), 0);
}

// The stream's batches are serialized by the service; the call log still reads their count.
TEST_F(ServerMetricsTest, StreamedValuesAreCounted) {
  v1::ExportRequest query;
  query.add_data_set("JurnHCkmDCn");
  query.add_org_unit("JhqLZoNBxt6");
  query.add_period("202401");
  absl::StatusOr<int64_t> values =
      client_->StreamDataValues(query, [](const v1::DataValueBatch&) { return true; });
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_GT(*values, 0);
  std::string after = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(SumSamples(after, "dvexport_values_sent_total", {"rpc=\"StreamDataValues\""}), *values)
      << after;
}

}  // namespace
}  // namespace dvexport
