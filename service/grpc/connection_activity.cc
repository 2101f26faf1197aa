#include "service/grpc/connection_activity.h"

#include <dirent.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <thread>

namespace dvexport::grpc_door {
namespace {

// Adds "fd" to "*activity" if it is a connected TCP socket. A descriptor closed (or reused) since
// the directory was read is only a question asked of another one: every call here reads, none
// changes anything.
void AddActivity(int fd, std::chrono::milliseconds quiet, ConnectionActivity* activity) {
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISSOCK(status.st_mode)) return;
  int value = 0;
  socklen_t length = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &length) != 0 ||
      (value != AF_INET && value != AF_INET6)) {
    return;
  }
  length = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &length) != 0 || value != SOCK_STREAM) return;
  length = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) != 0 || value != 0) return;
  tcp_info info{};
  length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 ||
      info.tcpi_state != TCP_ESTABLISHED) {
    return;
  }
  int queued = 0;
  if (ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0) activity->unacknowledged_bytes += queued;
  if (info.tcpi_last_data_recv < static_cast<uint32_t>(quiet.count())) ++activity->recently_active;
}

}  // namespace

ConnectionActivity CurrentConnectionActivity(std::chrono::milliseconds quiet, bool* readable) {
  ConnectionActivity activity;
  DIR* directory = opendir("/proc/self/fd");
  *readable = directory != nullptr;
  if (directory == nullptr) return activity;
  const int own = dirfd(directory);
  while (const dirent* entry = readdir(directory)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == own) continue;
    AddActivity(static_cast<int>(fd), quiet, &activity);
  }
  closedir(directory);
  return activity;
}

bool WaitForConnectionsToSettle(std::chrono::milliseconds quiet,
                                std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    bool readable = false;
    if (CurrentConnectionActivity(quiet, &readable).settled() || !readable) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace dvexport::grpc_door
