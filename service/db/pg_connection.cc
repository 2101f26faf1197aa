#include "service/db/pg_connection.h"

#include <poll.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

// SQLSTATE query_canceled: statement_timeout or an explicit cancel.
constexpr char kQueryCanceled[] = "57014";

std::string TrimmedError(const char* message) {
  std::string s = message != nullptr ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (conn == nullptr) return absl::ResourceExhaustedError("out of memory creating a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = TrimmedError(PQerrorMessage(conn));
    PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("cannot connect to PostgreSQL: ", message));
  }
  if (PQsetClientEncoding(conn, "UTF8") != 0) {
    std::string message = TrimmedError(PQerrorMessage(conn));
    PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("cannot set client_encoding UTF8: ", message));
  }
  return std::unique_ptr<PgConnection>(new PgConnection(conn));
}

PgConnection::PgConnection(PGconn* conn) : conn_(conn), cancel_(PQgetCancel(conn)) {}

PgConnection::~PgConnection() {
  if (copy_buffer_ != nullptr) PQfreemem(copy_buffer_);
  if (cancel_ != nullptr) PQfreeCancel(cancel_);
  PQfinish(conn_);
}

bool PgConnection::healthy() const { return PQstatus(conn_) == CONNECTION_OK; }

bool PgConnection::ReadyForReuse() const {
  return healthy() && PQtransactionStatus(conn_) == PQTRANS_IDLE;
}

absl::Status PgConnection::ErrorStatus(const PGresult* result, const char* what) const {
  std::string message =
      TrimmedError(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  if (message.empty()) message = TrimmedError(PQerrorMessage(conn_));
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string text = absl::StrCat(what, ": ", message);
  if (!healthy()) return absl::UnavailableError(absl::StrCat("database connection lost: ", text));
  if (state != nullptr && std::strcmp(state, kQueryCanceled) == 0) {
    return absl::DeadlineExceededError(text);
  }
  // Class 08: connection exception; 57P0x: server shutting down or crashed.
  if (state != nullptr && (std::strncmp(state, "08", 2) == 0 || std::strncmp(state, "57P", 3) == 0)) {
    return absl::UnavailableError(text);
  }
  return absl::InternalError(text);
}

absl::Status PgConnection::Exec(const std::string& sql) {
  PgResult result(PQexec(conn_, sql.c_str()));
  ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return ErrorStatus(result.get(), "statement failed");
  }
  return absl::OkStatus();
}

absl::StatusOr<PgResult> PgConnection::Query(const std::string& sql,
                                             const std::vector<std::optional<std::string>>& params,
                                             const std::function<bool()>& cancelled) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  if (PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                        values.data(), nullptr, nullptr, 0) == 0) {
    return ErrorStatus(nullptr, "query failed");
  }
  while (PQisBusy(conn_)) {
    absl::Status status = AwaitInput(cancelled);
    if (!status.ok()) {
      Cancel();
      while (PGresult* raw = PQgetResult(conn_)) PQclear(raw);
      return status;
    }
  }
  PgResult result(PQgetResult(conn_));
  // Collect the rest so that the connection is ready for the next command.
  while (PGresult* raw = PQgetResult(conn_)) PQclear(raw);
  if (PQresultStatus(result.get()) != PGRES_TUPLES_OK) {
    return ErrorStatus(result.get(), "query failed");
  }
  return result;
}

absl::Status PgConnection::AwaitInput(const std::function<bool()>& cancelled) {
  while (true) {
    if (cancelled != nullptr && cancelled()) {
      return absl::CancelledError("the export was cancelled while waiting for the database");
    }
    pollfd fd{PQsocket(conn_), POLLIN, 0};
    if (fd.fd < 0) return ErrorStatus(nullptr, "waiting for the database");
    int ready = poll(&fd, 1, cancelled != nullptr ? kCancelPollMs : -1);
    if (ready < 0 && errno != EINTR) return ErrorStatus(nullptr, "waiting for the database");
    if (ready > 0) {
      if (PQconsumeInput(conn_) == 0) return ErrorStatus(nullptr, "reading from the database");
      return absl::OkStatus();
    }
  }
}

absl::Status PgConnection::StartCopyOut(const std::string& copy_sql,
                                        const std::function<bool()>& cancelled) {
  if (PQsendQuery(conn_, copy_sql.c_str()) == 0) {
    return ErrorStatus(nullptr, "COPY failed to start");
  }
  while (PQisBusy(conn_)) {
    absl::Status status = AwaitInput(cancelled);
    if (!status.ok()) return status;
  }
  PgResult result(PQgetResult(conn_));
  if (PQresultStatus(result.get()) != PGRES_COPY_OUT) {
    absl::Status status = ErrorStatus(result.get(), "COPY failed to start");
    // Collect the rest so that the connection is ready for the next command.
    while (PGresult* raw = PQgetResult(conn_)) PQclear(raw);
    return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> PgConnection::ReadCopyData(const char** data,
                                                  const std::function<bool()>& cancelled) {
  if (copy_buffer_ != nullptr) {
    PQfreemem(copy_buffer_);
    copy_buffer_ = nullptr;
  }
  while (true) {
    int n = PQgetCopyData(conn_, &copy_buffer_, 1);
    if (n > 0) {
      *data = copy_buffer_;
      return static_cast<size_t>(n);
    }
    if (n == -1) return 0;  // The copy is done; FinishCopy tells how it ended.
    if (n < -1) return ErrorStatus(nullptr, "reading COPY data");
    absl::Status status = AwaitInput(cancelled);
    if (!status.ok()) return status;
  }
}

bool PgConnection::StillConnected() {
  pollfd fd{PQsocket(conn_), POLLIN, 0};
  if (fd.fd < 0) return false;
  if (poll(&fd, 1, 0) > 0 && PQconsumeInput(conn_) == 0) return false;
  return healthy();
}

absl::Status PgConnection::FinishCopy() {
  absl::Status status = absl::OkStatus();
  while (PGresult* raw = PQgetResult(conn_)) {
    PgResult result(raw);
    if (status.ok() && PQresultStatus(raw) != PGRES_COMMAND_OK) {
      status = ErrorStatus(raw, "COPY failed");
    }
  }
  if (status.ok() && !healthy()) status = ErrorStatus(nullptr, "COPY failed");
  return status;
}

void PgConnection::Cancel() {
  if (cancel_ == nullptr) return;
  char errbuf[256];
  PQcancel(cancel_, errbuf, sizeof(errbuf));
}

void PgConnection::CancelAndDrain() {
  Cancel();
  if (copy_buffer_ != nullptr) {
    PQfreemem(copy_buffer_);
    copy_buffer_ = nullptr;
  }
  // Whatever the server had sent before it saw the cancel is read and thrown
  // away; the copy then ends with an error result. A COPY cancelled while it
  // was starting may still turn into one: libpq then returns a COPY_OUT result
  // at every PQgetResult until its data are read, so read them.
  while (true) {
    char* buffer = nullptr;
    while (PQgetCopyData(conn_, &buffer, 0) > 0) PQfreemem(buffer);
    PGresult* raw = PQgetResult(conn_);
    if (raw == nullptr) break;
    const ExecStatusType status = PQresultStatus(raw);
    PQclear(raw);
    if (status == PGRES_COPY_OUT) continue;
    // Not ours to finish, or nothing left to read: the connection is left busy or
    // broken, and the pool drops it (ReadyForReuse).
    if (status == PGRES_COPY_IN || status == PGRES_COPY_BOTH || !healthy()) break;
  }
}

std::string ToArrayLiteral(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    absl::StrAppend(&out, values[i]);
  }
  out += '}';
  return out;
}

std::string ToTextArrayLiteral(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

}  // namespace dvexport::db
