#ifndef DVEXPORT_SERVICE_DB_QUERY_CANCELLER_H_
#define DVEXPORT_SERVICE_DB_QUERY_CANCELLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "service/db/connection_pool.h"
#include "service/db/database_error.h"

namespace dvexport::db {

// The watchdog of one session's statements: once Cancel() was called or the
// deadline has passed, its thread has every statement that runs cancelled
// (the connection's CancelRequest) every kRepeat until it ends, since a cancel
// that reaches the server just before the statement starts is lost; and no
// new statement may start.
//
// A cancel request opens a connection of its own to the server and, in libpq
// 15, waits for it without a timeout: on a database that went silent (a hung
// host, a silent network, a reader queued inside PgBouncer) it never comes
// back. So each is sent from a detached thread of its own, which owns all it
// uses and is never waited for (at most kMaxCancelsInFlight at once in the
// process; one per statement); and a statement still running kSeverAfter
// after its first cancel request has its connection severed
// (DatabaseConnection::Sever): its blocked read fails at once, and the pool
// drops the connection. The watchdog itself never blocks on the database, so
// nothing that waits for it (Cancel, a statement's end, the destructor) does.
// Thread-safe.
class QueryCanceller {
 public:
  static constexpr std::chrono::milliseconds kRepeat{50};
  static constexpr std::chrono::milliseconds kSeverAfter{1000};
  static constexpr int kMaxCancelsInFlight = 32;

  // "deadline": system_clock::time_point::max() for none.
  explicit QueryCanceller(std::chrono::system_clock::time_point deadline);
  // Stops the watchdog thread. No statement may still be running.
  ~QueryCanceller();

  QueryCanceller(const QueryCanceller&) = delete;
  QueryCanceller& operator=(const QueryCanceller&) = delete;

  void Cancel();

  // kCancelled after Cancel(), kDeadline once the deadline has passed (the
  // first of the two wins), else kNone.
  StopCause cause() const;

  // Cancelled or DeadlineExceeded as cause() says; OK while kNone.
  absl::Status StopStatus(absl::string_view what) const;

  std::chrono::system_clock::time_point deadline() const { return deadline_; }

  // Connections this watchdog has severed so far.
  int severed() const;

  // Cancel requests of the whole process still waiting for their server.
  static int cancels_in_flight();

  // A cancel request on its way, shared by its sender and its statement.
  struct SentCancel {
    std::mutex mu;
    std::condition_variable answered_cv;
    bool answered ABSL_GUARDED_BY(mu) = false;
  };

  enum class Kind {
    // Runs only before the stop; cancelled at the stop, severed kSeverAfter
    // after its first cancel request.
    kQuery,
    // Ends a transaction after a failure or the stop (ROLLBACK): runs even
    // after the stop, is never cancelled, and is severed if it still runs
    // kSeverAfter after it started or after the stop, whichever is later.
    kCleanUp,
  };

  // While alive, the statements run on "*connection" are watched as "kind"
  // says. started() is false, and nothing is registered, for a kQuery once
  // the session has stopped: then run nothing. The connection must outlive it.
  // Its destructor waits (at most kSeverAfter) for a cancel request still on
  // its way, which could otherwise cancel the connection's next statement;
  // one that is still not answered then has the connection severed.
  class Statement {
   public:
    Statement(QueryCanceller* canceller, DatabaseConnection* connection, Kind kind = Kind::kQuery);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    bool started() const { return started_; }
    // The watchdog severed the connection: what failed on it failed because
    // the session stopped (or the clean-up took too long).
    bool severed() const { return severed_.load(); }
    // Its caller wants no more of a kQuery's result (a COPY whose consumer
    // stopped): from now on it is treated as after the session's stop, alone:
    // a cancel request at once (from a detached sender), then every kRepeat
    // from the watchdog, and the connection severed kSeverAfter after the
    // first if it still runs. Never blocks (a cancel request waits without a
    // timeout on a silent database). From any thread while the statement
    // lives; nothing for a statement that did not start.
    void Abandon();

   private:
    friend class QueryCanceller;
    QueryCanceller* const canceller_;
    DatabaseConnection* const connection_;
    const Kind kind_;
    bool started_ = false;
    std::chrono::steady_clock::time_point registered_;
    // The watchdog's, under canceller_->mu_: its first and next cancel
    // request, and the last one sent.
    std::optional<std::chrono::steady_clock::time_point> first_cancel_;
    std::chrono::steady_clock::time_point next_cancel_;
    std::shared_ptr<SentCancel> last_cancel_;
    // Abandon() was called; under canceller_->mu_.
    bool abandoned_ = false;
    std::atomic<bool> severed_{false};
  };

 private:
  void Run();
  // Sets cause_ to "cause" unless it is set already.
  void Stop(StopCause cause);
  void StopLocked(StopCause cause) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends "statement"'s cancel request from a detached thread, unless one is
  // still waiting or too many are in the process.
  void SendCancelLocked(Statement* statement) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // For a statement being cancelled: its first cancel request at once, later ones every
  // kRepeat (SendCancelLocked); returns when the next one is due.
  std::chrono::steady_clock::time_point CancelWhenDueLocked(
      Statement* statement, std::chrono::steady_clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::chrono::system_clock::time_point deadline_;
  std::atomic<StopCause> cause_{StopCause::kNone};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  // Statements running; a connection is severed with mu_ held, so that none
  // is destroyed meanwhile.
  std::vector<Statement*> running_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point stopped_at_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  int severed_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_QUERY_CANCELLER_H_
