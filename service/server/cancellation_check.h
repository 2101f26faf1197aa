#ifndef DVEXPORT_SERVICE_SERVER_CANCELLATION_CHECK_H_
#define DVEXPORT_SERVICE_SERVER_CANCELLATION_CHECK_H_

#include <grpcpp/server_context.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "service/db/pg_connection.h"

namespace dvexport::server {

// Whether the call was cancelled, asked of gRPC at most every kCancelPollMs.
// ServerContext::IsCancelled() polls the call's completion queue (futex
// waits): asked at every database wait it took 42% of an export thread's
// samples. Meant as the "cancelled" callback of db::ReadDataValues.
// Thread-safe: the reader threads of one export share one check, so gRPC is
// asked once per period whatever their number, and a cancellation seen by one
// is seen by all.
class CancellationCheck {
 public:
  explicit CancellationCheck(grpc::ServerContext* context) : context_(context) {}

  CancellationCheck(const CancellationCheck&) = delete;
  CancellationCheck& operator=(const CancellationCheck&) = delete;

  bool operator()() {
    if (cancelled_.load(std::memory_order_relaxed)) return true;
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    int64_t next = next_check_ms_.load(std::memory_order_relaxed);
    // One thread per period wins the right to ask.
    if (now < next || !next_check_ms_.compare_exchange_strong(
                          next, now + db::PgConnection::kCancelPollMs, std::memory_order_relaxed)) {
      return false;
    }
    if (!context_->IsCancelled()) return false;
    cancelled_.store(true, std::memory_order_relaxed);
    return true;
  }

 private:
  grpc::ServerContext* context_;
  std::atomic<int64_t> next_check_ms_{0};
  std::atomic<bool> cancelled_{false};
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_CANCELLATION_CHECK_H_
