#include "service/db/connection_pool.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <pqxx/nontransaction>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/db/db_test_support.h"

namespace dvexport::db {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string Query(PooledConnection& conn, const std::string& sql) {
  pqxx::nontransaction tx(*conn);
  return tx.exec(sql)[0][0].c_str();
}

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

TEST(ConnectionPoolTest, LendsAtMostMaxSizeAndWaitsForOneToComeBack) {
  ConnectionPool pool(TestConninfo(), 2);
  absl::StatusOr<PooledConnection> a = pool.Acquire(milliseconds(1000));
  absl::StatusOr<PooledConnection> b = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(pool.in_use(), 2);

  Clock::time_point start = Clock::now();
  absl::StatusOr<PooledConnection> c = pool.Acquire(milliseconds(200));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_GE(Since(start), milliseconds(190));

  std::thread giver([&] {
    std::this_thread::sleep_for(milliseconds(300));
    a = absl::CancelledError("given back");  // destroys the PooledConnection
  });
  start = Clock::now();
  absl::StatusOr<PooledConnection> d = pool.Acquire(milliseconds(5000));
  giver.join();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_GE(Since(start), milliseconds(250));
  EXPECT_LT(Since(start), milliseconds(3000));
  EXPECT_EQ(pool.in_use(), 2);
}

TEST(ConnectionPoolTest, SetsEncodingDateStyleAndTimeZone) {
  ConnectionPool pool(TestConninfo(), 1);
  absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_EQ(Query(*conn, "SHOW client_encoding"), "UTF8");
  EXPECT_EQ(Query(*conn, "SHOW DateStyle").substr(0, 3), "ISO");
  EXPECT_EQ(Query(*conn, "SHOW TimeZone"), "UTC");
}

TEST(ConnectionPoolTest, TryAcquireKeepsConnectionsAvailable) {
  ConnectionPool pool(TestConninfo(), 3);
  absl::StatusOr<PooledConnection> held = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(held.ok()) << held.status();
  // 2 left: taking one leaves 1.
  EXPECT_EQ(pool.TryAcquire(2).status().code(), absl::StatusCode::kResourceExhausted);
  absl::StatusOr<PooledConnection> second = pool.TryAcquire(1);
  ASSERT_TRUE(second.ok()) << second.status();
  absl::StatusOr<PooledConnection> third = pool.TryAcquire(0);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(pool.TryAcquire(0).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(pool.in_use(), 3);
}

TEST(ConnectionPoolTest, ABrokenConnectionIsDroppedNotReused) {
  ConnectionPool pool(TestConninfo(), 1);
  std::string pid;
  {
    absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(1000));
    ASSERT_TRUE(conn.ok()) << conn.status();
    pid = Query(*conn, "SELECT pg_backend_pid()");
  }
  EXPECT_EQ(pool.in_use(), 0);
  AdminQuery(absl::StrCat("SELECT pg_terminate_backend(", pid, ")"));
  for (int i = 0; i < 100 && AdminQuery(absl::StrCat("SELECT count(*) FROM pg_stat_activity "
                                                     "WHERE pid = ",
                                                     pid)) != "0";
       ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_NE(Query(*conn, "SELECT pg_backend_pid()"), pid);
}

TEST(ConnectionPoolTest, ADiscardedConnectionIsNotReused) {
  ConnectionPool pool(TestConninfo(), 1);
  std::string pid;
  {
    absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(1000));
    ASSERT_TRUE(conn.ok()) << conn.status();
    pid = Query(*conn, "SELECT pg_backend_pid()");
    conn->Discard();
  }
  absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_NE(Query(*conn, "SELECT pg_backend_pid()"), pid);
}

TEST(ConnectionPoolTest, AcquireEndsWhenItsCallerStops) {
  ConnectionPool pool(TestConninfo(), 1);
  absl::StatusOr<PooledConnection> held = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(held.ok()) << held.status();
  const Clock::time_point start = Clock::now();
  absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(10000), [&] {
    return Since(start) > milliseconds(300) ? absl::DeadlineExceededError("the deadline passed")
                                            : absl::OkStatus();
  });
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(Since(start), milliseconds(1000));
}

TEST(ConnectionPoolTest, UnreachableDatabaseIsUnavailableWithoutHostOrUser) {
  ConnectionPool pool("host=127.0.0.1 port=1 user=someone_secret dbname=x", 1);
  Clock::time_point start = Clock::now();
  absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(1000));
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kUnavailable);
  // Refused at once, not after connect_timeout.
  EXPECT_LT(Since(start), milliseconds(1000));
  // A caller's "stopped" that never stops does not change that.
  start = Clock::now();
  absl::StatusOr<PooledConnection> bounded =
      pool.Acquire(milliseconds(1000), [] { return absl::OkStatus(); });
  EXPECT_EQ(bounded.status().code(), absl::StatusCode::kUnavailable) << bounded.status();
  EXPECT_LT(Since(start), milliseconds(1000));
  EXPECT_NE(conn.status().message().find("cannot connect to PostgreSQL"), std::string::npos);
  EXPECT_EQ(conn.status().message().find("someone_secret"), std::string::npos);
  EXPECT_EQ(conn.status().message().find("127.0.0.1"), std::string::npos);
  EXPECT_EQ(pool.in_use(), 0);
  EXPECT_EQ(pool.Probe(milliseconds(500)).code(), absl::StatusCode::kUnavailable);
}

// A server that accepts TCP (the kernel completes the handshake on a listening socket) and never
// answers: what a hung database looks like to a connect.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() { close(fd_); }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  std::string Conninfo(const std::string& more = "") const {
    return absl::StrCat("host=127.0.0.1 port=", port_, " dbname=x user=x sslmode=disable ", more);
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(ConnectionPoolTest, ConnectToASilentDatabaseEndsWhenItsCallerStops) {
  SilentListener silent;
  ConnectionPool pool(silent.Conninfo(), 1);  // connect_timeout 10 s
  const Clock::time_point start = Clock::now();
  absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(10000), [&] {
    return Since(start) > milliseconds(300) ? absl::DeadlineExceededError("the deadline passed")
                                            : absl::OkStatus();
  });
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kDeadlineExceeded) << conn.status();
  EXPECT_LT(Since(start), milliseconds(1000));
  EXPECT_EQ(pool.in_use(), 0);
  // The extra readers' TryAcquire too.
  const Clock::time_point again = Clock::now();
  absl::StatusOr<PooledConnection> reader = pool.TryAcquire(0, [&] {
    return Since(again) > milliseconds(300) ? absl::CancelledError("the export was cancelled")
                                            : absl::OkStatus();
  });
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kCancelled) << reader.status();
  EXPECT_LT(Since(again), milliseconds(1000));
  EXPECT_EQ(pool.in_use(), 0);
}

TEST(ConnectionPoolTest, ConnectToASilentDatabaseEndsAtConnectTimeout) {
  SilentListener silent;
  // libpq's non-blocking connect does not enforce connect_timeout: the pool must (and reads it
  // from the conninfo; libpq counts 1 as 2 s).
  ConnectionPool pool(silent.Conninfo("connect_timeout=1"), 1);
  const Clock::time_point start = Clock::now();
  absl::StatusOr<PooledConnection> conn = pool.Acquire(milliseconds(10000));
  EXPECT_EQ(conn.status().code(), absl::StatusCode::kUnavailable) << conn.status();
  EXPECT_GE(Since(start), milliseconds(1900));
  EXPECT_LT(Since(start), milliseconds(3000));
  EXPECT_EQ(pool.in_use(), 0);
}

TEST(ConnectionPoolTest, ProbeIsOkWhenTheDatabaseAnswersOrEveryConnectionIsBusy) {
  ConnectionPool pool(TestConninfo(), 1);
  EXPECT_TRUE(pool.Probe(milliseconds(2000)).ok());
  absl::StatusOr<PooledConnection> held = pool.Acquire(milliseconds(1000));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(pool.Probe(milliseconds(2000)).ok());
}

}  // namespace
}  // namespace dvexport::db
