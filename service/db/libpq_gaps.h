#ifndef DVEXPORT_SERVICE_DB_LIBPQ_GAPS_H_
#define DVEXPORT_SERVICE_DB_LIBPQ_GAPS_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// What libpqxx 6.4 cannot do, done with libpq (in libpq_gaps.cc, the only file
// of dvexport that includes libpq-fe.h).

extern "C" {
struct pg_conn;
struct pg_cancel;
}

namespace dvexport::db {

// What cancels the statement one connection's backend runs (libpq's PGcancel:
// the server's address, the backend's pid and secret key), taken from the
// connection once and usable without it: from any thread, also after the
// connection is gone.
class CancelRequest {
 public:
  // No I/O. Null if libpq has none for "conn" (not connected).
  static std::unique_ptr<CancelRequest> For(pg_conn* conn);
  ~CancelRequest();
  CancelRequest(const CancelRequest&) = delete;
  CancelRequest& operator=(const CancelRequest&) = delete;

  // Sends the request on a new connection to the server and waits until the
  // server closes it. libpq 15's PQcancel has no timeout: on a database that
  // accepts TCP and never answers this returns only when the peer closes the
  // connection (or keepalives give up). True if the server took the request.
  bool Send() const;

 private:
  explicit CancelRequest(pg_cancel* cancel) : cancel_(cancel) {}
  pg_cancel* const cancel_;
};

// InvalidArgument if "conninfo" is not a libpq connection string (keyword=value
// pairs or a postgresql:// URI), without libpq's message: it quotes the
// offending text, which may be a password.
absl::Status CheckConninfo(const std::string& conninfo);

// "conninfo" with dvexport's defaults for what it leaves unset (and the PG*
// environment does not set): connect_timeout=10 (without one a silent
// database hangs a connect forever) and TCP keepalives (a peer that vanished
// is noticed within about a minute). The result is keyword=value pairs.
absl::StatusOr<std::string> WithConnectionDefaults(const std::string& conninfo);

// How ConnectWithin ended.
enum class ConnectEnd {
  kConnected,
  kFailed,    // libpq gave up: refused, unknown host, authentication, no connection left, ...
  kTimedOut,  // the conninfo's connect_timeout or the caller's deadline passed first
  kStopped,   // the caller's "stopped" returned true first
};

struct ConnectResult {
  ConnectEnd end = ConnectEnd::kFailed;
  // The connection (kConnected only), the caller's to close (PQfinish).
  pg_conn* conn = nullptr;
  // Why not, for the server log and exception texts that ConnectFailedStatus
  // maps: libpq's message names the host and user, so no client sees it.
  std::string message;
};

// Connects to "conninfo" (as given: no defaults are added) on libpq's
// non-blocking API, giving up at "deadline", once the conninfo's
// connect_timeout (PG* environment included; as libpq counts it: 1 is 2, 0 or
// less is none) has passed since the start of the whole connect, or as soon as
// "stopped" returns true (asked every 50 ms), whichever comes first: a database
// that accepts TCP and never answers cannot hold the caller longer. Closes
// what it started unless it connected. Not bounded: looking up a host name,
// which libpq does blocking.
ConnectResult ConnectWithin(const std::string& conninfo,
                            std::chrono::steady_clock::time_point deadline,
                            const std::function<bool()>& stopped);

// Connects to "conninfo" (with its defaults: WithConnectionDefaults) and runs
// SELECT 1, all on libpq's non-blocking API (ConnectWithin, then the query),
// giving up at "deadline" or as soon as "stopped" returns true (asked every
// 50 ms): a database that accepts TCP and never answers cannot hold the caller
// longer. The connection is closed afterwards, without a cancel request
// (which would wait on the silent server again). Unavailable naming the step
// that failed or timed out; libpq's message (host, user) goes to stderr only.
absl::Status ProbeDatabase(const std::string& conninfo,
                           std::chrono::steady_clock::time_point deadline,
                           const std::function<bool()>& stopped);

// A logical replication slot just created, with its snapshot exported, on a replication
// connection of its own (libpqxx 6.4 opens none): CREATE_REPLICATION_SLOT ... LOGICAL
// EXPORT_SNAPSHOT. The snapshot is the database as of the slot's consistent point: a transaction
// may import it (SET TRANSACTION SNAPSHOT) while this object lives. Destroying it closes the
// connection; the slot stays.
class SlotWithSnapshot {
 public:
  // Creates slot "slot_name" (a name dvexport made, never a caller's text) with output plugin
  // "plugin" on "conninfo" (dvexport's pool conninfo; replication=database is added), on libpq's
  // non-blocking API: PostgreSQL waits for the transactions running at the start to end before
  // the slot is consistent, so the wait ends at "deadline" or when "stopped" returns true
  // (asked every 50 ms), with DeadlineExceeded or Cancelled; the creation is then cancelled on
  // the server. FailedPrecondition with PostgreSQL's message when it refuses (no privilege,
  // wal_level, no slot left); Unavailable when the connection fails (libpq's message, which names
  // the host and user, goes to stderr only).
  static absl::StatusOr<std::unique_ptr<SlotWithSnapshot>> Create(
      const std::string& conninfo, const std::string& slot_name, const std::string& plugin,
      std::chrono::steady_clock::time_point deadline, const std::function<bool()>& stopped);
  ~SlotWithSnapshot();
  SlotWithSnapshot(const SlotWithSnapshot&) = delete;
  SlotWithSnapshot& operator=(const SlotWithSnapshot&) = delete;

  // The slot's consistent point: its stream starts with the transactions committed after it.
  uint64_t consistent_lsn() const { return consistent_lsn_; }
  // For SET TRANSACTION SNAPSHOT.
  const std::string& snapshot_name() const { return snapshot_name_; }

 private:
  SlotWithSnapshot(pg_conn* conn, uint64_t lsn, std::string snapshot)
      : conn_(conn), consistent_lsn_(lsn), snapshot_name_(std::move(snapshot)) {}
  pg_conn* const conn_;
  const uint64_t consistent_lsn_;
  const std::string snapshot_name_;
};

// Drops replication slot "slot_name" (a name dvexport made) on a replication connection of its
// own (DROP_REPLICATION_SLOT, not waiting for a slot in use), giving up at "deadline". OK when the
// slot is gone (also when it was not there).
absl::Status DropReplicationSlot(const std::string& conninfo, const std::string& slot_name,
                                 std::chrono::steady_clock::time_point deadline);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_LIBPQ_GAPS_H_
