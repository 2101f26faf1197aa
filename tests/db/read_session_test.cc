// ReadSession against the test database: what it reads, and how its waits end
// (QueryCanceller): a statement blocked behind a lock on datavalue ends within
// about a second of Cancel() or of the deadline, and the connection can be
// used again afterwards.

#include "service/db/read_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <pqxx/nontransaction>
#include <string>
#include <thread>

#include "dvexport/v1/export.pb.h"
#include "service/db/query_canceller.h"
#include "tests/db/db_test_support.h"

namespace dvexport::db {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::system_clock;

constexpr milliseconds kCancelBound{1000};

// Every value of the demo database.
dhis2::ExportParams WholeDatabase() {
  v1::ExportRequest request;
  for (const std::string& uid : AdminColumn("SELECT uid FROM dataset")) request.add_data_set(uid);
  for (const std::string& uid :
       AdminColumn("SELECT uid FROM organisationunit WHERE parentid IS NULL")) {
    request.add_org_unit(uid);
  }
  request.set_children(true);
  request.set_start_date("1900-01-01");
  request.set_end_date("2100-12-31");
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(request);
  EXPECT_TRUE(params.ok()) << params.status();
  return params.ok() ? *params : dhis2::ExportParams();
}

// Slices as small as the small demo database allows, three readers.
ReadSessionOptions Sliced() {
  ReadSessionOptions options;
  options.read_plan.max_streams = 3;
  options.read_plan.min_rows = 0;
  options.read_plan.slices_per_stream = 4;
  options.read_plan.min_slice_blocks = 1;
  return options;
}

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

class ReadSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { params_ = new dhis2::ExportParams(WholeDatabase()); }
  static void TearDownTestSuite() { delete params_; }

  // Counts the values of a new session of "pool_", which must succeed.
  int64_t CountNow() {
    ReadSession session(&pool_, ReadSessionOptions(), system_clock::time_point::max());
    absl::Status status = session.Begin(*params_, /*principal=*/nullptr);
    EXPECT_TRUE(status.ok()) << status;
    absl::StatusOr<int64_t> count = session.Count();
    EXPECT_TRUE(count.ok()) << count.status();
    EXPECT_TRUE(session.Finish().ok());
    return count.value_or(-1);
  }

  static dhis2::ExportParams* params_;
  ConnectionPool pool_{TestConninfo(), 4};
};

dhis2::ExportParams* ReadSessionTest::params_ = nullptr;

TEST_F(ReadSessionTest, ReadsAsManyValuesAsItCountsWithOneOrSeveralReaders) {
  const int64_t count = CountNow();
  ASSERT_GT(count, 1000) << "the demo database looks empty";
  for (const ReadSessionOptions& options : {ReadSessionOptions(), Sliced()}) {
    ReadSession session(&pool_, options, system_clock::time_point::max());
    ASSERT_TRUE(session.Begin(*params_, /*principal=*/nullptr).ok());
    absl::StatusOr<int> readers = session.PlanReads(0);
    ASSERT_TRUE(readers.ok()) << readers.status();
    EXPECT_EQ(session.sliced(), *readers > 1);
    std::atomic<int64_t> values{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < *readers; ++i) {
      threads.emplace_back([&, i] {
        absl::Status status = session.Read(i, [&](const encode::DataValueRow& row) {
          EXPECT_FALSE(row.period.is_null);
          ++values;
          return true;
        });
        EXPECT_TRUE(status.ok()) << status;
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(values.load(), count);
    EXPECT_TRUE(session.Finish().ok());
  }
  EXPECT_EQ(pool_.in_use(), 0);
}

TEST_F(ReadSessionTest, SlicedReadsUseSeveralConnections) {
  ReadSession session(&pool_, Sliced(), system_clock::time_point::max());
  ASSERT_TRUE(session.Begin(*params_, /*principal=*/nullptr).ok());
  absl::StatusOr<int> readers = session.PlanReads(0);
  ASSERT_TRUE(readers.ok()) << readers.status();
  EXPECT_EQ(*readers, 3);
  EXPECT_TRUE(session.sliced());
}

TEST_F(ReadSessionTest, ConsumerStoppingIsCancelledAndTheConnectionIsReused) {
  {
    ReadSession session(&pool_, ReadSessionOptions(), system_clock::time_point::max());
    ASSERT_TRUE(session.Begin(*params_, /*principal=*/nullptr).ok());
    ASSERT_TRUE(session.PlanReads(0).ok());
    int seen = 0;
    absl::Status status = session.Read(0, [&](const encode::DataValueRow&) { return ++seen < 10; });
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_EQ(seen, 10);
  }
  EXPECT_EQ(pool_.in_use(), 0);
  EXPECT_GT(CountNow(), 1000);
}

TEST_F(ReadSessionTest, CancelEndsAStatementBlockedBehindALockWithinASecond) {
  ReadSession session(&pool_, ReadSessionOptions(), system_clock::time_point::max());
  ASSERT_TRUE(session.Begin(*params_, /*principal=*/nullptr).ok());
  absl::StatusOr<int64_t> count;
  Clock::time_point cancelled_at;
  {
    DataValueLock lock;
    std::thread cancel([&] {
      std::this_thread::sleep_for(milliseconds(500));
      cancelled_at = Clock::now();
      session.Cancel();
    });
    count = session.Count();
    const milliseconds late = Since(cancelled_at);
    cancel.join();
    EXPECT_EQ(count.status().code(), absl::StatusCode::kCancelled) << count.status();
    EXPECT_LT(late, kCancelBound);
  }
  // Nothing more starts once cancelled.
  EXPECT_EQ(session.Count().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(session.Finish().code(), absl::StatusCode::kCancelled);
}

TEST_F(ReadSessionTest, TheDeadlineEndsAStatementBlockedBehindALockWithinASecond) {
  const system_clock::time_point deadline = system_clock::now() + milliseconds(800);
  {
    ReadSession session(&pool_, ReadSessionOptions(), deadline);
    ASSERT_TRUE(session.Begin(*params_, /*principal=*/nullptr).ok());
    DataValueLock lock;
    absl::StatusOr<int64_t> count = session.Count();
    EXPECT_EQ(count.status().code(), absl::StatusCode::kDeadlineExceeded) << count.status();
    EXPECT_LT(system_clock::now() - deadline, kCancelBound);
  }
  // The connection went back to the pool and works.
  EXPECT_EQ(pool_.in_use(), 0);
  EXPECT_GT(CountNow(), 1000);
}

TEST_F(ReadSessionTest, CancelEndsACopyBlockedBehindALock) {
  ReadSession session(&pool_, ReadSessionOptions(), system_clock::time_point::max());
  ASSERT_TRUE(session.Begin(*params_, /*principal=*/nullptr).ok());
  ASSERT_TRUE(session.PlanReads(0).ok());
  absl::Status status;
  Clock::time_point cancelled_at;
  {
    DataValueLock lock;
    std::thread cancel([&] {
      std::this_thread::sleep_for(milliseconds(500));
      cancelled_at = Clock::now();
      session.Cancel();
    });
    status = session.Read(0, [](const encode::DataValueRow&) { return true; });
    const milliseconds late = Since(cancelled_at);
    cancel.join();
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_LT(late, kCancelBound);
  }
}

TEST_F(ReadSessionTest, StatementTimeoutIsDeadlineExceeded) {
  ReadSessionOptions options;
  options.statement_timeout = milliseconds(300);
  ReadSession session(&pool_, options, system_clock::time_point::max());
  ASSERT_TRUE(session.Begin(*params_, /*principal=*/nullptr).ok());
  DataValueLock lock;
  const Clock::time_point start = Clock::now();
  absl::StatusOr<int64_t> count = session.Count();
  EXPECT_EQ(count.status().code(), absl::StatusCode::kDeadlineExceeded) << count.status();
  EXPECT_LT(Since(start), milliseconds(5000));
}

TEST_F(ReadSessionTest, BorrowingAConnectionEndsAtCancel) {
  ConnectionPool small(TestConninfo(), 1);
  absl::StatusOr<PooledConnection> held = small.Acquire(milliseconds(1000));
  ASSERT_TRUE(held.ok()) << held.status();
  ReadSessionOptions options;
  options.connection_wait = milliseconds(30000);
  ReadSession session(&small, options, system_clock::time_point::max());
  std::thread cancel([&] {
    std::this_thread::sleep_for(milliseconds(300));
    session.Cancel();
  });
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(session.Begin(*params_, /*principal=*/nullptr).code(), absl::StatusCode::kCancelled);
  EXPECT_LT(Since(start), milliseconds(300) + kCancelBound);
  cancel.join();
}

TEST_F(ReadSessionTest, BorrowingAConnectionEndsAtTheDeadline) {
  ConnectionPool small(TestConninfo(), 1);
  absl::StatusOr<PooledConnection> held = small.Acquire(milliseconds(1000));
  ASSERT_TRUE(held.ok()) << held.status();
  ReadSessionOptions options;
  options.connection_wait = milliseconds(30000);
  const system_clock::time_point deadline = system_clock::now() + milliseconds(300);
  ReadSession session(&small, options, deadline);
  EXPECT_EQ(session.Begin(*params_, /*principal=*/nullptr).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(system_clock::now() - deadline, kCancelBound);
}

TEST_F(ReadSessionTest, UnknownIdentifiersAreNotFound) {
  v1::ExportRequest request;
  request.add_data_set("aaaaaaaaaaa");
  request.add_org_unit("bbbbbbbbbbb");
  request.add_period("202401");
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  ReadSession session(&pool_, ReadSessionOptions(), system_clock::time_point::max());
  absl::Status status = session.Begin(*params, /*principal=*/nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
}

TEST_F(ReadSessionTest, LookupRunsItsBodyInAReadOnlyTransactionAndGivesTheConnectionBack) {
  ConnectionPool small(TestConninfo(), 1);
  ReadSession session(&small, ReadSessionOptions(), system_clock::time_point::max());
  std::string read_only;
  absl::Status status = session.Lookup("reading a setting", [&](pqxx::transaction_base& tx) {
    read_only = tx.exec1("SHOW transaction_read_only")[0].c_str();
    return absl::OkStatus();
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(read_only, "on");
  // The one connection is back in the pool while the session lives.
  absl::StatusOr<PooledConnection> again = small.Acquire(milliseconds(1000));
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST_F(ReadSessionTest, LookupReturnsTheBodysStatusAndMapsDatabaseErrors) {
  ConnectionPool small(TestConninfo(), 1);
  {
    ReadSession session(&small, ReadSessionOptions(), system_clock::time_point::max());
    absl::Status status = session.Lookup("x", [](pqxx::transaction_base&) {
      return absl::UnauthenticatedError("refused by the body");
    });
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(status.message(), "refused by the body");
  }
  {
    ReadSession session(&small, ReadSessionOptions(), system_clock::time_point::max());
    absl::Status status =
        session.Lookup("looking up the missing table", [](pqxx::transaction_base& tx) {
          tx.exec("SELECT * FROM no_such_table_for_lookup");
          return absl::OkStatus();
        });
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("looking up the missing table"), absl::string_view::npos)
        << status;
  }
  // Both connections' transactions ended: the pool lends one again.
  ReadSession session(&small, ReadSessionOptions(), system_clock::time_point::max());
  EXPECT_TRUE(session
                  .Lookup("x",
                          [](pqxx::transaction_base& tx) {
                            tx.exec("SELECT 1");
                            return absl::OkStatus();
                          })
                  .ok());
}

TEST_F(ReadSessionTest, LookupEndsAStatementBlockedBehindALockAtCancel) {
  ReadSession session(&pool_, ReadSessionOptions(), system_clock::time_point::max());
  DataValueLock lock;
  std::thread cancel([&] {
    std::this_thread::sleep_for(milliseconds(300));
    session.Cancel();
  });
  const Clock::time_point start = Clock::now();
  absl::Status status = session.Lookup("counting", [](pqxx::transaction_base& tx) {
    tx.exec("SELECT count(*) FROM datavalue");
    return absl::OkStatus();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_LT(Since(start), milliseconds(300) + kCancelBound);
  cancel.join();
}

TEST(QueryCancellerTest, NoStatementStartsOnceCancelled) {
  QueryCanceller canceller(system_clock::time_point::max());
  EXPECT_EQ(canceller.cause(), StopCause::kNone);
  EXPECT_TRUE(canceller.StopStatus("x").ok());
  absl::StatusOr<std::unique_ptr<DatabaseConnection>> conn =
      DatabaseConnection::Connect(TestConninfo());
  ASSERT_TRUE(conn.ok()) << conn.status();
  {
    QueryCanceller::Statement statement(&canceller, conn->get());
    EXPECT_TRUE(statement.started());
  }
  canceller.Cancel();
  canceller.Cancel();
  QueryCanceller::Statement statement(&canceller, conn->get());
  EXPECT_FALSE(statement.started());
  EXPECT_EQ(canceller.cause(), StopCause::kCancelled);
  EXPECT_EQ(canceller.StopStatus("x").code(), absl::StatusCode::kCancelled);
}

// An abandoned statement (a COPY whose consumer stopped) is cancelled on its own, at once, from
// the watchdog's sender: the call returns without waiting, the statement ends with 57014 well
// before its end, the session is not stopped, and the next statement runs.
TEST(QueryCancellerTest, AnAbandonedStatementIsCancelledAloneWithoutWaiting) {
  QueryCanceller canceller(system_clock::time_point::max());
  absl::StatusOr<std::unique_ptr<DatabaseConnection>> conn =
      DatabaseConnection::Connect(TestConninfo());
  ASSERT_TRUE(conn.ok()) << conn.status();
  const Clock::time_point start = Clock::now();
  std::string error;
  {
    QueryCanceller::Statement statement(&canceller, conn->get());
    ASSERT_TRUE(statement.started());
    std::thread abandon([&] {
      std::this_thread::sleep_for(milliseconds(200));
      const Clock::time_point called = Clock::now();
      statement.Abandon();
      EXPECT_LT(Clock::now() - called, milliseconds(50)) << "Abandon waited";
    });
    try {
      pqxx::nontransaction tx(**conn);
      tx.exec("SELECT pg_sleep(20)");
    } catch (const pqxx::sql_error& e) {
      error = e.sqlstate();
    }
    abandon.join();
    EXPECT_FALSE(statement.severed());
  }
  EXPECT_EQ(error, "57014");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(canceller.cause(), StopCause::kNone);
  EXPECT_EQ(canceller.severed(), 0);
  QueryCanceller::Statement next(&canceller, conn->get());
  EXPECT_TRUE(next.started());
  pqxx::nontransaction tx(**conn);
  EXPECT_EQ(tx.exec("SELECT 1")[0][0].as<int>(), 1);
}

TEST(QueryCancellerTest, TheFirstCauseWins) {
  QueryCanceller canceller(system_clock::now() + milliseconds(50));
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(canceller.cause(), StopCause::kDeadline);
  canceller.Cancel();
  EXPECT_EQ(canceller.cause(), StopCause::kDeadline);
}

}  // namespace
}  // namespace dvexport::db
