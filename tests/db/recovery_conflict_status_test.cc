// How a hot standby's recovery conflicts, and the other transaction rollbacks, reach the caller:
// the exceptions libpqxx 6.4 throws for them, with the server's real message texts. The
// conflicts themselves are provoked on a real standby by reliability.standby.

#include <gtest/gtest.h>

#include <pqxx/except>
#include <string>

#include "absl/status/status.h"
#include "service/db/database_error.h"

namespace dvexport::db {
namespace {

template <typename Exception>
absl::Status StatusOf(const Exception& e) {
  try {
    throw e;
  } catch (...) {
    return CurrentExceptionStatus("reading data values");
  }
}

void ExpectNamesTheStandbySettings(const absl::Status& status) {
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  EXPECT_NE(status.message().find("hot_standby_feedback=on"), std::string::npos) << status;
  EXPECT_NE(status.message().find("max_standby_streaming_delay"), std::string::npos) << status;
  EXPECT_EQ(status.message().find("reading data values: "), 0u) << status;
}

TEST(RecoveryConflictStatusTest, CancelledStatementIsAbortedNamingTheSettings) {
  // 40001: libpqxx 6.4 throws serialization_failure, which is not an sql_error.
  ExpectNamesTheStandbySettings(StatusOf(pqxx::serialization_failure(
      "ERROR:  canceling statement due to conflict with recovery\n"
      "DETAIL:  User query might have needed to see row versions that must be removed.\n")));
}

TEST(RecoveryConflictStatusTest, TerminatedIdleTransactionIsAbortedNamingTheSettings) {
  // A standby ends a connection idle in a transaction with a FATAL; libpq reports the lost
  // connection with it.
  ExpectNamesTheStandbySettings(StatusOf(pqxx::broken_connection(
      "FATAL:  terminating connection due to conflict with recovery\n"
      "DETAIL:  User query might have needed to see row versions that must be removed.\n"
      "HINT:  In a moment you should be able to reconnect to the database and repeat your "
      "command.\nserver closed the connection unexpectedly\n")));
}

TEST(RecoveryConflictStatusTest, DroppedDatabaseConflictIsAborted) {
  ExpectNamesTheStandbySettings(StatusOf(pqxx::sql_error(
      "FATAL:  terminating connection due to conflict with recovery\n", "COPY ...", "57P04")));
}

// The database's own text goes to the server's log only: the client gets the cause and SQLSTATE.
TEST(RecoveryConflictStatusTest, OtherRollbacksAreAbortedNamingTheirCause) {
  const absl::Status deadlock =
      StatusOf(pqxx::deadlock_detected("ERROR:  deadlock detected\nDETAIL:  Process 1 waits"));
  EXPECT_EQ(deadlock.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(deadlock.message(),
            "reading data values: the transaction was chosen as a deadlock victim; retry "
            "(SQLSTATE 40P01)");
  const absl::Status serialization = StatusOf(
      pqxx::serialization_failure("ERROR:  could not serialize access due to concurrent update\n"));
  EXPECT_EQ(serialization.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(serialization.message().find("hot_standby_feedback"), std::string::npos);
}

}  // namespace
}  // namespace dvexport::db
