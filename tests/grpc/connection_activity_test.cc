// What a graceful shutdown waits for: this process's TCP connections, over real loopback sockets.

#include "service/grpc/connection_activity.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace dvexport::grpc_door {
namespace {

using std::chrono::milliseconds;

// A connected loopback pair: "client" was connected to "server" (accepted).
struct Pair {
  int listener = -1;
  int client = -1;
  int server = -1;
  Pair() {
    listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    listen(listener, 1);
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
    client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    // A small receive buffer: what the server sends beyond it waits, unacknowledged.
    const int small = 4096;
    setsockopt(client, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    server = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  }
  ~Pair() {
    for (int fd : {listener, client, server}) {
      if (fd >= 0) close(fd);
    }
  }
};

ConnectionActivity Activity(milliseconds quiet) {
  bool readable = false;
  ConnectionActivity activity = CurrentConnectionActivity(quiet, &readable);
  EXPECT_TRUE(readable);
  return activity;
}

TEST(ConnectionActivityTest, BytesTheClientHasNotTakenAreUnacknowledgedUntilItReads) {
  Pair pair;
  ASSERT_GE(pair.server, 0);
  const int send_buffer = 1 << 20;
  setsockopt(pair.server, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof(send_buffer));
  const std::string data(256 << 10, 'x');
  ASSERT_EQ(send(pair.server, data.data(), data.size(), MSG_DONTWAIT),
            static_cast<ssize_t>(data.size()));
  // The client's small window holds a few KiB: the rest is waiting in the server's queue.
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_GT(Activity(milliseconds(200)).unacknowledged_bytes, 100 << 10);
  EXPECT_FALSE(WaitForConnectionsToSettle(milliseconds(200),
                                          std::chrono::steady_clock::now() + milliseconds(300)));
  // The client reads everything: nothing is left unacknowledged.
  std::vector<char> buffer(64 << 10);
  size_t read = 0;
  while (read < data.size()) {
    const ssize_t n = recv(pair.client, buffer.data(), buffer.size(), 0);
    ASSERT_GT(n, 0);
    read += static_cast<size_t>(n);
  }
  EXPECT_TRUE(WaitForConnectionsToSettle(milliseconds(0),
                                         std::chrono::steady_clock::now() + milliseconds(5000)));
  EXPECT_EQ(Activity(milliseconds(0)).unacknowledged_bytes, 0);
}

TEST(ConnectionActivityTest, AConnectionThatJustReceivedDataIsActiveUntilItHasBeenQuiet) {
  Pair pair;
  ASSERT_GE(pair.server, 0);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(send(pair.client, "window update", 13, 0), 13);
  std::this_thread::sleep_for(milliseconds(20));
  // The server's end received something lately.
  EXPECT_GE(Activity(milliseconds(10000)).recently_active, 1);
  EXPECT_TRUE(WaitForConnectionsToSettle(milliseconds(300), sent + milliseconds(10000)));
  // The kernel counts in jiffies (up to 10 ms each).
  EXPECT_GE(std::chrono::steady_clock::now() - sent, milliseconds(280));
  EXPECT_TRUE(Activity(milliseconds(300)).settled());
}

TEST(ConnectionActivityTest, ListenersAndOtherDescriptorsAreNotConnections) {
  const ConnectionActivity before = Activity(milliseconds(10000));
  Pair pair;
  ASSERT_GE(pair.server, 0);
  close(pair.client);
  close(pair.server);
  pair.client = pair.server = -1;
  // Only the listener and closed sockets are left: nothing counts.
  const ConnectionActivity after = Activity(milliseconds(10000));
  EXPECT_EQ(after.unacknowledged_bytes, before.unacknowledged_bytes);
  EXPECT_EQ(after.recently_active, before.recently_active);
}

}  // namespace
}  // namespace dvexport::grpc_door
