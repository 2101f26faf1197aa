#include "service/db/database_error.h"

#include <gtest/gtest.h>

#include <pqxx/except>
#include <string>

namespace dvexport::db {
namespace {

// The status CurrentExceptionStatus gives for "error" in flight.
template <typename Error>
absl::Status StatusOf(const Error& error, StopCause stop = StopCause::kNone) {
  try {
    throw error;
  } catch (...) {
    return CurrentExceptionStatus("reading data values", stop);
  }
}

pqxx::sql_error SqlError(const std::string& message, const std::string& sqlstate) {
  return pqxx::sql_error("ERROR:  " + message + "\n", "SELECT secret_column FROM datavalue",
                         sqlstate.c_str());
}

// Every row of the table, with the database's message as PostgreSQL words it.
TEST(DatabaseErrorTest, MapsEverySqlStateOfTheTable) {
  struct Case {
    const char* sqlstate;
    const char* message;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {"40001", "could not serialize access due to concurrent update", absl::StatusCode::kAborted},
      {"40P01", "deadlock detected", absl::StatusCode::kAborted},
      {"57P04", "database \"dhis2\" does not exist", absl::StatusCode::kAborted},
      {"57014", "canceling statement due to statement timeout",
       absl::StatusCode::kDeadlineExceeded},
      {"57P01", "terminating connection due to administrator command",
       absl::StatusCode::kUnavailable},
      {"57P02", "terminating connection because of crash of another server process",
       absl::StatusCode::kUnavailable},
      {"57P03", "the database system is starting up", absl::StatusCode::kUnavailable},
      {"08006", "connection failure", absl::StatusCode::kUnavailable},
      {"08P01", "protocol violation", absl::StatusCode::kUnavailable},
      {"53300", "too many connections for role \"dvexport_reader\"",
       absl::StatusCode::kResourceExhausted},
      {"53200", "out of memory", absl::StatusCode::kResourceExhausted},
      {"53100", "could not extend file: No space left on device",
       absl::StatusCode::kResourceExhausted},
      {"42501", "permission denied for table datavalue", absl::StatusCode::kPermissionDenied},
      {"55P03", "could not obtain lock on relation \"datavalue\"", absl::StatusCode::kUnavailable},
      {"22008", "date/time field value out of range: \"0000-01-01\"",
       absl::StatusCode::kInvalidArgument},
      {"42P01", "relation \"datavalue\" does not exist", absl::StatusCode::kInternal},
      {"XX000", "unexpected chunk number 0 (expected 1) for toast value",
       absl::StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    absl::Status status = StatusOf(SqlError(c.message, c.sqlstate));
    EXPECT_EQ(status.code(), c.code) << c.sqlstate << ": " << status;
    EXPECT_EQ(MapSqlState(c.sqlstate).code, c.code) << c.sqlstate;
    const std::string message(status.message());
    // What failed, the cause in dvexport's words and the SQLSTATE; never the database's text.
    EXPECT_EQ(message.rfind("reading data values: ", 0), 0u) << message;
    EXPECT_NE(message.find(std::string("(SQLSTATE ") + c.sqlstate + ")"), std::string::npos)
        << message;
    EXPECT_EQ(message.find(c.message), std::string::npos) << message;
    EXPECT_EQ(message.find("secret_column"), std::string::npos) << message;
  }
}

// libpqxx 6.4 throws these without their SQLSTATE (result::ThrowSQLError): the class tells it.
TEST(DatabaseErrorTest, MapsLibpqxxExceptionClassesThatDropTheSqlState) {
  EXPECT_EQ(StatusOf(pqxx::serialization_failure("ERROR:  could not serialize access")).message(),
            "reading data values: the transaction was cancelled by a serialization failure or a "
            "conflict with recovery; retry (SQLSTATE 40001)");
  EXPECT_EQ(StatusOf(pqxx::deadlock_detected("ERROR:  deadlock detected")).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(StatusOf(pqxx::transaction_rollback("ERROR:  rolled back")).code(),
            absl::StatusCode::kAborted);
  absl::Status denied = StatusOf(pqxx::insufficient_privilege(
      "ERROR:  permission denied for table datavalue", "COPY (SELECT ...) TO STDOUT"));
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("(SQLSTATE 42501)"), std::string::npos) << denied;
  EXPECT_EQ(StatusOf(pqxx::too_many_connections("FATAL:  sorry, too many clients already")).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(DatabaseErrorTest, RecoveryConflictsAreAbortedAndNameTheStandbySettings) {
  for (const char* sqlstate : {"40001", "40P01", "57P04"}) {
    absl::Status status = StatusOf(SqlError(
        "canceling statement due to conflict with recovery\nDETAIL:  User query might have "
        "needed to see row versions that must be removed.",
        sqlstate));
    EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
    EXPECT_NE(status.message().find("hot_standby_feedback=on"), std::string::npos) << status;
    EXPECT_NE(status.message().find("max_standby_streaming_delay"), std::string::npos) << status;
  }
  // FATAL: the standby ends the connection; libpqxx reports a lost connection.
  absl::Status status = StatusOf(pqxx::broken_connection(
      "FATAL:  terminating connection due to conflict with recovery\nDETAIL:  User was holding "
      "a relation lock for too long."));
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
}

TEST(DatabaseErrorTest, QueryCanceledIsTheCallsCancelOrDeadlineWhenTheSessionStopped) {
  const pqxx::sql_error canceled = SqlError("canceling statement due to user request", "57014");
  EXPECT_EQ(StatusOf(canceled, StopCause::kCancelled).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(StatusOf(canceled, StopCause::kDeadline).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(StatusOf(canceled, StopCause::kNone).message(),
            "reading data values: the statement ran longer than statement_timeout (SQLSTATE "
            "57014)");
}

TEST(DatabaseErrorTest, LostConnectionIsUnavailableWithoutLibpqsMessage) {
  absl::Status status = StatusOf(pqxx::broken_connection(
      "server closed the connection unexpectedly\n\tThis probably means the server terminated "
      "abnormally"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "reading data values: the database connection was lost");
}

TEST(DatabaseErrorTest, FailedConnectNamesNeitherHostNorUser) {
  absl::Status refused = ConnectFailedStatus(
      "connection to server at \"db.example.org\" (10.0.0.7), port 5432 failed: Connection "
      "refused");
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(refused.message().find("db.example.org"), std::string::npos);
  EXPECT_EQ(refused.message().find("5432"), std::string::npos);

  for (const char* full :
       {"connection to server at \"db.example.org\" (10.0.0.7), port 5432 failed: FATAL:  too "
        "many connections for role \"dvexport_reader\"",
        "connection to server at \"db.example.org\" (10.0.0.7), port 5432 failed: FATAL:  sorry, "
        "too many clients already"}) {
    absl::Status status = ConnectFailedStatus(full);
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << full;
    EXPECT_EQ(status.message().find("dvexport_reader"), std::string::npos) << status;
    EXPECT_EQ(status.message().find("db.example.org"), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace dvexport::db
