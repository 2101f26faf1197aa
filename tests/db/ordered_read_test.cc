// An ordered export (DHIS2 2.43's default order) read by ReadSession against the 2.43 demo
// (DVEXPORT_TEST_PG_243), where slices are read and sorted on a fetcher thread while the caller's
// thread writes the slice before (sorted_slices.h): whatever the slices' sizes, the sequence is
// the same, and so it is when each slice is read in two parts on two connections and merged; a
// limit and an offset cut the same sequence; a consumer that stops, or Cancel() from another
// thread, ends the read with its status and gives the connection back. ThreadSanitizer runs these
// (label "concurrency").

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.pb.h"
#include "service/db/read_session.h"
#include "service/db/sorted_slices.h"

namespace dvexport::db {
namespace {

using std::chrono::system_clock;

std::string Conninfo243() {
  const char* conninfo = std::getenv("DVEXPORT_TEST_PG_243");
  if (conninfo == nullptr) ADD_FAILURE() << "DVEXPORT_TEST_PG_243 is not set: run scripts/test";
  return conninfo == nullptr ? "" : conninfo;
}

// The first column of every row of "sql", read as the test's role from the 2.43 demo.
std::vector<std::string> Column(const std::string& sql) {
  pqxx::connection conn(Conninfo243());
  pqxx::nontransaction tx(conn);
  std::vector<std::string> column;
  for (const pqxx::row& row : tx.exec(sql)) column.push_back(row[0].c_str());
  return column;
}

// Every value of the demo (every data set under every root), in 2.43's default order.
dhis2::ExportParams DefaultOrder(std::optional<int32_t> limit = std::nullopt, int64_t offset = 0) {
  v1::ExportRequest request;
  for (const std::string& uid : Column("SELECT uid FROM dataset")) request.add_data_set(uid);
  for (const std::string& uid : Column("SELECT uid FROM organisationunit WHERE parentid IS NULL")) {
    request.add_org_unit(uid);
  }
  request.set_children(true);
  request.set_start_date("1900-01-01");
  request.set_end_date("2100-12-31");
  if (limit) request.set_limit(*limit);
  if (offset > 0) request.set_offset(offset);
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest243(request);
  EXPECT_TRUE(params.ok()) << params.status();
  return params.ok() ? *params : dhis2::ExportParams();
}

// Slices of one period each at first, growing by at most four times ("target" of one byte), each
// sorter bounded by "max_bytes" (two per export, half each).
ReadSessionOptions Slices(size_t max_bytes = size_t{48} << 20) {
  ReadSessionOptions options;
  options.read_plan.sorted_slice_target_bytes = 1;
  options.read_plan.max_sorted_slice_bytes = max_bytes;
  return options;
}

std::string KeyOf(const encode::DataValueRow& row) {
  std::string key;
  for (const encode::Text* id : {&row.data_element, &row.period, &row.org_unit,
                                 &row.category_option_combo, &row.attribute_option_combo}) {
    key.append(id->bytes).push_back('/');
  }
  return key;
}

class OrderedReadTest : public ::testing::Test {
 protected:
  // The keys of the rows read with "options", or the status.
  absl::StatusOr<std::vector<std::string>> Read(const ReadSessionOptions& options,
                                                const dhis2::ExportParams& params) {
    ReadSession session(&pool_, options, system_clock::time_point::max());
    absl::Status status = session.Begin(params, /*principal=*/nullptr);
    if (status.ok()) status = session.PlanReads(0).status();
    std::vector<std::string> keys;
    if (status.ok()) {
      EXPECT_EQ(session.scope().dhis2, 43) << "DVEXPORT_TEST_PG_243 is not a DHIS2 2.43";
      status = session.Read(0, [&](const encode::DataValueRow& row) {
        keys.push_back(KeyOf(row));
        return true;
      });
    }
    if (status.ok()) status = session.Finish();
    if (!status.ok()) return status;
    return keys;
  }

  ConnectionPool pool_{Conninfo243(), 2};
};

TEST_F(OrderedReadTest, TheSequenceIsTheSameWhateverTheSlices) {
  absl::StatusOr<std::vector<std::string>> whole = Read(ReadSessionOptions(), DefaultOrder());
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_GT(whole->size(), 1000u) << "the 2.43 demo looks empty";
  for (const size_t max_bytes : {size_t{48} << 20, size_t{8192}}) {
    SCOPED_TRACE(max_bytes);
    absl::StatusOr<std::vector<std::string>> sliced = Read(Slices(max_bytes), DefaultOrder());
    ASSERT_TRUE(sliced.ok()) << sliced.status();
    EXPECT_TRUE(*sliced == *whole) << "slices of other sizes gave another sequence";
  }
  EXPECT_EQ(pool_.in_use(), 0);
}

TEST_F(OrderedReadTest, SlicesReadInTwoPartsMergeIntoTheSequenceOfOne) {
  // One stream: one connection, one slice at a time, in one part.
  ReadSessionOptions one = Slices();
  one.read_plan.max_streams = 1;
  absl::StatusOr<std::vector<std::string>> whole = Read(one, DefaultOrder());
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_GT(whole->size(), 1000u);
  for (const size_t max_bytes : {size_t{48} << 20, size_t{16384}}) {
    SCOPED_TRACE(max_bytes);
    // Two parts at once: the second connection is in use while the rows come.
    int most_in_use = 0;
    ReadSession session(&pool_, Slices(max_bytes), system_clock::time_point::max());
    ASSERT_TRUE(session.Begin(DefaultOrder(), /*principal=*/nullptr).ok());
    ASSERT_TRUE(session.PlanReads(0).ok());
    std::vector<std::string> keys;
    ASSERT_TRUE(session
                    .Read(0,
                          [&](const encode::DataValueRow& row) {
                            most_in_use = std::max(most_in_use, pool_.in_use());
                            keys.push_back(KeyOf(row));
                            return true;
                          })
                    .ok());
    ASSERT_TRUE(session.Finish().ok());
    EXPECT_EQ(most_in_use, 2);
    EXPECT_TRUE(keys == *whole) << "the merged parts gave another sequence";
  }
  EXPECT_EQ(pool_.in_use(), 0);
}

TEST_F(OrderedReadTest, TheWriterIsToldBeforeItWaitsForTheNextSlice) {
  // One slice at a time (one stream, one sorter), one period each: the writer waits for every
  // slice but one it finds read, and is told so between the rows of one slice and the next, never
  // among them.
  ReadSessionOptions one = Slices();
  one.read_plan.max_streams = 1;
  ReadSession session(&pool_, one, system_clock::time_point::max());
  ASSERT_TRUE(session.Begin(DefaultOrder(), /*principal=*/nullptr).ok());
  ASSERT_TRUE(session.PlanReads(0).ok());
  std::vector<std::string> keys;
  std::vector<size_t> rows_at_waits;
  ASSERT_TRUE(session
                  .Read(
                      0,
                      [&](const encode::DataValueRow& row) {
                        keys.push_back(KeyOf(row));
                        return true;
                      },
                      [&] { rows_at_waits.push_back(keys.size()); })
                  .ok());
  ASSERT_TRUE(session.Finish().ok());
  absl::StatusOr<std::vector<std::string>> whole = Read(Slices(), DefaultOrder());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(keys == *whole);
  // Between slices (the demo has several periods), and before the first unless the fetcher, which
  // starts first, read it before the writer looked: never among the rows of one period.
  ASSERT_GE(rows_at_waits.size(), 2u);
  EXPECT_TRUE(std::is_sorted(rows_at_waits.begin(), rows_at_waits.end()));
  EXPECT_GT(rows_at_waits.back(), 0u);
  const auto period_of = [](const std::string& key) {
    const size_t begin = key.find('/') + 1;
    return key.substr(begin, key.find('/', begin) - begin);
  };
  for (const size_t rows : rows_at_waits) {
    ASSERT_LE(rows, keys.size());
    if (rows == 0 || rows == keys.size()) continue;
    EXPECT_NE(period_of(keys[rows - 1]), period_of(keys[rows]))
        << "told among one period's rows, after row " << rows;
  }
}

TEST_F(OrderedReadTest, LimitAndOffsetCutTheSameSequence) {
  absl::StatusOr<std::vector<std::string>> whole = Read(Slices(), DefaultOrder());
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_GT(whole->size(), 1000u);
  const int64_t total = static_cast<int64_t>(whole->size());
  struct Page {
    int32_t limit;
    int64_t offset;
  };
  for (const Page page :
       {Page{1, 0}, Page{100, 7}, Page{1000, total - 300}, Page{50, total}, Page{777, total / 2}}) {
    SCOPED_TRACE(absl::StrCat("limit ", page.limit, " offset ", page.offset));
    for (const ReadSessionOptions& options : {Slices(), Slices(8192)}) {
      absl::StatusOr<std::vector<std::string>> got =
          Read(options, DefaultOrder(page.limit, page.offset));
      ASSERT_TRUE(got.ok()) << got.status();
      const int64_t begin = std::min(page.offset, total);
      const int64_t end = std::min(begin + page.limit, total);
      EXPECT_TRUE(*got == std::vector<std::string>(whole->begin() + begin, whole->begin() + end));
    }
  }
}

TEST_F(OrderedReadTest, AConsumerThatStopsEndsTheReadAndTheConnectionIsReused) {
  for (const ReadSessionOptions& options : {Slices(), Slices(8192)}) {
    for (const int stop_after : {1, 10, 3000}) {
      ReadSession session(&pool_, options, system_clock::time_point::max());
      ASSERT_TRUE(session.Begin(DefaultOrder(), /*principal=*/nullptr).ok());
      ASSERT_TRUE(session.PlanReads(0).ok());
      int seen = 0;
      absl::Status status =
          session.Read(0, [&](const encode::DataValueRow&) { return ++seen < stop_after; });
      EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
      EXPECT_EQ(seen, stop_after);
    }
    EXPECT_EQ(pool_.in_use(), 0);
    absl::StatusOr<std::vector<std::string>> again = Read(options, DefaultOrder());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_GT(again->size(), 1000u);
  }
}

TEST_F(OrderedReadTest, CancelFromAnotherThreadEndsASlowRead) {
  ReadSession session(&pool_, Slices(), system_clock::time_point::max());
  ASSERT_TRUE(session.Begin(DefaultOrder(), /*principal=*/nullptr).ok());
  ASSERT_TRUE(session.PlanReads(0).ok());
  std::atomic<int> seen{0};
  std::atomic<bool> done{false};
  std::thread canceller([&] {
    while (seen.load() < 100 && !done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    session.Cancel();
  });
  const auto started = std::chrono::steady_clock::now();
  absl::Status status = session.Read(0, [&](const encode::DataValueRow&) {
    ++seen;
    // A slow consumer: the fetcher has read ahead and waits for a free sorter.
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    return true;
  });
  done = true;
  canceller.join();
  // Rows written from memory ask every kStopCheckRows whether the session stopped.
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_LE(seen.load(), 100 + 2 * static_cast<int>(kStopCheckRows));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

}  // namespace
}  // namespace dvexport::db
