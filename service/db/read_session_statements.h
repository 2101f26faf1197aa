#ifndef DVEXPORT_SERVICE_DB_READ_SESSION_STATEMENTS_H_
#define DVEXPORT_SERVICE_DB_READ_SESSION_STATEMENTS_H_

// ReadSession::RunStatements, for the files that define ReadSession's members (read_session.cc,
// read_session_ordered.cc) and nothing else.

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "service/db/database_error.h"
#include "service/db/read_session.h"

namespace dvexport::db {

template <typename Body>
absl::Status ReadSession::RunStatements(DatabaseConnection& conn, absl::string_view what,
                                        Body&& body) {
  QueryCanceller::Statement statement(&canceller_, &conn);
  if (!statement.started()) return canceller_.StopStatus(what);
  absl::Status status;
  try {
    if constexpr (std::is_invocable_v<Body, QueryCanceller::Statement&>) {
      status = body(statement);
    } else {
      status = body();
    }
  } catch (...) {
    if (!statement.severed()) {
      return CurrentExceptionStatus(what, canceller_.cause(), !conn.is_open());
    }
    status = absl::UnavailableError(absl::StrCat(what, ": the database did not answer"));
  }
  if (status.ok() || !statement.severed()) return status;
  // Severed by the watchdog: the broken socket is the stop's doing, not the database's.
  absl::Status stopped = canceller_.StopStatus(what);
  return stopped.ok() ? status : stopped;
}

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_READ_SESSION_STATEMENTS_H_
