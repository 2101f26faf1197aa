#include "service/db/query_canceller.h"

#include <algorithm>
#include <pqxx/connection_base>

#include "absl/strings/str_cat.h"

namespace dvexport::db {

QueryCanceller::QueryCanceller(std::chrono::system_clock::time_point deadline)
    : deadline_(deadline), thread_(&QueryCanceller::Run, this) {}

QueryCanceller::~QueryCanceller() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void QueryCanceller::Cancel() { Stop(StopCause::kCancelled); }

void QueryCanceller::Stop(StopCause cause) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    StopCause none = StopCause::kNone;
    cause_.compare_exchange_strong(none, cause);
    stopped_ = true;
  }
  wake_.notify_all();
}

StopCause QueryCanceller::cause() const {
  const StopCause cause = cause_.load();
  if (cause != StopCause::kNone) return cause;
  // The watchdog may not have woken yet.
  if (deadline_ != std::chrono::system_clock::time_point::max() &&
      std::chrono::system_clock::now() >= deadline_) {
    return StopCause::kDeadline;
  }
  return StopCause::kNone;
}

absl::Status QueryCanceller::StopStatus(absl::string_view what) const {
  switch (cause()) {
    case StopCause::kCancelled:
      return absl::CancelledError(absl::StrCat(what, ": the export was cancelled"));
    case StopCause::kDeadline:
      return absl::DeadlineExceededError(absl::StrCat(what, ": the call's deadline passed"));
    case StopCause::kNone:
      break;
  }
  return absl::OkStatus();
}

void QueryCanceller::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  // Until the session stops: asleep.
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shutdown_ || stopped_; };
  if (deadline_ == std::chrono::system_clock::time_point::max()) {
    wake_.wait(lock, stopping);
  } else if (!wake_.wait_until(lock, deadline_, stopping)) {
    lock.unlock();
    Stop(StopCause::kDeadline);
    lock.lock();
  }
  // Then: every statement that runs is cancelled, again every kRepeat until it ends.
  while (!shutdown_) {
    wake_.wait(lock, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return shutdown_ || !running_.empty();
    });
    if (shutdown_) break;
    for (pqxx::connection_base* connection : running_) {
      try {
        connection->cancel_query();
      } catch (...) {
        // A broken connection: its statement fails by itself.
      }
    }
    wake_.wait_for(lock, kRepeat,
                   [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shutdown_; });
  }
}

QueryCanceller::Statement::Statement(QueryCanceller* canceller, pqxx::connection_base* connection)
    : canceller_(canceller), connection_(connection), started_(false) {
  if (canceller_->cause() != StopCause::kNone) return;
  {
    std::lock_guard<std::mutex> lock(canceller_->mu_);
    if (canceller_->stopped_) return;
    canceller_->running_.push_back(connection_);
    started_ = true;
  }
}

QueryCanceller::Statement::~Statement() {
  if (!started_) return;
  std::lock_guard<std::mutex> lock(canceller_->mu_);
  std::vector<pqxx::connection_base*>& running = canceller_->running_;
  running.erase(std::find(running.begin(), running.end(), connection_));
}

}  // namespace dvexport::db
