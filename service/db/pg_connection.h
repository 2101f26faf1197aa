#ifndef DVEXPORT_SERVICE_DB_PG_CONNECTION_H_
#define DVEXPORT_SERVICE_DB_PG_CONNECTION_H_

#include <libpq-fe.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace dvexport::db {

struct PgResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// One libpq connection. Not thread-safe, except Cancel(), which may be called
// from any thread while another uses the connection.
class PgConnection {
 public:
  // Connects with a libpq conninfo string (empty: PG* environment variables
  // only). Sets client_encoding to UTF8. Unavailable if the server cannot be
  // reached.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo);

  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs SQL that has no parameters and returns no rows we need.
  absl::Status Exec(const std::string& sql);

  // Runs a parameterized query (text parameters, $1..$n; nullopt is NULL) and
  // returns its tuples. While waiting for the server it calls "cancelled", if
  // given, about every kCancelPollMs; true cancels the query and returns
  // Cancelled.
  absl::StatusOr<PgResult> Query(const std::string& sql,
                                 const std::vector<std::optional<std::string>>& params = {},
                                 const std::function<bool()>& cancelled = nullptr);

  // Starts "COPY (...) TO STDOUT"; read it with ReadCopyData until it
  // returns 0, then call FinishCopy. While waiting for the server (a lock, a
  // slow plan) it calls "cancelled", if given, about every kCancelPollMs and
  // returns Cancelled when it says true; then call CancelAndDrain.
  absl::Status StartCopyOut(const std::string& copy_sql,
                            const std::function<bool()>& cancelled = nullptr);

  // Waits for the next CopyData message. Returns its size and points
  // "*data" at it (valid until the next call); 0 at the end of the copy.
  // Polls "cancelled" like StartCopyOut while no data arrives.
  absl::StatusOr<size_t> ReadCopyData(const char** data,
                                      const std::function<bool()>& cancelled = nullptr);

  // How often a waiting StartCopyOut/ReadCopyData asks "cancelled".
  static constexpr int kCancelPollMs = 50;

  // For an idle connection: reads, without blocking, whatever the server
  // sent meanwhile (a termination notice, the end of the socket). False if
  // the connection turned out to be broken.
  bool StillConnected();

  // Collects the COPY's final result; an error if the statement failed.
  absl::Status FinishCopy();

  // Asks the server to cancel the statement in progress, then drains what is
  // left of it so that the connection can be used again.
  void CancelAndDrain();

  // Asks the server to cancel the statement in progress. Thread-safe.
  void Cancel();

  // False once the connection is broken; such a connection must be dropped.
  bool healthy() const;

  // True if the connection is healthy and outside any transaction, so that
  // the pool may lend it again.
  bool ReadyForReuse() const;

  // What the export needs to know of the database's schema, found once per
  // connection (see ResolveExportScope) and kept for its lifetime.
  struct SchemaFacts {
    // period.iso exists (DHIS2 2.43 and later).
    std::optional<bool> period_has_iso;
  };
  SchemaFacts& schema_facts() { return schema_facts_; }

  // Turns the connection's last error into a Status (Unavailable for a lost
  // connection, DeadlineExceeded for a statement timeout, else Internal).
  absl::Status ErrorStatus(const PGresult* result, const char* what) const;

 private:
  explicit PgConnection(PGconn* conn);

  // Waits until the socket is readable and consumes the input, asking
  // "cancelled" every kCancelPollMs. Cancelled, or an error if the
  // connection broke.
  absl::Status AwaitInput(const std::function<bool()>& cancelled);

  PGconn* conn_;
  PGcancel* cancel_;
  char* copy_buffer_ = nullptr;
  SchemaFacts schema_facts_;
};

// Renders integers as a PostgreSQL array literal: {1,2,3}.
std::string ToArrayLiteral(const std::vector<int64_t>& values);

// Renders strings as a PostgreSQL text[] literal for a bind parameter, with
// every element double-quoted and escaped.
std::string ToTextArrayLiteral(const std::vector<std::string>& values);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_PG_CONNECTION_H_
