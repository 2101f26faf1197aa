#include "service/db/database_error.h"

#include <cstdio>
#include <exception>
#include <pqxx/except>
#include <string>

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
std::string JsonEscaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out;
}

// A hot standby cancelled the statement or ended the connection to replay the primary's changes
// (SQLSTATE 40001, or 57P04 for a dropped database): transient, and what the operator can change
// is named. "detail" is the server's primary message.
bool IsRecoveryConflict(std::string_view detail) {
  return detail.find("conflict with recovery") != std::string_view::npos;
}

absl::Status RecoveryConflictStatus(absl::string_view what) {
  return absl::AbortedError(absl::StrCat(
      what,
      ": the read replica cancelled the query to replay the primary's changes (conflict with "
      "recovery); retry, and on the standby set hot_standby_feedback=on or raise "
      "max_standby_streaming_delay above the longest export"));
}

absl::Status SqlErrorStatus(const pqxx::sql_error& e, absl::string_view what, StopCause stop) {
  const std::string& state = e.sqlstate();
  if (IsRecoveryConflict(e.what())) return RecoveryConflictStatus(what);
  const std::string text =
      absl::StrCat(what, ": ", PrimaryMessage(e.what()), " (SQLSTATE ", state, ")");
  const std::string cls = state.substr(0, 2);
  if (state == "57014") {
    if (stop == StopCause::kCancelled) {
      return absl::CancelledError(absl::StrCat(what, ": the export was cancelled"));
    }
    if (stop == StopCause::kDeadline) {
      return absl::DeadlineExceededError(absl::StrCat(what, ": the call's deadline passed"));
    }
    return absl::DeadlineExceededError(text);  // statement_timeout
  }
  if (cls == "08" || state.rfind("57P0", 0) == 0 || state == "55P03") {
    return absl::UnavailableError(text);
  }
  if (cls == "53") return absl::ResourceExhaustedError(text);
  if (state == "22008") return absl::InvalidArgumentError(text);
  return absl::InternalError(text);
}

}  // namespace

absl::Status CurrentExceptionStatus(absl::string_view what, StopCause stop, bool connection_lost) {
  try {
    throw;
  } catch (const pqxx::sql_error& e) {
    return SqlErrorStatus(e, what, stop);
  } catch (const pqxx::transaction_rollback& e) {
    // 40001 (a standby's recovery conflict among them) and 40P01: libpqxx 6.4 keeps no SQLSTATE
    // for them.
    if (IsRecoveryConflict(e.what())) return RecoveryConflictStatus(what);
    return absl::AbortedError(absl::StrCat(what, ": ", PrimaryMessage(e.what())));
  } catch (const pqxx::broken_connection& e) {
    // A standby ends an idle transaction's connection on a conflict (FATAL).
    if (IsRecoveryConflict(e.what())) return RecoveryConflictStatus(what);
    // Also too_many_connections (53300), which libpqxx 6.4 reports without its SQLSTATE.
    std::fprintf(stderr, "{\"event\":\"database_connection_lost\",\"detail\":\"%s\"}\n",
                 JsonEscaped(e.what()).c_str());
    return absl::UnavailableError(absl::StrCat(what, ": the database connection was lost"));
  } catch (const pqxx::in_doubt_error&) {
    return absl::UnavailableError(absl::StrCat(what, ": the database connection was lost"));
  } catch (const std::exception& e) {
    if (IsRecoveryConflict(e.what())) return RecoveryConflictStatus(what);
    if (connection_lost) {
      return absl::UnavailableError(absl::StrCat(what, ": the database connection was lost"));
    }
    return absl::InternalError(absl::StrCat(what, ": ", PrimaryMessage(e.what())));
  } catch (...) {
    return absl::InternalError(absl::StrCat(what, ": unknown error"));
  }
}

absl::Status ConnectFailedStatus(std::string_view libpq_message) {
  std::fprintf(stderr, "{\"event\":\"database_connect_failed\",\"detail\":\"%s\"}\n",
               JsonEscaped(libpq_message).c_str());
  return absl::UnavailableError(
      "cannot connect to PostgreSQL (the server log has libpq's message)");
}

}  // namespace dvexport::db
