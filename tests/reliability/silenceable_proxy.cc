#include "tests/reliability/silenceable_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

namespace dvexport::reliability {

SilenceableProxy::SilenceableProxy(int target_port, bool silent)
    : target_port_(target_port), silent_(silent) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(listen(listen_fd_, 64), 0);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

SilenceableProxy::~SilenceableProxy() {
  stop_ = true;
  acceptor_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (std::thread& relay : relays_) relay.join();
  close(listen_fd_);
}

void SilenceableProxy::AcceptLoop() {
  while (!stop_) {
    pollfd fd = {listen_fd_, POLLIN, 0};
    if (poll(&fd, 1, 50) <= 0) continue;
    const int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    relays_.emplace_back([this, client] { Relay(client); });
  }
}

void SilenceableProxy::Relay(int client) {
  const int server = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(target_port_));
  bool open = connect(server, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  char buffer[16384];
  while (open && !stop_) {
    if (silent_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    if (poll(fds, 2, 20) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      open = n > 0 && write(fds[1 - i].fd, buffer, static_cast<size_t>(n)) == n;
    }
  }
  close(server);
  close(client);
}

}  // namespace dvexport::reliability
