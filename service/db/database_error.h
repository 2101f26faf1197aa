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

// The one mapping of libpqxx's exceptions to absl::Status, for the db layer's
// boundary: call it inside a catch block; it rethrows the exception in flight
// to tell what it is. "what" says what failed ("reading data values").
//
// pqxx::sql_error by SQLSTATE: 57014 query_canceled is Cancelled when "stop"
// is kCancelled, else DeadlineExceeded (the deadline, or statement_timeout);
// class 08, 57P0x and 55P03 are Unavailable; class 53 ResourceExhausted; 22008
// InvalidArgument (datetime out of range, from a request's dates); anything
// else Internal. pqxx::transaction_rollback (40001, 40P01) is Aborted. A hot
// standby's recovery conflict ("conflict with recovery": 40001, 57P04, or a
// connection the standby ended) is Aborted with a message naming
// hot_standby_feedback=on and max_standby_streaming_delay. A lost connection
// (pqxx::broken_connection) is Unavailable.
// Messages carry the server's primary message and SQLSTATE, never libpq's
// connection messages (they name the database's host and user). With
// "connection_lost" (the connection is no longer open) any other failure is
// Unavailable too.
absl::Status CurrentExceptionStatus(absl::string_view what, StopCause stop = StopCause::kNone,
                                    bool connection_lost = false);

// The status of a failed connection attempt: Unavailable with a fixed text;
// libpq's message (host, port, user) goes to stderr only.
absl::Status ConnectFailedStatus(std::string_view libpq_message);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_DATABASE_ERROR_H_
