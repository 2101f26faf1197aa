// Scale-out: two stateless replicas behind one client channel that balances
// calls round robin over both addresses, as a headless Kubernetes Service
// with a dns:/// target does. Each replica counts its exports in its own
// Prometheus endpoint.

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

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

std::unique_ptr<server::ExportServer> StartReplica() {
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.metrics_listen = "127.0.0.1:0";
  options.conninfo = testing::TestConninfo();
  options.service.max_concurrent_exports = 8;
  auto started = server::ExportServer::Start(options);
  EXPECT_TRUE(started.ok()) << started.status();
  return started.ok() ? *std::move(started) : nullptr;
}

TEST(ScaleOutTest, RoundRobinChannelSpreadsExportsOverReplicas) {
  std::unique_ptr<server::ExportServer> first = StartReplica();
  std::unique_ptr<server::ExportServer> second = StartReplica();
  ASSERT_TRUE(first && second);

  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName("round_robin");
  args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
  const std::string target = "ipv4:127.0.0.1:" + std::to_string(first->port()) +
                             ",127.0.0.1:" + std::to_string(second->port());
  client::ExportClient client(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));

  v1::ExportFileRequest request;
  request.mutable_query()->add_data_set("JurnHCkmDCn");
  request.mutable_query()->add_org_unit("JhqLZoNBxt6");
  request.mutable_query()->add_period("202401");

  constexpr int kThreads = 4;
  constexpr int kExportsPerThread = 10;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
      for (int i = 0; i < kExportsPerThread; ++i) {
        auto summary = client.ExportToFd(request, devnull);
        if (!summary.ok() || summary->values == 0) {
          ++failures[t];
          ADD_FAILURE() << summary.status();
        }
      }
      close(devnull);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int failed : failures) EXPECT_EQ(failed, 0);

  const double served_first =
      testing::SumSamples(testing::HttpGet(first->metrics_port(), "/metrics"),
                          "dvexport_exports_total", {"code=\"OK\""});
  const double served_second =
      testing::SumSamples(testing::HttpGet(second->metrics_port(), "/metrics"),
                          "dvexport_exports_total", {"code=\"OK\""});
  EXPECT_EQ(served_first + served_second, kThreads * kExportsPerThread);
  // Round robin alternates per call: each replica gets about half.
  EXPECT_GE(served_first, kThreads * kExportsPerThread / 4);
  EXPECT_GE(served_second, kThreads * kExportsPerThread / 4);
}

}  // namespace
}  // namespace dvexport
