// Clients that open full exports and stop reading: the server's stall timeout
// (ServiceOptions::stall_timeout, --stall_timeout_s) ends their calls and gives
// back their transactions, snapshots, export slots and connections, so that
// VACUUM and other clients are not held up by them.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/server/export_server.h"
#include "tests/reliability/reliability_support.h"

namespace dvexport::reliability {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// A channel of its own (a connection of its own: gRPC shares subchannels between channels
// with the same arguments), so that one client's stalled streams cannot hold up another's.
std::shared_ptr<grpc::Channel> OwnChannel(int port, int id) {
  grpc::ChannelArguments arguments;
  arguments.SetInt("dvexport.test.channel", id);
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                   grpc::InsecureChannelCredentials(), arguments);
}

// Clients blocked in their chunk callbacks until Release().
class Latch {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    released_cv_.wait(lock, [this] { return released_; });
  }
  void Arrive() {
    std::lock_guard<std::mutex> lock(mu_);
    ++arrived_;
  }
  int arrived() {
    std::lock_guard<std::mutex> lock(mu_);
    return arrived_;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    released_cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable released_cv_;
  int arrived_ = 0;
  bool released_ = false;
};

TEST(StalledClientTest, FourClientsThatStopReadingReleaseEverythingAfterTheStallTimeout) {
  constexpr int kClients = 4;
  constexpr milliseconds kStall(1000);
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.conninfo = PrivatePostgres::reader_conninfo();
  options.pool_size = 8;
  options.service.max_concurrent_exports = kClients;
  options.service.chunk_size = 16 * 1024;
  options.service.stall_timeout = kStall;
  // The clients' windows hold megabytes: at the default 64 KiB/s they would be given a minute
  // to read them before the timeout starts. At 64 MiB/s the credit is 0.25 s at most (16 MiB),
  // and the timeout is what this test measures (slow_reader_test.cc has the default rate).
  options.service.stall_min_rate = int64_t{64} << 20;
  auto started = server::ExportServer::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<server::ExportServer> server = *std::move(started);

  Latch latch;
  std::vector<ExportOutcome> outcomes(kClients);
  std::vector<std::jthread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      auto stub = v1::DataValueExport::NewStub(OwnChannel(server->port(), i));
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + seconds(120));
      outcomes[i] = ReadExport(stub.get(), &context, WholeDatabaseRequest(), [&](int n) {
        if (n != 1) return;
        latch.Arrive();
        latch.Wait();  // stops reading: the server's writes stop completing
      });
    });
  }
  ASSERT_TRUE(WaitFor([&] { return latch.arrived() == kClients; }, seconds(60)));
  const Clock::time_point stalled = Clock::now();
  // Every slot is taken meanwhile; then the stall timeout frees them all.
  EXPECT_EQ(server->service().active_exports(), kClients);
  const bool released = WaitFor(
      [&] {
        return server->service().active_exports() == 0 && ReaderTransactions() == 0 &&
               ActiveCopies() == 0;
      },
      seconds(30));
  const auto released_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - stalled).count();
  EXPECT_TRUE(released) << "exports " << server->service().active_exports()
                        << ", reader transactions " << ReaderTransactions();
  EXPECT_GE(released_ms, kStall.count() / 2);
  EXPECT_LT(released_ms, kStall.count() + 5000);
  std::printf(
      "{\"event\":\"stall_released\",\"clients\":%d,\"stall_ms\":%lld,\"released_ms\":%lld}\n",
      kClients, static_cast<long long>(kStall.count()), static_cast<long long>(released_ms));

  // The clients are still connected, and still not reading: new exports run meanwhile.
  for (int i = 0; i < kClients + 1; ++i) {
    auto stub = v1::DataValueExport::NewStub(OwnChannel(server->port(), 100 + i));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    ExportOutcome outcome = ReadExport(stub.get(), &context, SmallRequest());
    EXPECT_TRUE(CompleteAndConsistent(outcome)) << outcome.status.error_message();
  }

  latch.Release();
  for (std::jthread& client : clients) client.join();
  for (const ExportOutcome& outcome : outcomes) {
    EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << outcome.status.error_message();
    EXPECT_NE(outcome.status.error_message().find("read nothing for 1 s"), std::string::npos)
        << outcome.status.error_message();
    EXPECT_FALSE(outcome.has_trailer);
  }
}

}  // namespace
}  // namespace dvexport::reliability
