#include "service/grpc/accept_guard.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <mutex>

namespace dvexport::grpc_door {
namespace {

using Accept4Function = int (*)(int, sockaddr*, socklen_t*, int);

// INT_MAX: the guard is off and accept4 is the C library's, unchanged.
std::atomic<int> ceiling{INT_MAX};
std::atomic<int64_t> dropped{0};

std::mutex spare_mu;
int spare_fd = -1;  // guarded by spare_mu; -1 while it could not be opened

int OpenSpare() { return open("/dev/null", O_RDONLY | O_CLOEXEC); }

// The next definition of accept4 after this one: the C library's, or a sanitizer's interceptor
// in front of it.
int NextAccept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  static const Accept4Function next =
      reinterpret_cast<Accept4Function>(dlsym(RTLD_NEXT, "accept4"));
  if (next != nullptr) return next(fd, addr, len, flags);
  return static_cast<int>(syscall(SYS_accept4, fd, addr, len, flags));
}

void CountDrop(const char* reason, int limit) {
  const int64_t count = dropped.fetch_add(1, std::memory_order_relaxed) + 1;
  if (count % 1000 != 1) return;
  std::fprintf(stderr,
               "{\"event\":\"connection_dropped\",\"reason\":\"%s\",\"descriptor_ceiling\":%d,"
               "\"dropped_so_far\":%lld}\n",
               reason, limit, static_cast<long long>(count));
}

// With every descriptor taken: frees the spare, accepts the oldest waiting connection on it,
// closes that and takes the spare again. False if nothing was accepted (nothing waits, or
// another thread took the freed descriptor first).
bool DropThroughSpare(int listen_fd, int limit) {
  // Linux reports EMFILE before it looks at the backlog: a blocking listener must not wait here.
  pollfd waiting{listen_fd, POLLIN, 0};
  if (poll(&waiting, 1, 0) != 1 || (waiting.revents & POLLIN) == 0) return false;
  std::lock_guard<std::mutex> lock(spare_mu);
  if (spare_fd < 0) spare_fd = OpenSpare();
  if (spare_fd < 0) return false;
  close(spare_fd);
  const int fd = NextAccept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) close(fd);
  spare_fd = OpenSpare();
  if (fd < 0) return false;
  CountDrop("descriptors exhausted", limit);
  return true;
}

// What accept(2) reports for a pending connection that failed: the next one may be fine.
bool IsErrorOfOneConnection(int error) {
  switch (error) {
    case ENETDOWN:
    case EPROTO:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
      return true;
    default:
      return false;
  }
}

int GuardedAccept4(int listen_fd, sockaddr* addr, socklen_t* len, int flags) {
  const int limit = ceiling.load(std::memory_order_relaxed);
  if (limit == INT_MAX) return NextAccept4(listen_fd, addr, len, flags);
  const socklen_t len_given = len == nullptr ? 0 : *len;
  // Every turn takes one waiting connection off the backlog (or ends), like gRPC's own loop.
  for (;;) {
    if (len != nullptr) *len = len_given;
    const int fd = NextAccept4(listen_fd, addr, len, flags);
    if (fd >= 0) {
      if (fd < limit) return fd;
      close(fd);
      CountDrop("descriptor ceiling", limit);
      continue;
    }
    const int error = errno;
    if (error == EMFILE || error == ENFILE) {
      if (DropThroughSpare(listen_fd, limit)) continue;
      // gRPC waits for the listener's next wake-up (the next connection) and accepts again.
      errno = EAGAIN;
      return -1;
    }
    if (IsErrorOfOneConnection(error)) continue;
    errno = error;
    return -1;
  }
}

}  // namespace

void GuardAcceptedConnections(int new_ceiling) {
  {
    std::lock_guard<std::mutex> lock(spare_mu);
    if (spare_fd < 0) spare_fd = OpenSpare();
  }
  ceiling.store(new_ceiling < 1 ? 1 : new_ceiling, std::memory_order_relaxed);
}

int64_t ConnectionsDroppedByGuard() { return dropped.load(std::memory_order_relaxed); }

}  // namespace dvexport::grpc_door

// The interposer (see accept_guard.h). The C library declares accept4 with these types.
extern "C" int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  return dvexport::grpc_door::GuardedAccept4(fd, addr, len, flags);
}
