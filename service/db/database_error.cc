#include "service/db/database_error.h"

#include <cstdio>
#include <exception>
#include <pqxx/except>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

// The first line of a server message, without "ERROR:  ".
std::string PrimaryMessage(std::string_view message) {
  message = message.substr(0, message.find('\n'));
  for (std::string_view prefix : {"ERROR:  ", "FATAL:  "}) {
    if (message.substr(0, prefix.size()) == prefix) message.remove_prefix(prefix.size());
  }
  return std::string(message);
}

// A message for a log line as a JSON string's contents.
std::string JsonEscaped(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out;
}

// The server's log keeps what the client is not told: the database's own message.
void LogDatabaseError(absl::string_view event, absl::string_view what, absl::string_view sqlstate,
                      absl::string_view detail) {
  std::fprintf(stderr, "{\"event\":\"%s\",\"what\":\"%s\",\"sqlstate\":\"%s\",\"detail\":\"%s\"}\n",
               std::string(event).c_str(), JsonEscaped(what).c_str(), JsonEscaped(sqlstate).c_str(),
               JsonEscaped(detail).c_str());
}

// A standby cancels (ERROR) or ends (FATAL) what conflicts with the WAL it replays, as 40001,
// 40P01 or 57P04, or, when the connection ends, without a SQLSTATE libpqxx passes on.
bool IsRecoveryConflict(absl::string_view message) {
  return absl::StrContains(message, "conflict with recovery");
}

// libpq's message for a connection refused because the server or the role has no connection
// left (53300, which libpqxx 6.4 passes on without its SQLSTATE).
bool IsTooManyConnections(absl::string_view message) {
  return absl::StrContains(message, "too many connections") ||
         absl::StrContains(message, "too many clients");
}

constexpr absl::string_view kRecoveryConflictCause =
    "a standby cancelled the statement because of a conflict with recovery (on the standby, "
    "set hot_standby_feedback=on or raise max_standby_streaming_delay); retry";

}  // namespace

SqlStateMapping MapSqlState(absl::string_view sqlstate) {
  // Exact codes before their classes: the first entry whose code "sqlstate" starts with wins.
  static constexpr SqlStateMapping kTable[] = {
      {"40001", absl::StatusCode::kAborted,
       "the transaction was cancelled by a serialization failure or a conflict with recovery; "
       "retry"},
      {"40P01", absl::StatusCode::kAborted,
       "the transaction was chosen as a deadlock victim; retry"},
      {"40", absl::StatusCode::kAborted, "the database rolled the transaction back; retry"},
      {"57P04", absl::StatusCode::kAborted,
       "the database was dropped on the primary (a conflict with recovery)"},
      {"57014", absl::StatusCode::kDeadlineExceeded,
       "the statement ran longer than statement_timeout"},
      {"57P01", absl::StatusCode::kUnavailable,
       "the database ended the connection (administrator command or shutdown)"},
      {"57P02", absl::StatusCode::kUnavailable, "the database server crashed"},
      {"57P03", absl::StatusCode::kUnavailable,
       "the database is not accepting connections now (starting up, shutting down or in "
       "recovery)"},
      {"55P03", absl::StatusCode::kUnavailable, "a lock the export needs is not available"},
      // object_in_use: a replication slot that another session reads (another delta of the
      // same change stream, or a drop while it runs).
      {"55006", absl::StatusCode::kAborted,
       "another delta of this change stream is running (its replication slot is in use); retry"},
      {"08", absl::StatusCode::kUnavailable, "the database connection failed"},
      {"53", absl::StatusCode::kResourceExhausted,
       "the database is out of a resource (connections, memory or disk)"},
      {"42501", absl::StatusCode::kPermissionDenied,
       "the server's database role lacks a privilege it needs (it must be able to SELECT "
       "DHIS2's tables)"},
      {"22008", absl::StatusCode::kInvalidArgument,
       "a date or time in the request is out of range"},
  };
  for (const SqlStateMapping& entry : kTable) {
    if (absl::StartsWith(sqlstate, entry.sqlstate)) return entry;
  }
  return {sqlstate, absl::StatusCode::kInternal,
          "the database reported an error (the server log has its message)"};
}

namespace {

// A database error with its SQLSTATE ("state") and message, as the client and the log see it.
absl::Status SqlStateStatus(absl::string_view what, const std::string& state,
                            std::string_view message, StopCause stop) {
  if (state == "57014") {
    if (stop == StopCause::kCancelled) {
      return absl::CancelledError(absl::StrCat(what, ": the export was cancelled"));
    }
    if (stop == StopCause::kDeadline) {
      return absl::DeadlineExceededError(absl::StrCat(what, ": the call's deadline passed"));
    }
  }
  const std::string detail = PrimaryMessage(message);
  LogDatabaseError("database_error", what, state, detail);
  if (IsRecoveryConflict(detail)) {
    return absl::AbortedError(
        absl::StrCat(what, ": ", kRecoveryConflictCause, " (SQLSTATE ", state, ")"));
  }
  const SqlStateMapping mapping = MapSqlState(state);
  return absl::Status(mapping.code,
                      absl::StrCat(what, ": ", mapping.cause, " (SQLSTATE ", state, ")"));
}

// libpqxx 6.4 drops the SQLSTATE of the exceptions it has a class for: the class tells it.
std::string SqlStateOf(const pqxx::sql_error& e) {
  if (!e.sqlstate().empty()) return e.sqlstate();
  if (dynamic_cast<const pqxx::insufficient_privilege*>(&e) != nullptr) return "42501";
  return "";
}

absl::Status ConnectionLostStatus(absl::string_view what, absl::string_view detail) {
  LogDatabaseError("database_connection_lost", what, "", detail);
  if (IsRecoveryConflict(detail))
    return absl::AbortedError(absl::StrCat(what, ": ", kRecoveryConflictCause));
  return absl::UnavailableError(absl::StrCat(what, ": the database connection was lost"));
}

}  // namespace

absl::Status CurrentExceptionStatus(absl::string_view what, StopCause stop, bool connection_lost) {
  try {
    throw;
  } catch (const pqxx::sql_error& e) {
    return SqlStateStatus(what, SqlStateOf(e), e.what(), stop);
  } catch (const pqxx::serialization_failure& e) {
    return SqlStateStatus(what, "40001", e.what(), stop);
  } catch (const pqxx::deadlock_detected& e) {
    return SqlStateStatus(what, "40P01", e.what(), stop);
  } catch (const pqxx::statement_completion_unknown& e) {
    return SqlStateStatus(what, "40003", e.what(), stop);
  } catch (const pqxx::transaction_rollback& e) {
    return SqlStateStatus(what, "40000", e.what(), stop);
  } catch (const pqxx::too_many_connections& e) {
    return SqlStateStatus(what, "53300", e.what(), stop);
  } catch (const pqxx::broken_connection& e) {
    return ConnectionLostStatus(what, e.what());
  } catch (const pqxx::in_doubt_error& e) {
    return ConnectionLostStatus(what, e.what());
  } catch (const std::exception& e) {
    if (connection_lost) return ConnectionLostStatus(what, e.what());
    LogDatabaseError("database_error", what, "", e.what());
    return absl::InternalError(absl::StrCat(
        what, ": the database client library failed (the server log has its message)"));
  } catch (...) {
    return absl::InternalError(absl::StrCat(what, ": unknown error"));
  }
}

absl::Status ConnectFailedStatus(std::string_view libpq_message) {
  std::fprintf(stderr, "{\"event\":\"database_connect_failed\",\"detail\":\"%s\"}\n",
               JsonEscaped({libpq_message.data(), libpq_message.size()}).c_str());
  if (IsTooManyConnections({libpq_message.data(), libpq_message.size()})) {
    return absl::ResourceExhaustedError(
        "cannot connect to PostgreSQL: it has no connection left for the server's role (SQLSTATE "
        "53300; the server log has libpq's message)");
  }
  return absl::UnavailableError(
      "cannot connect to PostgreSQL (the server log has libpq's message)");
}

}  // namespace dvexport::db
