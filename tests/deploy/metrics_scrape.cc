#include "tests/deploy/metrics_scrape.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace dvexport::testing {

std::string HttpGet(int port, const std::string& path, std::chrono::milliseconds timeout) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    ADD_FAILURE() << "socket failed";
    return "";
  }
  const timeval wait{.tv_sec = static_cast<time_t>(timeout.count() / 1000),
                     .tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[8192];
      ssize_t n;
      while ((n = read(fd, buffer, sizeof(buffer))) > 0) response.append(buffer, n);
    }
  }
  close(fd);
  size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || response.find(" 200 ") > response.find("\r\n") ||
      body == std::string::npos) {
    ADD_FAILURE() << "GET " << path << " on port " << port << " failed: " << response;
    return "";
  }
  return response.substr(body + 4);
}

double SumSamples(const std::string& exposition, const std::string& name,
                  const std::vector<std::string>& labels) {
  double sum = 0;
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#' || line.rfind(name, 0) != 0) continue;
    const char after = line.size() > name.size() ? line[name.size()] : '\0';
    if (after != '{' && after != ' ') continue;
    size_t value = line.rfind(' ');
    bool match = true;
    for (const std::string& label : labels) {
      match = match && line.find(label) < value;
    }
    if (match) sum += std::strtod(line.c_str() + value + 1, nullptr);
  }
  return sum;
}

}  // namespace dvexport::testing
