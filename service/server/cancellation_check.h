#ifndef DVEXPORT_SERVICE_SERVER_CANCELLATION_CHECK_H_
#define DVEXPORT_SERVICE_SERVER_CANCELLATION_CHECK_H_

#include <grpcpp/server_context.h>

#include <chrono>

#include "service/db/pg_connection.h"

namespace dvexport::server {

// Whether the call was cancelled, asked of gRPC at most every kCancelPollMs.
// ServerContext::IsCancelled() polls the call's completion queue (futex
// waits): asked at every database wait it took 42% of an export thread's
// samples. Meant as the "cancelled" callback of db::ReadDataValues.
class CancellationCheck {
 public:
  explicit CancellationCheck(grpc::ServerContext* context) : context_(context) {}

  bool operator()() {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_check_) return false;
    next_check_ = now + std::chrono::milliseconds(db::PgConnection::kCancelPollMs);
    return context_->IsCancelled();
  }

 private:
  grpc::ServerContext* context_;
  std::chrono::steady_clock::time_point next_check_;
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_CANCELLATION_CHECK_H_
