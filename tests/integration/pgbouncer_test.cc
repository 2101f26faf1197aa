// The whole export path through PgBouncer in transaction pooling mode (issue 12): Debian's
// pgbouncer in front of the test database (tests/integration/pgbouncer.sh, the pgbouncer.ini of
// docs/DEPLOYMENT.md), a dvexport server in-process connected through it and one connected
// directly, real gRPC over loopback. Through PgBouncer every transaction may run on another
// server connection: sliced reads import the exporting transaction's snapshot on connections of
// their own, counts and identifier lookups run in transactions of their own. Skipped, saying
// so, only where pgbouncer is not installed.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/connection_pool.h"
#include "service/db/read_session.h"
#include "service/dhis2/export_request_validator.h"
#include "service/server/export_server.h"
#include "tests/integration/test_database.h"
#include "tests/support/export_readers.h"
#include "tests/support/read_plans.h"

namespace dvexport {
namespace {

using std::chrono::seconds;
using testing::QueryColumn;
using testing::SortedValues;

// The exit status pgbouncer.sh gives when pgbouncer is not installed.
constexpr int kNotInstalled = 3;

using testing::FileExport;
using testing::OneCopy;
using testing::SlicedPlan;

class Server {
 public:
  Server(const std::string& conninfo, const db::ReadPlanOptions& plan, int pool_size = 8) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = conninfo;
    options.pool_size = pool_size;
    options.service.max_concurrent_exports = 4;
    options.service.chunk_size = 16 * 1024;
    options.service.read_plan = plan;
    auto started = server::ExportServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    server_ = *std::move(started);
    stub_ = v1::DataValueExport::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials()));
  }

  FileExport ExportFile(const v1::ExportRequest& query, v1::Format format = v1::FORMAT_JSON) const {
    v1::ExportFileRequest request;
    *request.mutable_query() = query;
    request.set_format(format);
    return testing::ReadFileExport(stub_.get(), request, seconds(60));
  }

  // Every value of the typed stream, serialized, sorted.
  std::vector<std::string> StreamValues(const v1::ExportRequest& query,
                                        grpc::Status* status) const {
    return testing::ReadSortedStreamValues(stub_.get(), query, seconds(60), status);
  }

  grpc::Status Count(const v1::ExportRequest& query, int64_t* count) const {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    v1::CountResponse response;
    grpc::Status status = stub_->CountDataValues(&context, query, &response);
    *count = response.count();
    return status;
  }

  int64_t sliced_exports() const { return server_->service().sliced_exports(); }

 private:
  std::unique_ptr<server::ExportServer> server_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

v1::ExportRequest WholeDatabase() {
  v1::ExportRequest query;
  for (const std::string& ds : QueryColumn("SELECT uid FROM dataset ORDER BY uid")) {
    query.add_data_set(ds);
  }
  for (const std::string& ou :
       QueryColumn("SELECT uid FROM organisationunit WHERE parentid IS NULL ORDER BY uid")) {
    query.add_org_unit(ou);
  }
  query.set_children(true);
  query.set_start_date("1900-01-01");
  query.set_end_date("2100-12-31");
  return query;
}

std::string Script() {
  return absl::StrCat(DVEXPORT_SOURCE_DIR, "/tests/integration/pgbouncer.sh");
}

class PgBouncerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char env_file[] = "/tmp/dvexport-pgbouncer-env.XXXXXX";
    const int fd = mkstemp(env_file);
    ASSERT_GE(fd, 0);
    close(fd);
    const std::string command =
        absl::StrCat(Script(), " start ", env_file, " '", testing::TestConninfo(), "' ", getpid());
    const int rc = std::system(command.c_str());
    std::map<std::string, std::string> values;
    std::ifstream in(env_file);
    for (std::string line; std::getline(in, line);) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
    }
    std::remove(env_file);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == kNotInstalled) {
      not_installed_ = true;
      return;
    }
    ASSERT_EQ(rc, 0) << command;
    dir_ = values["DIR"];
    through_pgbouncer_ = absl::StrCat("host=127.0.0.1 port=", values["PORT"],
                                      " dbname=", values["DBNAME"], " user=dvexport_reader");
    through_one_server_ =
        absl::StrCat("host=127.0.0.1 port=", values["PORT"],
                     " dbname=", values["ONE_SERVER_DBNAME"], " user=dvexport_reader");
  }

  static void TearDownTestSuite() {
    if (!dir_.empty()) std::system(absl::StrCat(Script(), " stop ", dir_).c_str());
  }

  void SetUp() override {
    if (not_installed_) {
      GTEST_SKIP() << "pgbouncer is not installed (Debian package pgbouncer): PgBouncer tests "
                      "skipped";
    }
    ASSERT_FALSE(through_pgbouncer_.empty());
  }

  static bool not_installed_;
  static std::string dir_;
  static std::string through_pgbouncer_;
  // The same database through a PgBouncer pool of one server connection.
  static std::string through_one_server_;
};

bool PgBouncerTest::not_installed_ = false;
std::string PgBouncerTest::dir_;
std::string PgBouncerTest::through_pgbouncer_;
std::string PgBouncerTest::through_one_server_;

TEST_F(PgBouncerTest, PgBouncerPoolsTransactionsNotSessions) {
  // Client A's server connection goes back to the pool when its statement ends; client B's
  // transaction takes it; A's next statement then runs on another one. In session pooling A
  // would keep its own.
  pqxx::connection a(through_pgbouncer_);
  pqxx::connection b(through_pgbouncer_);
  pqxx::nontransaction a_tx(a);
  const std::string first = a_tx.exec1("SELECT pg_backend_pid()")[0].c_str();
  pqxx::nontransaction b_tx(b);
  b_tx.exec("BEGIN");
  const std::string b_pid = b_tx.exec1("SELECT pg_backend_pid()")[0].c_str();
  const std::string second = a_tx.exec1("SELECT pg_backend_pid()")[0].c_str();
  b_tx.exec("COMMIT");
  EXPECT_EQ(b_pid, first) << "B did not get A's idle server connection";
  EXPECT_NE(second, first);
}

TEST_F(PgBouncerTest, SlicedExportThroughPgBouncerMatchesDirectExport) {
  Server direct(testing::TestConninfo(), OneCopy());
  Server bounced(through_pgbouncer_, SlicedPlan());
  const v1::ExportRequest query = WholeDatabase();

  FileExport expected = direct.ExportFile(query);
  FileExport sliced = bounced.ExportFile(query);
  ASSERT_TRUE(expected.status.ok()) << expected.status.error_message();
  ASSERT_TRUE(sliced.status.ok()) << sliced.status.error_message();
  EXPECT_EQ(bounced.sliced_exports(), 1) << "the export was not read in slices";
  EXPECT_GT(expected.values, 0);
  EXPECT_EQ(sliced.values, expected.values);
  EXPECT_EQ(SortedValues(sliced.bytes), SortedValues(expected.bytes));

  grpc::Status direct_status, bounced_status;
  const std::vector<std::string> direct_values = direct.StreamValues(query, &direct_status);
  const std::vector<std::string> bounced_values = bounced.StreamValues(query, &bounced_status);
  ASSERT_TRUE(direct_status.ok()) << direct_status.error_message();
  ASSERT_TRUE(bounced_status.ok()) << bounced_status.error_message();
  EXPECT_EQ(bounced.sliced_exports(), 2) << "the stream was not read in slices";
  EXPECT_EQ(static_cast<int64_t>(bounced_values.size()), expected.values);
  EXPECT_TRUE(bounced_values == direct_values);
}

TEST_F(PgBouncerTest, EveryReaderImportsTheSnapshotThroughPgBouncer) {
  // A reader that cannot import the snapshot returns having read nothing (its slices go to the
  // others), which the export's values alone would not show. Here each reader waits, after its
  // first row, until every reader has read one: all three read in the one snapshot at once.
  db::ConnectionPool pool(through_pgbouncer_, 3);
  db::ReadSessionOptions options;
  options.read_plan = SlicedPlan();
  db::ReadSession session(&pool, options, std::chrono::system_clock::now() + seconds(60));
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(WholeDatabase());
  ASSERT_TRUE(params.ok()) << params.status();
  ASSERT_TRUE(session.Begin(*params, /*principal=*/nullptr).ok());
  absl::StatusOr<int> readers = session.PlanReads(/*keep_available=*/0);
  ASSERT_TRUE(readers.ok()) << readers.status();
  ASSERT_EQ(*readers, 3);

  std::mutex mu;
  std::condition_variable all_started;
  std::vector<int64_t> rows(3, 0);
  std::vector<absl::Status> statuses(3);
  std::vector<std::jthread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      statuses[i] = session.Read(i, [&](const encode::DataValueRow&) {
        std::unique_lock<std::mutex> lock(mu);
        if (++rows[i] == 1) {
          all_started.notify_all();
          all_started.wait_for(lock, seconds(10), [&] {
            return std::all_of(rows.begin(), rows.end(), [](int64_t n) { return n > 0; });
          });
        }
        return true;
      });
    });
  }
  for (std::jthread& thread : threads) thread.join();
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(statuses[i].ok()) << "reader " << i << ": " << statuses[i];
    EXPECT_GT(rows[i], 0) << "reader " << i << " read nothing";
  }
  EXPECT_TRUE(session.Finish().ok());
  int64_t expected = -1;
  ASSERT_TRUE(Server(testing::TestConninfo(), OneCopy()).Count(WholeDatabase(), &expected).ok());
  EXPECT_EQ(rows[0] + rows[1] + rows[2], expected);
}

TEST_F(PgBouncerTest, OneCopyThroughPgBouncerIsByteForByteTheDirectExport) {
  Server direct(testing::TestConninfo(), OneCopy());
  Server bounced(through_pgbouncer_, OneCopy());
  const v1::ExportRequest query = WholeDatabase();
  for (v1::Format format : {v1::FORMAT_JSON, v1::FORMAT_CSV}) {
    FileExport expected = direct.ExportFile(query, format);
    FileExport actual = bounced.ExportFile(query, format);
    ASSERT_TRUE(actual.status.ok()) << actual.status.error_message();
    EXPECT_GT(actual.values, 0);
    EXPECT_EQ(actual.values, expected.values);
    EXPECT_TRUE(actual.bytes == expected.bytes) << v1::Format_Name(format);
  }
}

TEST_F(PgBouncerTest, CountsAndLookupsThroughPgBouncer) {
  Server direct(testing::TestConninfo(), OneCopy());
  Server bounced(through_pgbouncer_, SlicedPlan());
  const v1::ExportRequest query = WholeDatabase();
  int64_t expected = -1, actual = -2;
  ASSERT_TRUE(direct.Count(query, &expected).ok());
  grpc::Status status = bounced.Count(query, &actual);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(actual, 0);
  EXPECT_EQ(actual, expected);

  // Identifiers by code, and codes in the output: lookups in both directions.
  v1::ExportRequest by_code = query;
  by_code.clear_org_unit();
  for (const std::string& code : QueryColumn(
           "SELECT code FROM organisationunit WHERE parentid IS NULL AND code IS NOT NULL")) {
    by_code.add_org_unit(code);
  }
  ASSERT_GT(by_code.org_unit_size(), 0);
  by_code.set_input_org_unit_id_scheme("CODE");
  by_code.set_id_scheme("CODE");
  FileExport direct_codes = direct.ExportFile(by_code);
  FileExport bounced_codes = bounced.ExportFile(by_code);
  ASSERT_TRUE(bounced_codes.status.ok()) << bounced_codes.status.error_message();
  EXPECT_GT(bounced_codes.values, 0);
  EXPECT_EQ(SortedValues(bounced_codes.bytes), SortedValues(direct_codes.bytes));

  // An identifier that does not exist: the same answer.
  v1::ExportRequest unknown = query;
  unknown.add_data_set("AAAAAAAAAAA");
  FileExport direct_unknown = direct.ExportFile(unknown);
  FileExport bounced_unknown = bounced.ExportFile(unknown);
  EXPECT_EQ(bounced_unknown.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(bounced_unknown.status.error_message(), direct_unknown.status.error_message());
}

TEST_F(PgBouncerTest, ConcurrentSlicedExportsThroughPgBouncer) {
  // Four exports of three readers each: 12 client connections, within PgBouncer's pool of 20.
  Server direct(testing::TestConninfo(), OneCopy());
  Server bounced(through_pgbouncer_, SlicedPlan(), /*pool_size=*/12);
  const v1::ExportRequest query = WholeDatabase();
  const nlohmann::json expected = SortedValues(direct.ExportFile(query).bytes);
  std::vector<FileExport> results(4);
  std::vector<std::jthread> clients;
  for (FileExport& result : results) {
    clients.emplace_back([&] { result = bounced.ExportFile(query); });
  }
  for (std::jthread& client : clients) client.join();
  for (const FileExport& result : results) {
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    EXPECT_EQ(SortedValues(result.bytes), expected);
  }
  EXPECT_GE(bounced.sliced_exports(), 1);
}

TEST_F(PgBouncerTest, CancelFreesAReaderQueuedInsidePgBouncerWithinAboutASecond) {
  // PgBouncer's pool has one server connection, which the first reader's transaction holds: the
  // two extra readers' first statement waits inside PgBouncer, which drops a cancel request for
  // a client that waits. Only severing their connections (QueryCanceller::kSeverAfter after the
  // first cancel request) ends them before PgBouncer's query_wait_timeout (30 s here). Their
  // first statement is a new connection's set-up ("cold" pool) or their BEGIN (idle connections
  // in the pool).
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(WholeDatabase());
  ASSERT_TRUE(params.ok()) << params.status();
  for (const bool warm : {false, true}) {
    SCOPED_TRACE(warm ? "the readers wait in BEGIN" : "the readers wait in their set-up");
    db::ConnectionPool pool(through_one_server_, 3);
    if (warm) {
      // Three idle connections, set up one after the other.
      std::vector<db::PooledConnection> idle;
      for (int i = 0; i < 3; ++i) {
        absl::StatusOr<db::PooledConnection> conn = pool.Acquire(seconds(10));
        ASSERT_TRUE(conn.ok()) << conn.status();
        idle.push_back(*std::move(conn));
      }
    }
    db::ReadSessionOptions options;
    options.read_plan = SlicedPlan();
    auto session = std::make_unique<db::ReadSession>(
        &pool, options, std::chrono::system_clock::now() + seconds(60));
    ASSERT_TRUE(session->Begin(*params, /*principal=*/nullptr).ok());
    absl::StatusOr<int> readers = session->PlanReads(/*keep_available=*/0);
    ASSERT_TRUE(readers.ok()) << readers.status();
    ASSERT_EQ(*readers, 3);

    // The first reader holds its COPY (and the server connection) until the session is
    // cancelled.
    std::atomic<bool> cancelled{false};
    std::vector<absl::Status> statuses(3);
    std::vector<std::jthread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        statuses[i] = session->Read(i, [&](const encode::DataValueRow&) {
          while (!cancelled.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          return false;
        });
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // the extra readers queue
    EXPECT_EQ(pool.in_use(), 3);
    const auto cancel = std::chrono::steady_clock::now();
    session->Cancel();
    cancelled = true;
    for (std::jthread& thread : threads) thread.join();
    const auto ended_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - cancel)
                              .count();
    // Not freed by the cancel request (that would take ~0.1 s), but by the severing, on time.
    EXPECT_GE(ended_ms, 900);
    EXPECT_LT(ended_ms, 2000);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(statuses[i].code(), absl::StatusCode::kCancelled)
          << "reader " << i << ": " << statuses[i];
    }
    session.reset();
    EXPECT_EQ(pool.in_use(), 0);
    std::printf("{\"event\":\"pgbouncer_queued_reader_cancel\",\"warm\":%s,\"ended_ms\":%lld}\n",
                warm ? "true" : "false", static_cast<long long>(ended_ms));

    // The severed connections were dropped: the pool opens new ones, and they work.
    db::ReadSession next(&pool, db::ReadSessionOptions(),
                         std::chrono::system_clock::now() + seconds(60));
    ASSERT_TRUE(next.Begin(*params, /*principal=*/nullptr).ok());
    absl::StatusOr<int64_t> count = next.Count();
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_GT(*count, 0);
    EXPECT_TRUE(next.Finish().ok());
  }
}

}  // namespace
}  // namespace dvexport
