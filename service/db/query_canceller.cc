#include "service/db/query_canceller.h"

#include <algorithm>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Cancel requests of the process whose server has not answered yet.
std::atomic<int> waiting_cancels{0};

}  // namespace

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
    StopLocked(cause);
  }
  wake_.notify_all();
}

void QueryCanceller::StopLocked(StopCause cause) {
  StopCause none = StopCause::kNone;
  cause_.compare_exchange_strong(none, cause);
  if (stopped_) return;
  stopped_ = true;
  stopped_at_ = SteadyClock::now();
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

int QueryCanceller::severed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return severed_;
}

int QueryCanceller::cancels_in_flight() { return waiting_cancels.load(); }

void QueryCanceller::SendCancelLocked(Statement* statement) {
  if (statement->last_cancel_ != nullptr) {
    std::lock_guard<std::mutex> lock(statement->last_cancel_->mu);
    if (!statement->last_cancel_->answered) return;
  }
  std::shared_ptr<const CancelRequest> request = statement->connection_->cancel_request();
  if (request == nullptr) return;
  if (waiting_cancels.fetch_add(1) >= kMaxCancelsInFlight) {
    waiting_cancels.fetch_sub(1);
    return;
  }
  auto sent = std::make_shared<SentCancel>();
  try {
    // Owns what it uses, so that nothing need wait for it: it may never come back.
    std::thread([request = std::move(request), sent] {
      request->Send();
      {
        std::lock_guard<std::mutex> lock(sent->mu);
        sent->answered = true;
      }
      sent->answered_cv.notify_all();
      waiting_cancels.fetch_sub(1);
    }).detach();
  } catch (const std::system_error&) {
    // No thread to spare: the severing still bounds the statement.
    waiting_cancels.fetch_sub(1);
    return;
  }
  statement->last_cancel_ = std::move(sent);
}

SteadyClock::time_point QueryCanceller::CancelWhenDueLocked(Statement* statement,
                                                            SteadyClock::time_point now) {
  if (!statement->first_cancel_) {
    statement->first_cancel_ = now;
    statement->next_cancel_ = now;
  }
  if (now >= statement->next_cancel_) {
    SendCancelLocked(statement);
    statement->next_cancel_ = now + kRepeat;
  }
  return statement->next_cancel_;
}

void QueryCanceller::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutdown_) {
    const auto now = SteadyClock::now();
    auto wake = SteadyClock::time_point::max();
    if (!stopped_ && deadline_ != std::chrono::system_clock::time_point::max()) {
      const auto left = deadline_ - std::chrono::system_clock::now();
      if (left <= left.zero()) {
        StopLocked(StopCause::kDeadline);
      } else {
        wake = now + std::chrono::duration_cast<SteadyClock::duration>(left);
      }
    }
    for (Statement* statement : running_) {
      if (statement->severed_.load()) continue;
      auto sever_at = SteadyClock::time_point::max();
      if (statement->kind_ == Kind::kCleanUp) {
        sever_at =
            (stopped_ ? std::max(statement->registered_, stopped_at_) : statement->registered_) +
            kSeverAfter;
      } else if (stopped_ || statement->abandoned_) {
        wake = std::min(wake, CancelWhenDueLocked(statement, now));
        sever_at = *statement->first_cancel_ + kSeverAfter;
      }
      if (now >= sever_at) {
        // Marked first: the statement's thread wakes the moment the socket is shut down.
        statement->severed_.store(true);
        statement->connection_->Sever();
        ++severed_;
      } else {
        wake = std::min(wake, sever_at);
      }
    }
    if (wake == SteadyClock::time_point::max()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, wake);
    }
  }
}

QueryCanceller::Statement::Statement(QueryCanceller* canceller, DatabaseConnection* connection,
                                     Kind kind)
    : canceller_(canceller), connection_(connection), kind_(kind) {
  if (kind_ == Kind::kQuery && canceller_->cause() != StopCause::kNone) return;
  registered_ = SteadyClock::now();
  {
    std::lock_guard<std::mutex> lock(canceller_->mu_);
    if (kind_ == Kind::kQuery && canceller_->stopped_) return;
    canceller_->running_.push_back(this);
    started_ = true;
  }
  // A clean-up is watched from its start; a query only once the session stops.
  if (kind_ == Kind::kCleanUp) canceller_->wake_.notify_all();
}

void QueryCanceller::Statement::Abandon() {
  if (!started_ || kind_ != Kind::kQuery) return;
  {
    std::lock_guard<std::mutex> lock(canceller_->mu_);
    abandoned_ = true;
    // The first cancel request now, not at the watchdog's next turn: the statement's thread goes
    // on to end the statement, whose end waits for this request's answer (a statement ended
    // before a request was sent would leave its COPY running for the ROLLBACK to read).
    canceller_->CancelWhenDueLocked(this, SteadyClock::now());
  }
  canceller_->wake_.notify_all();
}

QueryCanceller::Statement::~Statement() {
  if (!started_) return;
  std::shared_ptr<SentCancel> last_cancel;
  {
    std::lock_guard<std::mutex> lock(canceller_->mu_);
    std::vector<Statement*>& running = canceller_->running_;
    running.erase(std::find(running.begin(), running.end(), this));
    last_cancel = std::move(last_cancel_);
  }
  if (last_cancel == nullptr || severed_.load()) return;
  // A cancel request delivered after this statement ended would cancel the connection's next
  // one (another export's, once the connection is back in the pool).
  std::unique_lock<std::mutex> lock(last_cancel->mu);
  if (!last_cancel->answered_cv.wait_for(lock, kSeverAfter,
                                         [&] { return last_cancel->answered; })) {
    severed_.store(true);
    connection_->Sever();
  }
}

}  // namespace dvexport::db
