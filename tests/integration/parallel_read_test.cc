// Exports read in slices of the datavalue table on several connections that share one snapshot
// (issue 4), against the same exports read with one COPY: the same values, each once, in the
// same document, whatever the format, compression or RPC. The one-COPY exports are checked
// against an independent SQL query by export_file_test. A real server in-process, real gRPC,
// the small demo database in a real PostgreSQL (scripts/test).

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/transaction>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/connection_pool.h"
#include "service/db/data_value_stream.h"
#include "service/db/export_scope.h"
#include "service/db/read_plan.h"
#include "service/dhis2/export_request_validator.h"
#include "service/server/export_server.h"
#include "tests/integration/test_database.h"
#include "tests/support/export_readers.h"

namespace dvexport {
namespace {

using testing::QueryColumn;
using testing::SortedValues;
using v1::ExportFileRequest;
using v1::ExportRequest;

// Slices as small as the small demo database allows, three readers.
db::ReadPlanOptions SlicedPlan() {
  db::ReadPlanOptions plan;
  plan.max_streams = 3;
  plan.min_rows = 0;
  plan.slices_per_stream = 4;
  plan.min_slice_blocks = 1;
  return plan;
}

struct FileResult {
  grpc::Status status;
  std::string bytes;
  std::optional<v1::ExportTrailer> trailer;
  std::vector<int64_t> values_so_far;
};

struct Server {
  explicit Server(const db::ReadPlanOptions& plan) {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = testing::TestConninfo();
    options.pool_size = 8;
    options.service.chunk_size = 16 * 1024;  // many chunks
    options.service.batch_bytes = 8 * 1024;
    options.service.read_plan = plan;
    auto started = server::ExportServer::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    server = *std::move(started);
    stub = v1::DataValueExport::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server->port()), grpc::InsecureChannelCredentials()));
  }

  FileResult Export(const ExportFileRequest& request) {
    FileResult result;
    grpc::ClientContext context;
    auto reader = stub->ExportFile(&context, request);
    v1::FileChunk chunk;
    while (reader->Read(&chunk)) {
      if (chunk.has_trailer()) {
        result.trailer = chunk.trailer();
      } else {
        result.bytes += chunk.data();
        result.values_so_far.push_back(chunk.values_so_far());
      }
    }
    result.status = reader->Finish();
    return result;
  }

  std::unique_ptr<server::ExportServer> server;
  std::unique_ptr<v1::DataValueExport::Stub> stub;
};

ExportRequest WholeDatabase() {
  ExportRequest query;
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

ExportFileRequest FileRequest(const ExportRequest& query, v1::Format format) {
  ExportFileRequest request;
  *request.mutable_query() = query;
  request.set_format(format);
  return request;
}

std::string Gunzip(const std::string& bytes) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  std::string out;
  char buffer[65536];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the gzip member";
  inflateEnd(&z);
  return out;
}

// The header line, then the other lines sorted.
std::vector<std::string> SortedCsvLines(const std::string& bytes) {
  std::vector<std::string> lines = absl::StrSplit(bytes, '\n');
  if (!lines.empty()) std::sort(lines.begin() + 1, lines.end());
  return lines;
}

class ParallelReadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db::ReadPlanOptions one_copy;
    one_copy.max_streams = 1;
    single_ = new Server(one_copy);
    sliced_ = new Server(SlicedPlan());
  }
  static void TearDownTestSuite() {
    delete single_;
    delete sliced_;
  }

  // Exports "request" from both servers and checks the sliced one was read in slices.
  static std::pair<FileResult, FileResult> Both(const ExportFileRequest& request,
                                                bool expect_sliced = true) {
    const int64_t sliced_before = sliced_->server->service().sliced_exports();
    FileResult one = single_->Export(request);
    FileResult many = sliced_->Export(request);
    EXPECT_TRUE(one.status.ok()) << one.status.error_message();
    EXPECT_TRUE(many.status.ok()) << many.status.error_message();
    if (expect_sliced) {
      EXPECT_EQ(sliced_->server->service().sliced_exports(), sliced_before + 1)
          << "the export was not read in slices";
    }
    EXPECT_EQ(single_->server->service().sliced_exports(), 0);
    return {std::move(one), std::move(many)};
  }

  static Server* single_;
  static Server* sliced_;
};

Server* ParallelReadTest::single_ = nullptr;
Server* ParallelReadTest::sliced_ = nullptr;

TEST_F(ParallelReadTest, SlicesCoverTheTableEndToEndAndEveryValueOnce) {
  absl::StatusOr<std::unique_ptr<db::DatabaseConnection>> conn =
      db::DatabaseConnection::Connect(testing::TestConninfo());
  ASSERT_TRUE(conn.ok()) << conn.status();
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(**conn);
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(WholeDatabase());
  ASSERT_TRUE(params.ok()) << params.status();
  absl::StatusOr<db::ExportScope> scope =
      db::ResolveExportScope(tx, (*conn)->dhis2_schema(), *params,
                             /*reader=*/nullptr);
  ASSERT_TRUE(scope.ok()) << scope.status();
  const db::IdentifierTables tables(*scope);

  auto count = [&](const std::optional<db::BlockRange>& blocks) {
    int64_t n = 0;
    // Every row is taken: the COPY is never stopped.
    absl::Status status = db::StreamDataValues(
        tx, *scope, tables, blocks, [&](const encode::DataValueRow&) { return ++n, true; },
        [] { ADD_FAILURE() << "the COPY was stopped"; });
    EXPECT_TRUE(status.ok()) << status;
    return n;
  };
  const int64_t whole = count(std::nullopt);
  ASSERT_GT(whole, 1000) << "the demo database looks empty";

  const std::vector<std::optional<db::BlockRange>> slices =
      db::PlanBlockSlices(tx, *scope, SlicedPlan());
  ASSERT_EQ(slices.size(), 12u);
  int64_t next_block = 0;
  int64_t sum = 0;
  for (size_t i = 0; i < slices.size(); ++i) {
    const std::optional<db::BlockRange>& slice = slices[i];
    ASSERT_TRUE(slice.has_value());
    EXPECT_EQ(slice->first_block, next_block);
    EXPECT_EQ(slice->end_block.has_value(), i + 1 < slices.size()) << "only the last is open";
    if (slice->end_block) {
      EXPECT_GT(*slice->end_block, slice->first_block);
      next_block = *slice->end_block;
    }
    sum += count(slice);
  }
  EXPECT_EQ(sum, whole);

  // The default plan leaves ~10,000 values to one COPY, as it does a limited export.
  const std::vector<std::optional<db::BlockRange>> default_plan =
      db::PlanBlockSlices(tx, *scope, db::ReadPlanOptions());
  EXPECT_EQ(default_plan.size(), 1u);
  EXPECT_FALSE(default_plan.front().has_value());
  scope->limit = 5;
  EXPECT_EQ(db::PlanBlockSlices(tx, *scope, SlicedPlan()).size(), 1u);
}

TEST_F(ParallelReadTest, SnapshotIdsAreCheckedBeforeBecomingSql) {
  EXPECT_TRUE(db::SetTransactionSnapshotSql("00000003-0000001B-1").ok());
  EXPECT_FALSE(db::SetTransactionSnapshotSql("").ok());
  EXPECT_FALSE(db::SetTransactionSnapshotSql("1'; DROP TABLE datavalue; --").ok());
}

TEST_F(ParallelReadTest, JsonHasTheSameValuesAndBytes) {
  auto [one, many] = Both(FileRequest(WholeDatabase(), v1::FORMAT_JSON));
  ASSERT_TRUE(many.trailer.has_value());
  EXPECT_EQ(many.bytes.size(), one.bytes.size());
  EXPECT_EQ(many.trailer->values(), one.trailer->values());
  EXPECT_EQ(SortedValues(many.bytes), SortedValues(one.bytes));
  EXPECT_EQ(many.bytes.substr(0, 16), one.bytes.substr(0, 16));
  // values_so_far only grows, and ends at the trailer's count.
  EXPECT_TRUE(std::is_sorted(many.values_so_far.begin(), many.values_so_far.end()));
  EXPECT_EQ(many.values_so_far.back(), many.trailer->values());
  EXPECT_GT(many.values_so_far.size(), 10u);
}

TEST_F(ParallelReadTest, CsvHasTheSameLines) {
  auto [one, many] = Both(FileRequest(WholeDatabase(), v1::FORMAT_CSV));
  EXPECT_EQ(many.bytes.size(), one.bytes.size());
  EXPECT_EQ(SortedCsvLines(many.bytes), SortedCsvLines(one.bytes));
}

TEST_F(ParallelReadTest, PrettyJsonHasTheSameValuesAndBytes) {
  auto [one, many] = Both(FileRequest(WholeDatabase(), v1::FORMAT_JSON_PRETTY));
  EXPECT_EQ(many.bytes.size(), one.bytes.size());
  EXPECT_EQ(SortedValues(many.bytes), SortedValues(one.bytes));
}

TEST_F(ParallelReadTest, GzipHoldsTheSameDocument) {
  ExportFileRequest request = FileRequest(WholeDatabase(), v1::FORMAT_JSON);
  request.set_compression(v1::COMPRESSION_GZIP);
  auto [one, many] = Both(request);
  ASSERT_TRUE(many.trailer.has_value());
  const std::string plain = Gunzip(many.bytes);
  EXPECT_EQ(static_cast<int64_t>(plain.size()), many.trailer->uncompressed_bytes());
  EXPECT_EQ(SortedValues(plain), SortedValues(Gunzip(one.bytes)));
}

TEST_F(ParallelReadTest, EmptyExportsAreTheSameDocument) {
  // Values last updated after 2100 match no row, though every filter resolves.
  ExportRequest query = WholeDatabase();
  query.set_last_updated("2100-01-01");
  for (v1::Format format : {v1::FORMAT_JSON, v1::FORMAT_JSON_PRETTY, v1::FORMAT_CSV}) {
    auto [one, many] = Both(FileRequest(query, format), /*expect_sliced=*/false);
    EXPECT_EQ(many.bytes, one.bytes) << v1::Format_Name(format);
    ASSERT_TRUE(many.trailer.has_value());
    EXPECT_EQ(many.trailer->values(), 0);
  }
}

// ADX groups need the order of one query: a server that slices every other export reads an ADX
// export with one COPY, and both servers write the same bytes (the order is deterministic).
TEST_F(ParallelReadTest, AdxIsReadWithOneCopyAndHasTheSameBytes) {
  ExportRequest query = WholeDatabase();
  query.clear_data_set();
  for (const std::string& ds :
       QueryColumn("SELECT uid FROM dataset WHERE code NOT LIKE 'DS_ADX%' ORDER BY uid")) {
    query.add_data_set(ds);
  }
  // The same query in JSON is read in slices (Both checks it).
  Both(FileRequest(query, v1::FORMAT_JSON));
  const int64_t sliced_before = sliced_->server->service().sliced_exports();
  auto [one, many] = Both(FileRequest(query, v1::FORMAT_ADX), /*expect_sliced=*/false);
  EXPECT_EQ(sliced_->server->service().sliced_exports(), sliced_before)
      << "the ADX export was read in slices";
  ASSERT_TRUE(many.trailer.has_value());
  EXPECT_GT(many.trailer->values(), 1000);
  EXPECT_TRUE(many.bytes == one.bytes) << "the ADX documents differ";
}

TEST_F(ParallelReadTest, TypedStreamHasTheSameValues) {
  auto read = [](Server* server, std::vector<std::string>* values) {
    grpc::ClientContext context;
    auto reader = server->stub->StreamDataValues(&context, WholeDatabase());
    v1::DataValueBatch batch;
    int64_t seen = 0;
    int batches = 0;
    bool last = false;
    while (reader->Read(&batch)) {
      EXPECT_FALSE(last) << "a batch after the last";
      seen += batch.data_values_size();
      EXPECT_EQ(batch.values_so_far(), seen);
      last = batch.last();
      ++batches;
      for (const v1::DataValue& v : batch.data_values()) {
        values->push_back(v.SerializeAsString());
      }
    }
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_TRUE(last);
    EXPECT_GT(batches, 10);
    std::sort(values->begin(), values->end());
  };
  const int64_t sliced_before = sliced_->server->service().sliced_exports();
  std::vector<std::string> one, many;
  read(single_, &one);
  read(sliced_, &many);
  EXPECT_EQ(sliced_->server->service().sliced_exports(), sliced_before + 1);
  EXPECT_EQ(many.size(), one.size());
  EXPECT_TRUE(many == one) << "the sliced stream holds other values";
}

}  // namespace
}  // namespace dvexport
