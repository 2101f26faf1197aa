#include "tests/reliability/silenceable_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

namespace dvexport::reliability {

SilenceableProxy::SilenceableProxy(int target_port, bool silent)
    : target_port_(target_port), silent_(silent) {
  // Close-on-exec: a child the test spawns (dvexport-server) must not keep the proxy's sockets.
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    relays_.emplace_back([this, client] { Relay(client); });
  }
}

namespace {

// One direction of a relay: bytes read from "from" and not yet written to "to".
struct Direction {
  Direction(int from_fd, int to_fd) : from(from_fd), to(to_fd) {}
  const int from;
  const int to;
  char buffer[16384];
  size_t size = 0;     // bytes in buffer
  size_t written = 0;  // of them, written to "to"

  bool empty() const { return written == size; }
};

bool Retry() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

}  // namespace

// Non-blocking both ways, so that nothing holds the relay: not a peer that stops reading (a
// blocking write() to a connection whose reader stopped, or whose reader shut it down and went
// away without opening its window again, would never return), not silence, not the stop. Either
// side's end (EOF, an error) closes both, once the proxy speaks.
void SilenceableProxy::Relay(int client) {
  const int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(target_port_));
  bool open = connect(server, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  for (const int fd : {client, server}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  Direction up(client, server);
  Direction down(server, client);
  Direction* const directions[2] = {&up, &down};
  while (open && !stop_) {
    if (silent_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    // fds[0] is the client, fds[1] the server: each is read while its direction's buffer is
    // empty (and always polled, so that its end is seen), written while the other's is not.
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    if (!down.empty()) fds[0].events |= POLLOUT;
    if (!up.empty()) fds[1].events |= POLLOUT;
    if (poll(fds, 2, 20) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      Direction& d = *directions[i];
      const pollfd& from = fds[i];
      const pollfd& to = fds[1 - i];
      if (d.empty() && (from.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = read(d.from, d.buffer, sizeof(d.buffer));
        if (n > 0) {
          d.size = static_cast<size_t>(n);
          d.written = 0;
        } else if (n == 0 || !Retry()) {
          open = false;
        }
      } else if (!d.empty() && (from.revents & (POLLHUP | POLLERR)) != 0) {
        // Its end while its last bytes wait for the other side: a peer that went away.
        char probe;
        const ssize_t n = recv(d.from, &probe, 1, MSG_PEEK);
        if (n == 0 || (n < 0 && !Retry())) open = false;
      }
      if (open && !d.empty() && (to.revents & (POLLOUT | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = write(d.to, d.buffer + d.written, d.size - d.written);
        if (n > 0) {
          d.written += static_cast<size_t>(n);
        } else if (n < 0 && !Retry()) {
          open = false;
        }
      }
    }
  }
  close(server);
  close(client);
}

}  // namespace dvexport::reliability
