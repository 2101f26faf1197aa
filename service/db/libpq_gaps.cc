// The only file of dvexport that uses libpq directly, for what libpqxx 6.4
// cannot do.

#include "service/db/libpq_gaps.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "service/db/database_error.h"

namespace dvexport::db {
namespace {

struct ConninfoOptionsDeleter {
  // libpq: PQconninfoParse's result is freed with PQconninfoFree.
  void operator()(PQconninfoOption* options) const { PQconninfoFree(options); }
};
using ConninfoOptions = std::unique_ptr<PQconninfoOption, ConninfoOptionsDeleter>;

// libpq: PQconninfoParse is the only parser of conninfo strings and URIs; libpqxx 6.4 has none.
ConninfoOptions Parse(const std::string& conninfo) {
  char* error = nullptr;
  ConninfoOptions options(PQconninfoParse(conninfo.c_str(), &error));
  // libpq: its message is freed with PQfreemem, unread (it may quote a password).
  if (error != nullptr) PQfreemem(error);
  return options;
}

absl::Status InvalidConninfo() {
  return absl::InvalidArgumentError(
      "the connection string is not a valid libpq conninfo (keyword=value pairs or a "
      "postgresql:// URI; quote values holding spaces as 'a b'); libpq's message is not shown "
      "because it may quote a password");
}

struct Default {
  const char* keyword;
  const char* environment;  // the PG* variable that sets it, or null
  const char* value;
};

constexpr Default kDefaults[] = {
    {"connect_timeout", "PGCONNECT_TIMEOUT", "10"},
    {"keepalives", nullptr, "1"},
    {"keepalives_idle", nullptr, "30"},
    {"keepalives_interval", nullptr, "10"},
    {"keepalives_count", nullptr, "3"},
};

void AppendQuoted(std::string_view value, std::string* out) {
  *out += '\'';
  for (char c : value) {
    if (c == '\'' || c == '\\') *out += '\\';
    *out += c;
  }
  *out += '\'';
}

struct ConnectionDeleter {
  // libpq: a PGconn is closed and freed with PQfinish.
  void operator()(PGconn* conn) const { PQfinish(conn); }
};

enum class Wait { kReady, kTimedOut, kStopped, kFailed };

// Waits until "conn"'s socket is readable ("read") or writable, "deadline" passes, "stopped" says
// so (asked every 50 ms) or poll(2) fails.
Wait WaitForSocket(PGconn* conn, bool read, std::chrono::steady_clock::time_point deadline,
                   const std::function<bool()>& stopped) {
  constexpr std::chrono::milliseconds kSlice{50};
  while (true) {
    if (stopped()) return Wait::kStopped;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Wait::kTimedOut;
    // libpq: PQsocket is the socket of a connection being made, which libpqxx 6.4 shows only
    // once it is made; it can change while libpq tries the next address or host.
    pollfd fd = {PQsocket(conn), static_cast<short>(read ? POLLIN : POLLOUT), 0};
    const int ready = poll(&fd, 1, static_cast<int>(std::min(left, kSlice).count()));
    if (ready > 0) return Wait::kReady;
    if (ready < 0 && errno != EINTR) return Wait::kFailed;
  }
}

// The connect_timeout "conn" uses (its conninfo's, else PGCONNECT_TIMEOUT's), in seconds as
// libpq's blocking connect counts it: 0 for none, at least 2 otherwise; -1 if it is not an
// integer.
int ConnectTimeoutSeconds(PGconn* conn) {
  // libpq: PQconninfo shows the options a connection uses, the PG* environment's included;
  // libpqxx 6.4 shows none. PQconnectPoll does not enforce connect_timeout (only PQconnectdb
  // does), so the caller must.
  ConninfoOptions options(PQconninfo(conn));
  for (const PQconninfoOption* o = options.get(); o != nullptr && o->keyword != nullptr; ++o) {
    if (std::string_view(o->keyword) != "connect_timeout" || o->val == nullptr) continue;
    // As libpq's parse_int_param: an integer, with white space around it.
    errno = 0;
    char* end = nullptr;
    const long value = std::strtol(o->val, &end, 10);
    if (end == o->val || errno == ERANGE || value > std::numeric_limits<int>::max() ||
        value < std::numeric_limits<int>::min()) {
      return -1;
    }
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
    if (*end != '\0') return -1;
    if (value <= 0) return 0;
    return std::max(2, static_cast<int>(value));
  }
  return 0;
}

}  // namespace

ConnectResult ConnectWithin(const std::string& conninfo,
                            std::chrono::steady_clock::time_point deadline,
                            const std::function<bool()>& stopped) {
  const auto start = std::chrono::steady_clock::now();
  ConnectResult result;
  // libpq: PQconnectStart begins a connection without waiting for the server; libpqxx 6.4 has
  // only PQconnectdb (connect_direct), which nothing but connect_timeout ends.
  std::unique_ptr<PGconn, ConnectionDeleter> conn(PQconnectStart(conninfo.c_str()));
  if (conn == nullptr) {
    result.message = "out of memory";
    return result;
  }
  // libpq: PQstatus and PQerrorMessage of a connection libpqxx 6.4 does not have yet.
  if (PQstatus(conn.get()) == CONNECTION_BAD) {
    result.message = PQerrorMessage(conn.get());
    return result;
  }
  const int timeout_s = ConnectTimeoutSeconds(conn.get());
  if (timeout_s < 0) {
    result.message = "invalid integer value for connection option \"connect_timeout\"";
    return result;
  }
  auto give_up = deadline;
  if (timeout_s > 0) give_up = std::min(give_up, start + std::chrono::seconds(timeout_s));
  // As libpq's documentation says: the first wait is for the socket to be writable.
  PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
  while (polling != PGRES_POLLING_OK) {
    if (polling == PGRES_POLLING_FAILED) {
      result.message = PQerrorMessage(conn.get());
      return result;
    }
    switch (WaitForSocket(conn.get(), polling == PGRES_POLLING_READING, give_up, stopped)) {
      case Wait::kReady:
        break;
      case Wait::kStopped:
        result.end = ConnectEnd::kStopped;
        result.message = "the connection attempt was stopped by its caller";
        return result;
      case Wait::kTimedOut:
        result.end = ConnectEnd::kTimedOut;
        result.message = give_up < deadline
                             ? absl::StrCat("timeout expired: no answer within connect_timeout (",
                                            timeout_s, " s)")
                             : "the database did not answer the connection in time";
        return result;
      case Wait::kFailed:
        result.message = absl::StrCat("poll(2) failed while connecting: errno ", errno);
        return result;
    }
    // libpq: PQconnectPoll advances the connection as far as the socket allows, without
    // blocking on it.
    polling = PQconnectPoll(conn.get());
  }
  result.end = ConnectEnd::kConnected;
  result.conn = conn.release();
  return result;
}

absl::Status ProbeDatabase(const std::string& conninfo,
                           std::chrono::steady_clock::time_point deadline,
                           const std::function<bool()>& stopped) {
  absl::StatusOr<std::string> full = WithConnectionDefaults(conninfo);
  if (!full.ok()) return full.status();
  ConnectResult connected = ConnectWithin(*full, deadline, stopped);
  if (connected.end == ConnectEnd::kFailed) return ConnectFailedStatus(connected.message);
  if (connected.end != ConnectEnd::kConnected) {
    return absl::UnavailableError("the database did not answer the connection in time");
  }
  std::unique_ptr<PGconn, ConnectionDeleter> conn(connected.conn);
  // libpq: PQsendQuery, then PQconsumeInput while PQisBusy, never blocks on a non-blocking
  // connection's reads.
  if (PQsetnonblocking(conn.get(), 1) != 0 || PQsendQuery(conn.get(), "SELECT 1") == 0) {
    return absl::UnavailableError("the database connection failed while probing");
  }
  while (PQflush(conn.get()) == 1) {
    if (WaitForSocket(conn.get(), /*read=*/false, deadline, stopped) != Wait::kReady) {
      return absl::UnavailableError("the database did not take the probe in time");
    }
  }
  while (PQisBusy(conn.get()) == 1) {
    if (WaitForSocket(conn.get(), /*read=*/true, deadline, stopped) != Wait::kReady) {
      return absl::UnavailableError("the database did not answer SELECT 1 in time");
    }
    if (PQconsumeInput(conn.get()) == 0) {
      return absl::UnavailableError("the database connection failed while probing");
    }
  }
  bool ok = false;
  // libpq: every PGresult is freed with PQclear; PQgetResult returns null after the last.
  while (PGresult* result = PQgetResult(conn.get())) {
    ok = ok || PQresultStatus(result) == PGRES_TUPLES_OK;
    PQclear(result);
  }
  if (!ok) return absl::UnavailableError("the database refused SELECT 1");
  // Terminate (the protocol's 'X' message), then wait for the server to close the connection:
  // once it has, the backend is gone, and a pool that counts the probe against its size never
  // has more backends than that. Bounded like the rest.
  constexpr char kTerminate[] = {'X', 0, 0, 0, 4};
  if (send(PQsocket(conn.get()), kTerminate, sizeof(kTerminate), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(sizeof(kTerminate))) {
    char byte;
    while (WaitForSocket(conn.get(), /*read=*/true, deadline, stopped) == Wait::kReady &&
           recv(PQsocket(conn.get()), &byte, 1, 0) > 0) {
    }
  }
  return absl::OkStatus();
}

namespace {

// "X/Y" as PostgreSQL writes an LSN; false for anything else.
bool ParseLsn(std::string_view text, uint64_t* lsn) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) return false;
  uint64_t high = 0, low = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == slash) continue;
    const char c = text[i];
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return false;
    }
    uint64_t& part = i < slash ? high : low;
    if (part > 0x0FFFFFFFu) return false;
    part = part << 4 | static_cast<uint64_t>(digit);
  }
  *lsn = high << 32 | low;
  return true;
}

// Sends "command" on the non-blocking "conn" and waits until its results have all arrived
// (PQgetResult then does not block), "deadline" passes or "stopped" says so.
Wait SendAndAwait(PGconn* conn, const std::string& command,
                  std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& stopped) {
  if (PQsetnonblocking(conn, 1) != 0 || PQsendQuery(conn, command.c_str()) == 0) {
    return Wait::kFailed;
  }
  Wait waited = Wait::kReady;
  while (waited == Wait::kReady && PQflush(conn) == 1) {
    waited = WaitForSocket(conn, /*read=*/false, deadline, stopped);
  }
  while (waited == Wait::kReady && PQisBusy(conn) == 1) {
    waited = WaitForSocket(conn, /*read=*/true, deadline, stopped);
    if (waited == Wait::kReady && PQconsumeInput(conn) == 0) waited = Wait::kFailed;
  }
  return waited;
}

// A replication connection (replication=database) to "conninfo", bounded like ConnectWithin.
absl::StatusOr<std::unique_ptr<PGconn, ConnectionDeleter>> ConnectForReplication(
    const std::string& conninfo, std::chrono::steady_clock::time_point deadline,
    const std::function<bool()>& stopped) {
  absl::StatusOr<std::string> full = WithConnectionDefaults(conninfo);
  if (!full.ok()) return full.status();
  ConnectResult connected = ConnectWithin(*full + " replication=database", deadline, stopped);
  if (connected.end == ConnectEnd::kFailed) return ConnectFailedStatus(connected.message);
  if (connected.end == ConnectEnd::kStopped) {
    return absl::CancelledError("the replication connection was cancelled");
  }
  if (connected.end != ConnectEnd::kConnected) {
    return absl::DeadlineExceededError(
        "the database did not answer the replication connection in time");
  }
  return std::unique_ptr<PGconn, ConnectionDeleter>(connected.conn);
}

// The primary message of the failed result among "conn"'s results (all read), or empty.
std::string ErrorOfResults(PGconn* conn) {
  std::string error;
  while (PGresult* result = PQgetResult(conn)) {
    if (PQresultStatus(result) == PGRES_FATAL_ERROR && error.empty()) {
      const char* message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
      error = message != nullptr && *message != '\0' ? message : "refused";
    }
    PQclear(result);
  }
  return error;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SlotWithSnapshot>> SlotWithSnapshot::Create(
    const std::string& conninfo, const std::string& slot_name, const std::string& plugin,
    std::chrono::steady_clock::time_point deadline, const std::function<bool()>& stopped) {
  absl::StatusOr<std::unique_ptr<PGconn, ConnectionDeleter>> conn =
      ConnectForReplication(conninfo, deadline, stopped);
  if (!conn.ok()) {
    return absl::Status(conn.status().code(), absl::StrCat("creating the change stream's slot: ",
                                                           conn.status().message()));
  }
  // The replication protocol's command (the form PostgreSQL 10+ understands); both names are
  // dvexport's own ([a-z0-9_]).
  const Wait waited = SendAndAwait(
      conn->get(),
      absl::StrCat("CREATE_REPLICATION_SLOT ", slot_name, " LOGICAL ", plugin, " EXPORT_SNAPSHOT"),
      deadline, stopped);
  if (waited != Wait::kReady) {
    // The walsender waits for running transactions: cancel it, so that no slot is left behind
    // once they end (PQcancel opens a connection of its own; the server is alive, it answered
    // the connect).
    if (std::unique_ptr<CancelRequest> cancel = CancelRequest::For(conn->get())) cancel->Send();
    if (waited == Wait::kStopped) {
      return absl::CancelledError("creating the change stream's slot: cancelled");
    }
    if (waited == Wait::kTimedOut) {
      return absl::DeadlineExceededError(
          "creating the change stream's slot: transactions that were running when it began did "
          "not end in time");
    }
    return absl::UnavailableError("creating the change stream's slot: the connection failed");
  }
  absl::Status status =
      absl::UnavailableError("creating the change stream's slot: the server answered nothing");
  uint64_t lsn = 0;
  std::string snapshot;
  while (PGresult* result = PQgetResult(conn->get())) {
    if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1 &&
        PQnfields(result) >= 3 && ParseLsn(PQgetvalue(result, 0, 1), &lsn) &&
        !PQgetisnull(result, 0, 2)) {
      snapshot = PQgetvalue(result, 0, 2);
      status = absl::OkStatus();
    } else if (PQresultStatus(result) == PGRES_FATAL_ERROR) {
      // The server's refusal ("permission denied to create replication slot", "logical decoding
      // requires wal_level >= logical", "all replication slots are in use") names no secret.
      const char* message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
      status = absl::FailedPreconditionError(
          absl::StrCat("creating the change stream's slot: ", message ? message : "refused"));
    }
    PQclear(result);
  }
  if (!status.ok()) return status;
  return std::unique_ptr<SlotWithSnapshot>(
      new SlotWithSnapshot(conn->release(), lsn, std::move(snapshot)));
}

absl::Status DropReplicationSlot(const std::string& conninfo, const std::string& slot_name,
                                 std::chrono::steady_clock::time_point deadline) {
  const std::function<bool()> never = [] { return false; };
  absl::StatusOr<std::unique_ptr<PGconn, ConnectionDeleter>> conn =
      ConnectForReplication(conninfo, deadline, never);
  if (!conn.ok()) return conn.status();
  // Not WAIT: a slot still in use is left for its user's own drop, never waited for.
  const Wait waited =
      SendAndAwait(conn->get(), absl::StrCat("DROP_REPLICATION_SLOT ", slot_name), deadline, never);
  if (waited != Wait::kReady) {
    return absl::DeadlineExceededError(absl::StrCat("dropping slot ", slot_name, ": no answer"));
  }
  const std::string error = ErrorOfResults(conn->get());
  if (!error.empty() && error.find("does not exist") == std::string::npos) {
    return absl::FailedPreconditionError(absl::StrCat("dropping slot ", slot_name, ": ", error));
  }
  return absl::OkStatus();
}

SlotWithSnapshot::~SlotWithSnapshot() { PQfinish(conn_); }

std::unique_ptr<CancelRequest> CancelRequest::For(pg_conn* conn) {
  // libpq: PQgetCancel copies what a cancel needs out of a connected PGconn, without I/O.
  PGcancel* cancel = conn == nullptr ? nullptr : PQgetCancel(conn);
  if (cancel == nullptr) return nullptr;
  return std::unique_ptr<CancelRequest>(new CancelRequest(cancel));
}

// libpq: a PGcancel is freed with PQfreeCancel.
CancelRequest::~CancelRequest() { PQfreeCancel(cancel_); }

bool CancelRequest::Send() const {
  // libpq: PQcancel only reads the PGcancel, so concurrent calls on one are safe; its message
  // (the server's address) is not needed: the statement's own outcome tells the rest.
  char message[256];
  return PQcancel(cancel_, message, sizeof(message)) == 1;
}

absl::Status CheckConninfo(const std::string& conninfo) {
  return Parse(conninfo) == nullptr ? InvalidConninfo() : absl::OkStatus();
}

absl::StatusOr<std::string> WithConnectionDefaults(const std::string& conninfo) {
  ConninfoOptions options = Parse(conninfo);
  if (options == nullptr) return InvalidConninfo();
  // The parsed options, keyword=value: a URI cannot take more pairs appended.
  std::string out;
  auto append = [&out](std::string_view keyword, std::string_view value) {
    if (!out.empty()) out += ' ';
    out.append(keyword).append("=");
    AppendQuoted(value, &out);
  };
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->val != nullptr) append(o->keyword, o->val);
  }
  for (const Default& d : kDefaults) {
    bool set = d.environment != nullptr && std::getenv(d.environment) != nullptr;
    for (const PQconninfoOption* o = options.get(); o->keyword != nullptr && !set; ++o) {
      set = o->val != nullptr && std::string_view(o->keyword) == d.keyword;
    }
    if (!set) append(d.keyword, d.value);
  }
  return out;
}

}  // namespace dvexport::db
