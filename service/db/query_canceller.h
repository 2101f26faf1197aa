#ifndef DVEXPORT_SERVICE_DB_QUERY_CANCELLER_H_
#define DVEXPORT_SERVICE_DB_QUERY_CANCELLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "service/db/database_error.h"

namespace pqxx {
class connection_base;
}

namespace dvexport::db {

// The watchdog of one session's statements: once Cancel() was called or the
// deadline has passed, its thread cancels every statement that runs
// (connection::cancel_query) every kRepeat until it ends, since a cancel that
// reaches the server just before the statement starts is lost; and no new
// statement may start. Thread-safe.
class QueryCanceller {
 public:
  static constexpr std::chrono::milliseconds kRepeat{50};

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

  // While alive, the statements run on "*connection" are cancelled when the
  // session stops. started() is false, and nothing is registered, if it has
  // stopped already: then run nothing. The connection must outlive it.
  class Statement {
   public:
    Statement(QueryCanceller* canceller, pqxx::connection_base* connection);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    bool started() const { return started_; }

   private:
    QueryCanceller* canceller_;
    pqxx::connection_base* connection_;
    bool started_;
  };

 private:
  void Run();
  // Sets cause_ to "cause" unless it is set already.
  void Stop(StopCause cause);

  const std::chrono::system_clock::time_point deadline_;
  std::atomic<StopCause> cause_{StopCause::kNone};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  // Connections with a statement running; cancel_query is called with mu_
  // held, so that none is destroyed meanwhile.
  std::vector<pqxx::connection_base*> running_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_QUERY_CANCELLER_H_
