#ifndef DVEXPORT_TESTS_RELIABILITY_SILENCEABLE_PROXY_H_
#define DVEXPORT_TESTS_RELIABILITY_SILENCEABLE_PROXY_H_

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace dvexport::reliability {

// A database that goes silent (a hung host, a silent network: TCP stays open,
// no bytes come), played by a TCP proxy on 127.0.0.1 that connects each client
// to "target_port". While silent it accepts connections but passes nothing
// either way, on new and existing connections alike (and notices no close
// until it speaks again).
class SilenceableProxy {
 public:
  explicit SilenceableProxy(int target_port, bool silent = true);
  // Closes every connection.
  ~SilenceableProxy();
  SilenceableProxy(const SilenceableProxy&) = delete;
  SilenceableProxy& operator=(const SilenceableProxy&) = delete;

  int port() const { return port_; }
  void SetSilent(bool silent) { silent_ = silent; }

 private:
  void AcceptLoop();
  void Relay(int client);

  const int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> silent_;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> relays_;
};

}  // namespace dvexport::reliability

#endif  // DVEXPORT_TESTS_RELIABILITY_SILENCEABLE_PROXY_H_
