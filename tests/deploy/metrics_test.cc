// The Prometheus endpoint of a real server (in-process, the demo database):
// scraped over a plain socket before and after exports.

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
  void SetUp() override { StartServer({}); }

  void StartServer(server::ServerOptions options) {
    // Not a test of authentication: calls carry no credentials.
    options.service.auth = pipeline::AuthMode::kNone;
    server_.reset();
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.conninfo = testing::TestConninfo();
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = *std::move(started);
    ASSERT_GT(server_->metrics_port(), 0);
    // Without the client's retries: a refusal the test provokes is counted once.
    client::ChannelOptions channel_options;
    channel_options.max_attempts = 1;
    auto channel =
        client::CreateChannel("127.0.0.1:" + std::to_string(server_->port()), channel_options);
    ASSERT_TRUE(channel.ok()) << channel.status();
    client_ = std::make_unique<client::ExportClient>(*std::move(channel));
  }

  // One stream holds a slot (its client stops reading after the first batch; with a fixed HTTP/2
  // window the server cannot send the rest), one more export of the same caller waits for a slot
  // (until --max_queue_wait_ms), the next is refused: the metrics while the export waits, the
  // two exports' statuses. The stream is cancelled at the end.
  struct QueueOutcome {
    std::string during;
    absl::Status waited;
    absl::Status refused;
  };
  QueueOutcome HoldWaitAndRefuse() {
    grpc::ChannelArguments fixed_window;
    fixed_window.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    auto stub = v1::DataValueExport::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()),
                                  grpc::InsecureChannelCredentials(), fixed_window));
    v1::ExportRequest query;
    query.add_org_unit("ImspTQPwCqd");
    query.set_children(true);
    query.set_start_date("2000-01-01");
    query.set_end_date("2030-12-31");
    for (const char* data_set :
         {"IF4YaBzxNHa", "JurnHCkmDCn", "QfF9ZANatcj", "Se00xj4OCO2", "av9SOZj6FcK"}) {
      query.add_data_set(data_set);
    }
    grpc::ClientContext held_context;
    std::unique_ptr<grpc::ClientReader<v1::DataValueBatch>> held =
        stub->StreamDataValues(&held_context, query);
    v1::DataValueBatch batch;
    EXPECT_TRUE(held->Read(&batch));

    QueueOutcome outcome;
    outcome.waited = absl::UnknownError("not called");
    std::thread waiting(
        [&] { outcome.waited = Export("JurnHCkmDCn", v1::COMPRESSION_NONE).status(); });
    for (int i = 0; i < 500 && SumSamples(HttpGet(server_->metrics_port(), "/metrics"),
                                          "dvexport_queued_exports") != 1;
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    outcome.during = HttpGet(server_->metrics_port(), "/metrics");
    outcome.refused = Export("JurnHCkmDCn", v1::COMPRESSION_NONE).status();
    waiting.join();
    held_context.TryCancel();
    while (held->Read(&batch)) {
    }
    EXPECT_EQ(held->Finish().error_code(), grpc::StatusCode::CANCELLED);
    return outcome;
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
                       {"transport=\"grpc\"", "rpc=\"ExportFile\"", "code=\"OK\"",
                        "compression=\"COMPRESSION_GZIP\""}),
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

// A count's answer is the one message it sends: its bytes and time to first byte are recorded as
// a stream's messages are; its count is the call's values (logged) but none were sent.
TEST_F(ServerMetricsTest, CountIsRecordedAsTheMessageItSends) {
  v1::ExportRequest query;
  query.add_data_set("JurnHCkmDCn");
  query.add_org_unit("JhqLZoNBxt6");
  query.add_period("202401");
  absl::StatusOr<int64_t> count = client_->CountDataValues(query);
  ASSERT_TRUE(count.ok()) << count.status();
  ASSERT_GT(*count, 0);
  std::string after = HttpGet(server_->metrics_port(), "/metrics");
  const std::vector<std::string> count_rpc = {"rpc=\"CountDataValues\""};
  EXPECT_EQ(SumSamples(after, "dvexport_exports_total", count_rpc), 1) << after;
  EXPECT_EQ(SumSamples(after, "dvexport_values_sent_total", count_rpc), 0) << after;
  EXPECT_GT(SumSamples(after, "dvexport_bytes_sent_total", count_rpc), 0) << after;
  EXPECT_EQ(SumSamples(after, "dvexport_time_to_first_byte_seconds_count", count_rpc), 1) << after;
}

// The queue's metrics: one stream holds the only slot (its client stops reading after the first
// batch; with a fixed HTTP/2 window the server cannot send the rest), one more export waits until
// --max_queue_wait_ms runs out, the next finds the queue full.
TEST_F(ServerMetricsTest, QueuedAndRefusedExportsAreCounted) {
  server::ServerOptions options;
  options.service.max_concurrent_exports = 1;
  options.service.max_queued_exports = 1;
  options.service.max_queue_wait = std::chrono::milliseconds(300);
  options.service.batch_bytes = 1024;
  StartServer(options);
  const QueueOutcome queue = HoldWaitAndRefuse();
  const std::string& during = queue.during;
  const absl::Status& refused = queue.refused;
  const absl::Status& waited = queue.waited;
  EXPECT_EQ(SumSamples(during, "dvexport_queued_exports"), 1) << during;
  EXPECT_EQ(SumSamples(during, "dvexport_active_exports"), 1) << during;
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_EQ(waited.code(), absl::StatusCode::kResourceExhausted) << waited;
  const std::string after = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(SumSamples(after, "dvexport_exports_refused_total", {"reason=\"queue_full\""}), 1)
      << after;
  EXPECT_EQ(SumSamples(after, "dvexport_exports_refused_total", {"reason=\"max_wait\""}), 1)
      << after;
  // The stream's slot, given at once.
  EXPECT_EQ(SumSamples(after, "dvexport_export_slot_wait_seconds_count"), 1) << after;
  EXPECT_EQ(SumSamples(after, "dvexport_queued_exports"), 0) << after;
}

// The fair shares' metrics, for one user (all of this test's calls come from 127.0.0.1): its one
// slot (--max_exports_per_user 1) held by a stream whose client stops reading, a second export
// that queues although a slot is free (a user cap wait), a third refused because its user's share
// of the queue (1) is full. No label names the user.
TEST_F(ServerMetricsTest, UserCapWaitsAndUserQueueRefusalsAreCounted) {
  server::ServerOptions options;
  options.service.max_concurrent_exports = 2;
  options.service.max_exports_per_user = 1;
  options.service.max_queued_exports = 4;
  options.service.max_queued_exports_per_user = 1;
  options.service.max_queue_wait = std::chrono::milliseconds(300);
  options.service.batch_bytes = 1024;
  StartServer(options);
  const QueueOutcome queue = HoldWaitAndRefuse();
  const std::string& during = queue.during;
  const absl::Status& refused = queue.refused;
  const absl::Status& waited = queue.waited;

  // One slot of two taken, one export waiting: its user was at its cap.
  EXPECT_EQ(SumSamples(during, "dvexport_active_exports"), 1) << during;
  EXPECT_EQ(SumSamples(during, "dvexport_queued_exports"), 1) << during;
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_NE(refused.message().find("--max_queued_exports_per_user 1"), absl::string_view::npos)
      << refused;
  EXPECT_EQ(waited.code(), absl::StatusCode::kResourceExhausted) << waited;
  const std::string after = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(SumSamples(after, "dvexport_export_slot_user_cap_waits_total"), 1) << after;
  EXPECT_EQ(SumSamples(after, "dvexport_exports_refused_total", {"reason=\"user_queue_full\""}), 1)
      << after;
  EXPECT_EQ(SumSamples(after, "dvexport_exports_refused_total", {"reason=\"queue_full\""}), 0)
      << after;
  EXPECT_EQ(SumSamples(after, "dvexport_exports_refused_total", {"reason=\"max_wait\""}), 1)
      << after;
  EXPECT_EQ(after.find("127.0.0.1"), std::string::npos) << after;
}

// Slow HTTP clients (issue 19): connections that send a request line and then drip one header
// line every 500 ms, never ending their headers, held the metrics server's two worker threads for
// 30 s each and /metrics timed out behind them. Now /metrics answers at once next to 8 of them,
// and each is closed once its headers are not complete after the 5 s request timeout.
TEST_F(ServerMetricsTest, AnswersNextToSlowConnectionsAndClosesThem) {
  using Clock = std::chrono::steady_clock;
  constexpr int kSlow = 8;
  struct SlowConnection {
    int fd = -1;
    Clock::time_point closed_at = Clock::time_point::max();
  };
  std::vector<SlowConnection> slow(kSlow);
  const Clock::time_point opened = Clock::now();
  for (SlowConnection& connection : slow) {
    connection.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(connection.fd, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(server_->metrics_port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(connection.fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    const std::string line = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    ASSERT_EQ(send(connection.fd, line.data(), line.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(line.size()));
  }
  // Drips a header line into each open connection every 500 ms and notes when the server
  // closed it (end of stream or reset), for 15 s at most.
  std::thread drip([&] {
    const Clock::time_point end = Clock::now() + std::chrono::seconds(15);
    while (Clock::now() < end) {
      bool open = false;
      for (SlowConnection& connection : slow) {
        if (connection.closed_at != Clock::time_point::max()) continue;
        char byte;
        const ssize_t n = recv(connection.fd, &byte, 1, MSG_DONTWAIT);
        const bool closed = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
                            send(connection.fd, "X-Drip: 1\r\n", 11, MSG_NOSIGNAL) < 0;
        if (closed) {
          connection.closed_at = Clock::now();
        } else {
          open = true;
        }
      }
      if (!open) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  for (int scrape = 0; scrape < 3; ++scrape) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const Clock::time_point start = Clock::now();
    const std::string body =
        HttpGet(server_->metrics_port(), "/metrics", std::chrono::milliseconds(2000));
    EXPECT_NE(body.find("dvexport_active_exports"), std::string::npos) << "scrape " << scrape;
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(2)) << "scrape " << scrape;
  }
  drip.join();
  for (SlowConnection& connection : slow) {
    EXPECT_LT(connection.closed_at - opened, std::chrono::seconds(9))
        << "a slow connection was still open after 9 s";
    EXPECT_GT(connection.closed_at - opened, std::chrono::seconds(4))
        << "a slow connection was closed before the request timeout";
    close(connection.fd);
  }
}

}  // namespace
}  // namespace dvexport
