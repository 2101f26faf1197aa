#ifndef DVEXPORT_SERVICE_DB_DATABASE_ERROR_H_
#define DVEXPORT_SERVICE_DB_DATABASE_ERROR_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dvexport::db {

// Why a session's statements are being cancelled, if they are.
enum class StopCause {
  kNone,       // still running
  kCancelled,  // Cancel() was called
  kDeadline,   // the call's deadline has passed
};

// How a SQLSTATE reaches a client: its gRPC code and the cause the client is
// told (never the database's own message, which may quote SQL, names or data).
struct SqlStateMapping {
  absl::string_view sqlstate;  // a code (40001) or a class (08)
  absl::StatusCode code;
  absl::string_view cause;
};

// The one table of SQLSTATEs, exact codes before classes: 40001, 40P01 and
// 57P04 (serialization failures, deadlocks, a standby's recovery conflicts)
// are Aborted; 57014 (statement_timeout) DeadlineExceeded; class 08, 57P01 to
// 57P03 and 55P03 Unavailable; class 53 ResourceExhausted; 42501
// PermissionDenied; 22008 InvalidArgument; anything else Internal.
SqlStateMapping MapSqlState(absl::string_view sqlstate);

// The mapping of libpqxx's exceptions to absl::Status, for the db layer's
// boundary: call it inside a catch block; it rethrows the exception in flight
// to tell what it is. "what" says what failed ("reading data values").
//
// pqxx::sql_error maps by MapSqlState, except that 57014 query_canceled is
// Cancelled when "stop" is kCancelled and DeadlineExceeded (the call's
// deadline) when kDeadline; any message about a "conflict with recovery" is
// Aborted. A lost connection (pqxx::broken_connection), or any failure with
// "connection_lost" (the connection is no longer open), is Unavailable.
// Clients get "<what>: <cause> (SQLSTATE <code>)"; the database's message and
// libpq's connection messages (host, port, user) go to the server log
// (stderr, one JSON line) only.
absl::Status CurrentExceptionStatus(absl::string_view what, StopCause stop = StopCause::kNone,
                                    bool connection_lost = false);

// The status of a failed connection attempt: Unavailable with a fixed text
// (ResourceExhausted when the database has no connection left: 53300, told by
// libpq's message); libpq's message (host, port, user) goes to stderr only.
absl::Status ConnectFailedStatus(std::string_view libpq_message);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_DATABASE_ERROR_H_
