// The pipeline without either door: Export::StartFile, Export::StartStream and Count against the
// demo database in a real PostgreSQL (scripts/test sets DVEXPORT_TEST_PG), pulled by a consumer
// of the test's own as a door pulls (TakeNext once Ready, Sent for every chunk taken). The bytes
// and statuses are those the gRPC door's tests (tests/integration) expect for the same requests.

#include "service/pipeline/export.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dvexport/v1/export.pb.h"
#include "service/db/connection_pool.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/count.h"
#include "service/pipeline/export_pipeline.h"
#include "tests/integration/test_database.h"

namespace dvexport::pipeline {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A door of the test's own: Ready wakes the thread that pulls.
class TestConsumer final : public ExportConsumer {
 public:
  void Ready() override {
    std::lock_guard<std::mutex> lock(mu_);
    ready_ = true;
    changed_.notify_all();
  }

  void Abort(const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = status;
    changed_.notify_all();
  }

  // Waits for the next Ready; false after 30 s without one.
  bool AwaitReady() {
    std::unique_lock<std::mutex> lock(mu_);
    const bool ready = changed_.wait_for(lock, seconds(30), [this] { return ready_; });
    ready_ = false;
    return ready;
  }

  std::optional<absl::Status> aborted() {
    std::lock_guard<std::mutex> lock(mu_);
    return aborted_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool ready_ = false;
  std::optional<absl::Status> aborted_;
};

// What an export gave its door.
struct Pulled {
  std::vector<Chunk> chunks;
  absl::Status status = absl::UnknownError("the export never reached kDone");
  bool done = false;
};

// Pulls chunks as a door does (TakeNext once Ready, Sent for each chunk) until kDone, or until
// "max_chunks" were taken (then the export is left running: the caller ends it).
void Pull(TestConsumer* consumer, Export* export_call, Pulled* pulled,
          size_t max_chunks = SIZE_MAX) {
  while (pulled->chunks.size() < max_chunks) {
    Chunk chunk;
    switch (export_call->TakeNext(&chunk)) {
      case Export::Next::kChunk:
        export_call->Sent(chunk.bytes.size());
        pulled->chunks.push_back(std::move(chunk));
        break;
      case Export::Next::kEmpty:
        ASSERT_TRUE(consumer->AwaitReady()) << "no Ready within 30 s after kEmpty";
        break;
      case Export::Next::kDone:
        pulled->status = export_call->status();
        pulled->done = true;
        return;
    }
  }
}

// The file's bytes (every kFileData chunk) and its trailer.
struct File {
  std::string bytes;
  std::optional<dvexport::v1::ExportTrailer> trailer;
};

File FileOf(const Pulled& pulled) {
  File file;
  for (const Chunk& chunk : pulled.chunks) {
    EXPECT_FALSE(file.trailer.has_value()) << "a chunk after the trailer";
    if (chunk.kind == Chunk::Kind::kFileTrailer) {
      file.trailer.emplace();
      EXPECT_TRUE(file.trailer->ParseFromString(chunk.bytes));
    } else {
      EXPECT_EQ(chunk.kind, Chunk::Kind::kFileData);
      file.bytes += chunk.bytes;
    }
  }
  return file;
}

// "Basic <base64 of user:password>".
std::string Basic(const std::string& user, const std::string& password) {
  return absl::StrCat("Basic ", absl::Base64Escape(absl::StrCat(user, ":", password)));
}

class PipelineExportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_sets_ =
        new std::vector<std::string>(testing::QueryColumn("SELECT uid FROM dataset ORDER BY uid"));
    roots_ = new std::vector<std::string>(testing::QueryColumn(
        "SELECT uid FROM organisationunit WHERE parentid IS NULL ORDER BY uid"));
  }

  static void TearDownTestSuite() {
    delete data_sets_;
    delete roots_;
  }

  // A pipeline on a pool of its own, its call log in a temporary file.
  void StartPipeline(AuthMode auth = AuthMode::kNone) {
    PipelineOptions options;
    options.auth = auth;
    options.chunk_size = 16 * 1024;  // many chunks even for small exports
    options.max_concurrent_exports = 2;
    log_file_ = std::tmpfile();
    ASSERT_NE(log_file_, nullptr);
    pool_ = std::make_unique<db::ConnectionPool>(testing::TestConninfo(), 4);
    log_ = std::make_unique<CallLog>(nullptr, log_file_);
    pipeline_ = std::make_unique<ExportPipeline>(pool_.get(), options, log_.get());
  }

  // Every call ended (its threads joined) before the pipeline goes.
  void StopPipeline() {
    if (pipeline_ != nullptr) {
      EXPECT_TRUE(pipeline_->WaitForCalls(milliseconds(10000)));
    }
    pipeline_.reset();
    log_.reset();
    pool_.reset();
    if (log_file_ != nullptr) std::fclose(log_file_);
    log_file_ = nullptr;
  }

  void SetUp() override { StartPipeline(); }
  void TearDown() override { StopPipeline(); }

  // The call log's lines so far.
  std::vector<std::string> LogLines() {
    std::fflush(log_file_);
    std::rewind(log_file_);
    std::vector<std::string> lines;
    std::string line;
    for (int c; (c = std::fgetc(log_file_)) != EOF;) {
      if (c == '\n') {
        lines.push_back(std::move(line));
        line.clear();
      } else {
        line.push_back(static_cast<char>(c));
      }
    }
    std::fseek(log_file_, 0, SEEK_END);
    return lines;
  }

  static CallOrigin Origin() {
    CallOrigin origin;
    origin.transport = "test";
    origin.peer = NetworkPeer::Ipv4({127, 0, 0, 1}, 5555);
    return origin;
  }

  // Every data set, every root with its children, every period.
  static dvexport::v1::ExportRequest WholeDatabase() {
    dvexport::v1::ExportRequest query;
    for (const std::string& ds : *data_sets_) query.add_data_set(ds);
    for (const std::string& ou : *roots_) query.add_org_unit(ou);
    query.set_children(true);
    query.set_start_date("1900-01-01");
    query.set_end_date("2100-12-31");
    return query;
  }

  // The values WholeDatabase() selects (not deleted), counted by PostgreSQL alone.
  static int64_t WholeDatabaseValues() {
    std::vector<std::string> under_roots;
    for (const std::string& root : *roots_) {
      under_roots.push_back(absl::StrCat(
          "ou.path LIKE (SELECT path FROM organisationunit WHERE uid = '", root, "') || '%'"));
    }
    const std::vector<std::string> count = testing::QueryColumn(absl::StrCat(
        "SELECT count(*) FROM datavalue dv "
        "JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid "
        "JOIN period pe ON pe.periodid = dv.periodid "
        "WHERE NOT dv.deleted AND dv.dataelementid IN (SELECT dse.dataelementid FROM "
        "datasetelement dse JOIN dataset ds ON ds.datasetid = dse.datasetid WHERE ds.uid IN ('",
        absl::StrJoin(*data_sets_, "','"), "')) AND (", absl::StrJoin(under_roots, " OR "),
        ") AND pe.startdate >= '1900-01-01' AND pe.enddate <= '2100-12-31'"));
    EXPECT_EQ(count.size(), 1u);
    return count.empty() ? -1 : std::stoll(count[0]);
  }

  static dvexport::v1::ExportFileRequest FileRequest(dvexport::v1::Format format) {
    dvexport::v1::ExportFileRequest request;
    request.set_format(format);
    *request.mutable_query() = WholeDatabase();
    return request;
  }

  // Runs an ExportFile to its end.
  Pulled RunFile(const absl::StatusOr<dvexport::v1::ExportFileRequest>& request,
                 CallOrigin origin = Origin()) {
    TestConsumer consumer;
    std::unique_ptr<Export> export_call =
        Export::StartFile(pipeline_.get(), std::move(origin), request, &consumer);
    Pulled pulled;
    Pull(&consumer, export_call.get(), &pulled);
    EXPECT_TRUE(pulled.done);
    EXPECT_FALSE(consumer.aborted().has_value());
    return pulled;
  }

  // Runs a StreamDataValues to its end.
  Pulled RunStream(const absl::StatusOr<dvexport::v1::ExportRequest>& request) {
    TestConsumer consumer;
    std::unique_ptr<Export> export_call =
        Export::StartStream(pipeline_.get(), Origin(), request, &consumer);
    Pulled pulled;
    Pull(&consumer, export_call.get(), &pulled);
    EXPECT_TRUE(pulled.done);
    return pulled;
  }

  // Runs a CountDataValues to its end.
  absl::StatusOr<int64_t> RunCount(const absl::StatusOr<dvexport::v1::ExportRequest>& request,
                                   CallOrigin origin = Origin()) {
    std::mutex mu;
    std::condition_variable done;
    std::optional<absl::StatusOr<int64_t>> answer;
    std::unique_ptr<Count> count = Count::Start(pipeline_.get(), std::move(origin), request,
                                                [&](absl::StatusOr<int64_t> counted) {
                                                  std::lock_guard<std::mutex> lock(mu);
                                                  answer = std::move(counted);
                                                  done.notify_all();
                                                });
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(done.wait_for(lock, seconds(30), [&] { return answer.has_value(); }));
    return answer.value_or(absl::DeadlineExceededError("no answer within 30 s"));
  }

  static std::vector<std::string>* data_sets_;
  static std::vector<std::string>* roots_;
  std::FILE* log_file_ = nullptr;
  std::unique_ptr<db::ConnectionPool> pool_;
  std::unique_ptr<CallLog> log_;
  std::unique_ptr<ExportPipeline> pipeline_;
};

std::vector<std::string>* PipelineExportTest::data_sets_ = nullptr;
std::vector<std::string>* PipelineExportTest::roots_ = nullptr;

// ExportFileTest.XmlWithoutValuesIsAnEmptyRootElement, without the gRPC door.
TEST_F(PipelineExportTest, FileWithoutValuesIsTheBytesTheGrpcDoorSends) {
  dvexport::v1::ExportFileRequest request = FileRequest(dvexport::v1::FORMAT_XML);
  request.mutable_query()->set_limit(0);
  const Pulled pulled = RunFile(request);
  ASSERT_TRUE(pulled.status.ok()) << pulled.status;
  const File file = FileOf(pulled);
  EXPECT_EQ(file.bytes,
            "<?xml version='1.0' encoding='UTF-8'?>"
            "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\"/>");
  ASSERT_TRUE(file.trailer.has_value());
  EXPECT_EQ(file.trailer->values(), 0);
  EXPECT_EQ(file.trailer->file_bytes(), static_cast<int64_t>(file.bytes.size()));
  // Logged before kDone, with the bytes the door reported sent.
  const std::vector<std::string> lines = LogLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"rpc\":\"ExportFile\",\"transport\":\"test\",\"peer\":\"ipv4:127.0.0.1:"
                          "5555\",\"client\":\"127.0.0.1\",\"auth\":\"none\""),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"format\":\"FORMAT_XML\",\"compression\":\"COMPRESSION_UNSPECIFIED\","
                          "\"values\":0,\"bytes\":"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"status\":\"OK\"}"), std::string::npos) << lines[0];
}

TEST_F(PipelineExportTest, FileStreamAndCountAgreeWithTheDatabase) {
  const int64_t expected = WholeDatabaseValues();
  ASSERT_GT(expected, 1000) << "the demo database looks empty";

  const Pulled file_pulled = RunFile(FileRequest(dvexport::v1::FORMAT_JSON));
  ASSERT_TRUE(file_pulled.status.ok()) << file_pulled.status;
  EXPECT_GT(file_pulled.chunks.size(), 2u) << "16 KiB chunks: several for the whole database";
  const File file = FileOf(file_pulled);
  ASSERT_TRUE(file.trailer.has_value());
  EXPECT_EQ(nlohmann::json::parse(file.bytes).at("dataValues").size(),
            static_cast<size_t>(expected));
  EXPECT_EQ(file.trailer->values(), expected);
  EXPECT_EQ(file.trailer->file_bytes(), static_cast<int64_t>(file.bytes.size()));
  EXPECT_EQ(file_pulled.chunks.back().values_so_far, expected);

  const Pulled stream_pulled = RunStream(WholeDatabase());
  ASSERT_TRUE(stream_pulled.status.ok()) << stream_pulled.status;
  int64_t streamed = 0;
  for (size_t i = 0; i < stream_pulled.chunks.size(); ++i) {
    const Chunk& chunk = stream_pulled.chunks[i];
    ASSERT_EQ(chunk.kind, Chunk::Kind::kBatch);
    dvexport::v1::DataValueBatch batch;
    ASSERT_TRUE(batch.ParseFromString(chunk.bytes)) << "batch " << i;
    streamed += batch.data_values_size();
    EXPECT_EQ(batch.values_so_far(), streamed) << "batch " << i;
    EXPECT_EQ(batch.last(), i + 1 == stream_pulled.chunks.size()) << "batch " << i;
    if (batch.last()) {
      EXPECT_FALSE(batch.change_token().empty());
    }
  }
  EXPECT_EQ(streamed, expected);

  const absl::StatusOr<int64_t> counted = RunCount(WholeDatabase());
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(*counted, expected);

  // One line per call, in order, with what each counted.
  const std::vector<std::string> lines = LogLines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("\"rpc\":\"ExportFile\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("\"rpc\":\"StreamDataValues\""), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("\"rpc\":\"CountDataValues\""), std::string::npos) << lines[2];
  for (const std::string& line : lines) {
    EXPECT_NE(line.find(absl::StrCat("\"values\":", expected, ",")), std::string::npos) << line;
    EXPECT_NE(line.find("\"status\":\"OK\"}"), std::string::npos) << line;
  }
}

TEST_F(PipelineExportTest, BadRequestIsRefusedBeforeTheFirstChunk) {
  dvexport::v1::ExportFileRequest no_data = FileRequest(dvexport::v1::FORMAT_JSON);
  no_data.mutable_query()->clear_data_set();
  Pulled pulled = RunFile(no_data);
  EXPECT_TRUE(pulled.chunks.empty());
  EXPECT_EQ(pulled.status.code(), absl::StatusCode::kInvalidArgument) << pulled.status;
  EXPECT_NE(pulled.status.message().find("E2001: At least one data element, data set or data "
                                         "element group must be specified"),
            std::string::npos)
      << pulled.status;

  dvexport::v1::ExportFileRequest level = FileRequest(dvexport::v1::FORMAT_JSON);
  level.set_compression(dvexport::v1::COMPRESSION_GZIP);
  level.set_compression_level(10);
  pulled = RunFile(level);
  EXPECT_TRUE(pulled.chunks.empty());
  EXPECT_EQ(pulled.status.code(), absl::StatusCode::kInvalidArgument) << pulled.status;
  EXPECT_NE(pulled.status.message().find("compression_level"), std::string::npos) << pulled.status;

  // A request the door could not read ends with the door's status.
  pulled = RunStream(absl::InvalidArgumentError("the request is not protobuf"));
  EXPECT_TRUE(pulled.chunks.empty());
  EXPECT_EQ(pulled.status, absl::InvalidArgumentError("the request is not protobuf"));

  dvexport::v1::ExportRequest unknown = WholeDatabase();
  unknown.add_data_set("aaaaaaaaaaa");
  pulled = RunStream(unknown);
  EXPECT_TRUE(pulled.chunks.empty());
  EXPECT_EQ(pulled.status.code(), absl::StatusCode::kNotFound) << pulled.status;
  EXPECT_NE(pulled.status.message().find("data_set: \"aaaaaaaaaaa\""), std::string::npos)
      << pulled.status;
  EXPECT_EQ(RunCount(unknown).status().code(), absl::StatusCode::kNotFound);

  // Every refusal logged, none holding a slot now.
  EXPECT_EQ(LogLines().size(), 5u);
  EXPECT_EQ(pipeline_->active_exports(), 0);
}

TEST_F(PipelineExportTest, UnauthenticatedIsRefusedBeforeTheFirstChunk) {
  StopPipeline();
  StartPipeline(AuthMode::kDhis2);
  // No credentials at all.
  Pulled pulled = RunFile(FileRequest(dvexport::v1::FORMAT_JSON));
  EXPECT_TRUE(pulled.chunks.empty());
  EXPECT_EQ(pulled.status.code(), absl::StatusCode::kUnauthenticated) << pulled.status;

  // A user that does not exist: DHIS2's message, verified against the database.
  CallOrigin origin = Origin();
  origin.credentials.authorization = {Basic("pipeline_nobody_at_all", "wrong")};
  pulled = RunFile(FileRequest(dvexport::v1::FORMAT_JSON), origin);
  EXPECT_TRUE(pulled.chunks.empty());
  EXPECT_EQ(pulled.status.code(), absl::StatusCode::kUnauthenticated) << pulled.status;
  EXPECT_EQ(pulled.status.message(), "Unauthorized");
  // An invalid request is not told to a caller without an identity.
  dvexport::v1::ExportRequest no_data = WholeDatabase();
  no_data.clear_data_set();
  const absl::Status counted = RunCount(no_data, origin).status();
  EXPECT_EQ(counted.code(), absl::StatusCode::kUnauthenticated) << counted;
  EXPECT_EQ(counted.message(), "Unauthorized");

  const std::vector<std::string> lines = LogLines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("\"tried_user\":\"pipeline_nobody_at_all\""), std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("\"rpc\":\"CountDataValues\""), std::string::npos) << lines[2];
  for (const std::string& line : lines) {
    EXPECT_NE(line.find("\"status\":\"UNAUTHENTICATED\""), std::string::npos) << line;
  }
}

TEST_F(PipelineExportTest, CancelMidExportEndsWithTheCancelStatus) {
  TestConsumer consumer;
  std::unique_ptr<Export> export_call = Export::StartFile(
      pipeline_.get(), Origin(), FileRequest(dvexport::v1::FORMAT_JSON), &consumer);
  Pulled pulled;
  Pull(&consumer, export_call.get(), &pulled, /*max_chunks=*/1);
  ASSERT_EQ(pulled.chunks.size(), 1u);
  ASSERT_FALSE(pulled.done);
  EXPECT_EQ(pipeline_->active_exports(), 1);
  // The readers wait for the door (4 chunks queued at most): the export cannot have ended.
  export_call->Cancel(CallCancelledError());
  Pull(&consumer, export_call.get(), &pulled);
  ASSERT_TRUE(pulled.done);
  EXPECT_EQ(pulled.status, CallCancelledError());
  EXPECT_FALSE(FileOf(pulled).trailer.has_value()) << "a cancelled export has no trailer";
  EXPECT_EQ(pipeline_->active_exports(), 0);
  export_call.reset();
  EXPECT_EQ(pipeline_->live_calls(), 0);
  const std::vector<std::string> lines = LogLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"status\":\"CANCELLED\",\"message\":\"the call was cancelled (by the "
                          "client, its deadline or shutdown)\"}"),
            std::string::npos)
      << lines[0];
}

}  // namespace
}  // namespace dvexport::pipeline
