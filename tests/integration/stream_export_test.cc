// StreamDataValues, CountDataValues and FORMAT_JSON_PRETTY end to end: a real
// dvexport server in-process, real gRPC over loopback, the small demo
// database in a real PostgreSQL (scripts/test). The typed stream is checked
// value for value against ExportFile's JSON and XML, which export_file_test checks
// against an independent SQL query; the client library is checked against
// the same server.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/export_client.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/encode/protobuf_data_value_encoder.h"
#include "service/server/export_server.h"
#include "tests/integration/test_database.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport {
namespace {

using testing::QueryColumn;
using v1::DataValue;
using v1::DataValueBatch;
using v1::ExportFileRequest;
using v1::ExportRequest;

constexpr size_t kBatchBytes = 8 * 1024;

// A data value as text, in the JSON export's form: absent is nullopt, dates
// as DHIS2's toLongGmtDate (milliseconds, truncated).
using ValueRow = std::vector<std::optional<std::string>>;

std::string LongGmtDate(const google::protobuf::Timestamp& t) {
  const std::time_t seconds = static_cast<std::time_t>(t.seconds());
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, t.nanos() / 1000000);
  return text;
}

ValueRow TypedValueToRow(const DataValue& v) {
  auto optional = [](bool has, const std::string& s) {
    return has ? std::optional<std::string>(s) : std::nullopt;
  };
  return {optional(v.has_data_element(), v.data_element()),
          v.period(),
          optional(v.has_org_unit(), v.org_unit()),
          optional(v.has_category_option_combo(), v.category_option_combo()),
          optional(v.has_attribute_option_combo(), v.attribute_option_combo()),
          optional(v.has_value(), v.value()),
          optional(v.has_stored_by(), v.stored_by()),
          LongGmtDate(v.created()),
          LongGmtDate(v.last_updated()),
          optional(v.has_comment(), v.comment()),
          v.followup() ? "true" : "false",
          v.deleted() ? "true" : "false"};
}

ValueRow JsonValueToRow(const nlohmann::json& v) {
  ValueRow row;
  for (const char* key :
       {"dataElement", "period", "orgUnit", "categoryOptionCombo", "attributeOptionCombo", "value",
        "storedBy", "created", "lastUpdated", "comment"}) {
    const nlohmann::json& field = v.at(key);
    row.push_back(field.is_null() ? std::nullopt
                                  : std::optional<std::string>(field.get<std::string>()));
  }
  row.emplace_back(v.at("followup").get<bool>() ? "true" : "false");
  row.emplace_back(v.value("deleted", false) ? "true" : "false");
  return row;
}

// A dataValue element of the XML export: an absent attribute is nullopt.
ValueRow XmlValueToRow(const test_support::XmlElement& v) {
  ValueRow row;
  for (const char* name :
       {"dataElement", "period", "orgUnit", "categoryOptionCombo", "attributeOptionCombo", "value",
        "storedBy", "created", "lastUpdated", "comment", "followUp"}) {
    const std::string* attribute = v.Attribute(name);
    row.push_back(attribute == nullptr ? std::nullopt : std::optional<std::string>(*attribute));
  }
  row.emplace_back(v.Attribute("deleted") != nullptr ? *v.Attribute("deleted") : "false");
  return row;
}

struct StreamResult {
  grpc::Status status;
  std::vector<DataValueBatch> batches;
};

class StreamExportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = testing::TestConninfo();
    options.pool_size = 4;
    options.service.batch_bytes = kBatchBytes;  // many batches even for the small database
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = started->release();
    target_ = new std::string(absl::StrCat("127.0.0.1:", server_->port()));
    stub_ = v1::DataValueExport::NewStub(
                grpc::CreateChannel(*target_, grpc::InsecureChannelCredentials()))
                .release();
    data_sets_ = new std::vector<std::string>(QueryColumn("SELECT uid FROM dataset ORDER BY uid"));
    roots_ = new std::vector<std::string>(
        QueryColumn("SELECT uid FROM organisationunit WHERE parentid IS NULL ORDER BY uid"));
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete server_;
    delete target_;
    delete data_sets_;
    delete roots_;
  }

  // Everything in the demo database.
  static ExportRequest WholeDatabase() {
    ExportRequest request;
    for (const std::string& ds : *data_sets_) request.add_data_set(ds);
    for (const std::string& ou : *roots_) request.add_org_unit(ou);
    request.set_children(true);
    request.set_start_date("1900-01-01");
    request.set_end_date("2100-12-31");
    return request;
  }

  static StreamResult Stream(const ExportRequest& request) {
    StreamResult result;
    grpc::ClientContext context;
    auto reader = stub_->StreamDataValues(&context, request);
    DataValueBatch batch;
    while (reader->Read(&batch)) result.batches.push_back(batch);
    result.status = reader->Finish();
    return result;
  }

  static std::vector<ValueRow> StreamRows(const ExportRequest& request) {
    StreamResult result = Stream(request);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    std::vector<ValueRow> rows;
    for (const DataValueBatch& batch : result.batches) {
      for (const DataValue& v : batch.data_values()) rows.push_back(TypedValueToRow(v));
    }
    return rows;
  }

  // The ExportFile bytes, after checking that the stream ended with a trailer.
  static std::string ExportFile(const ExportFileRequest& request) {
    grpc::ClientContext context;
    auto reader = stub_->ExportFile(&context, request);
    std::string bytes;
    bool trailer = false;
    v1::FileChunk chunk;
    while (reader->Read(&chunk)) {
      if (chunk.has_trailer()) {
        trailer = true;
        EXPECT_EQ(chunk.trailer().file_bytes(), static_cast<int64_t>(bytes.size()));
      } else {
        bytes += chunk.data();
      }
    }
    const grpc::Status status = reader->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(trailer);
    return bytes;
  }

  static grpc::Status Count(const ExportRequest& request, int64_t* count) {
    grpc::ClientContext context;
    v1::CountResponse response;
    grpc::Status status = stub_->CountDataValues(&context, request, &response);
    *count = response.count();
    return status;
  }

  static int64_t CountOrFail(const ExportRequest& request) {
    int64_t count = -1;
    const grpc::Status status = Count(request, &count);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return count;
  }

  static server::ExportServer* server_;
  static std::string* target_;
  static v1::DataValueExport::Stub* stub_;
  static std::vector<std::string>* data_sets_;
  static std::vector<std::string>* roots_;
};

server::ExportServer* StreamExportTest::server_ = nullptr;
std::string* StreamExportTest::target_ = nullptr;
v1::DataValueExport::Stub* StreamExportTest::stub_ = nullptr;
std::vector<std::string>* StreamExportTest::data_sets_ = nullptr;
std::vector<std::string>* StreamExportTest::roots_ = nullptr;

TEST_F(StreamExportTest, StreamAgreesWithJsonExportValueForValue) {
  for (bool include_deleted : {false, true}) {
    ExportRequest query = WholeDatabase();
    query.set_include_deleted(include_deleted);
    ExportFileRequest file_request;
    *file_request.mutable_query() = query;
    file_request.set_format(v1::FORMAT_JSON);
    const nlohmann::json document = nlohmann::json::parse(ExportFile(file_request));
    std::vector<ValueRow> from_json;
    for (const nlohmann::json& v : document.at("dataValues"))
      from_json.push_back(JsonValueToRow(v));
    std::vector<ValueRow> from_stream = StreamRows(query);
    ASSERT_GT(from_json.size(), 1000u) << "the demo database looks empty";
    std::sort(from_json.begin(), from_json.end());
    std::sort(from_stream.begin(), from_stream.end());
    ASSERT_EQ(from_stream.size(), from_json.size()) << "include_deleted " << include_deleted;
    for (size_t i = 0; i < from_json.size(); ++i) {
      ASSERT_EQ(from_stream[i], from_json[i]) << "first difference at sorted value " << i;
    }
  }
}

TEST_F(StreamExportTest, StreamAgreesWithJsonExportInEveryOutputIdScheme) {
  // Objects without a code are null in JSON and absent in the stream.
  for (const char* scheme : {"CODE", "NAME"}) {
    ExportRequest query = WholeDatabase();
    query.set_id_scheme(scheme);
    ExportFileRequest file_request;
    *file_request.mutable_query() = query;
    const nlohmann::json document = nlohmann::json::parse(ExportFile(file_request));
    std::vector<ValueRow> from_json;
    for (const nlohmann::json& v : document.at("dataValues"))
      from_json.push_back(JsonValueToRow(v));
    std::vector<ValueRow> from_stream = StreamRows(query);
    ASSERT_FALSE(from_json.empty());
    std::sort(from_json.begin(), from_json.end());
    std::sort(from_stream.begin(), from_stream.end());
    EXPECT_TRUE(from_stream == from_json) << "id scheme " << scheme;
  }
}

TEST_F(StreamExportTest, StreamAgreesWithXmlExportInEveryOutputIdScheme) {
  // Null identifiers are absent attributes in XML and absent fields in the stream; text differs
  // only where XML 1.0 has no character (U+FFFD).
  for (const char* scheme : {"UID", "CODE", "NAME"}) {
    ExportRequest query = WholeDatabase();
    query.set_id_scheme(scheme);
    query.set_include_deleted(true);
    ExportFileRequest file_request;
    *file_request.mutable_query() = query;
    file_request.set_format(v1::FORMAT_XML);
    auto document = test_support::ParseXmlStrictly(ExportFile(file_request));
    ASSERT_TRUE(document.ok()) << document.status();
    std::vector<ValueRow> from_xml;
    for (const test_support::XmlElement& v : document->root.children) {
      from_xml.push_back(XmlValueToRow(v));
    }
    std::vector<ValueRow> from_stream = StreamRows(query);
    for (ValueRow& row : from_stream) {
      for (std::optional<std::string>& field : row) {
        if (field.has_value()) *field = test_support::XmlCharactersOnly(*field);
      }
    }
    ASSERT_GT(from_xml.size(), 1000u) << "the demo database looks empty";
    std::sort(from_xml.begin(), from_xml.end());
    std::sort(from_stream.begin(), from_stream.end());
    ASSERT_EQ(from_stream.size(), from_xml.size()) << "id scheme " << scheme;
    for (size_t i = 0; i < from_xml.size(); ++i) {
      ASSERT_EQ(from_stream[i], from_xml[i])
          << "id scheme " << scheme << ": first difference at sorted value " << i;
    }
  }
}

TEST_F(StreamExportTest, IncludeDeletedStreamsDeletedValues) {
  ExportRequest query = WholeDatabase();
  query.set_include_deleted(true);
  int deleted = 0;
  for (const ValueRow& row : StreamRows(query)) deleted += *row[11] == "true";
  EXPECT_GT(deleted, 0) << "the demo database has deleted values";
  query.set_include_deleted(false);
  for (const ValueRow& row : StreamRows(query)) ASSERT_EQ(*row[11], "false");
}

TEST_F(StreamExportTest, BatchesAreBoundedInBytesAndOnlyTheLastIsLast) {
  StreamResult result = Stream(WholeDatabase());
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_GT(result.batches.size(), 10u);
  int64_t values = 0;
  for (size_t i = 0; i < result.batches.size(); ++i) {
    const DataValueBatch& batch = result.batches[i];
    values += batch.data_values_size();
    EXPECT_EQ(batch.values_so_far(), values) << "batch " << i;
    EXPECT_EQ(batch.last(), i + 1 == result.batches.size()) << "batch " << i;
    if (batch.data_values_size() > 1) {
      EXPECT_LE(batch.ByteSizeLong(), kBatchBytes) << "batch " << i;
    }
    if (i + 1 < result.batches.size()) {
      // Full: the next value (tag, length, bytes) would not have fit, with
      // the room the server keeps for last, values_so_far and the change token.
      const size_t next = result.batches[i + 1].data_values(0).ByteSizeLong();
      EXPECT_GT(
          batch.ByteSizeLong() + next + 3 + encode::ProtobufDataValueEncoder::kMaxBatchEndSize,
          kBatchBytes)
          << "batch " << i;
    }
  }
}

TEST_F(StreamExportTest, EmptyExportIsOneLastBatch) {
  ExportRequest query = WholeDatabase();
  query.set_start_date("1900-01-01");
  query.set_end_date("1900-01-31");
  StreamResult result = Stream(query);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.batches.size(), 1u);
  EXPECT_TRUE(result.batches[0].last());
  EXPECT_EQ(result.batches[0].data_values_size(), 0);
  EXPECT_EQ(result.batches[0].values_so_far(), 0);
}

TEST_F(StreamExportTest, CountEqualsTheValuesExported) {
  for (bool include_deleted : {false, true}) {
    ExportRequest query = WholeDatabase();
    query.set_include_deleted(include_deleted);
    const int64_t count = CountOrFail(query);
    EXPECT_EQ(count, static_cast<int64_t>(StreamRows(query).size()))
        << "include_deleted " << include_deleted;
    ExportFileRequest file_request;
    *file_request.mutable_query() = query;
    file_request.set_format(v1::FORMAT_JSON);
    const nlohmann::json document = nlohmann::json::parse(ExportFile(file_request));
    EXPECT_EQ(count, static_cast<int64_t>(document.at("dataValues").size()));
  }
  const int64_t without_deleted = CountOrFail(WholeDatabase());
  ExportRequest with_deleted = WholeDatabase();
  with_deleted.set_include_deleted(true);
  EXPECT_GT(CountOrFail(with_deleted), without_deleted);
}

TEST_F(StreamExportTest, CountHonoursTheLimit) {
  const int64_t all = CountOrFail(WholeDatabase());
  ExportRequest query = WholeDatabase();
  query.set_limit(17);
  EXPECT_EQ(CountOrFail(query), 17);
  EXPECT_EQ(StreamRows(query).size(), 17u);
  query.set_limit(0);
  EXPECT_EQ(CountOrFail(query), 0);
  query.set_limit(static_cast<int32_t>(all + 1000));
  EXPECT_EQ(CountOrFail(query), all);
}

// A count its client cancels as soon as it has started ends CANCELLED; on the server the call
// ends too (the door's unary reactor passes a cancel on to the pipeline's count whenever it comes,
// also before the count was attached to it), and the next count is answered.
TEST_F(StreamExportTest, CountCancelledAtOnceEndsCancelledAndTheServerGoesOn) {
  const ExportRequest request = WholeDatabase();
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext context;
    v1::CountResponse response;
    std::mutex mu;
    std::condition_variable ended;
    std::optional<grpc::Status> status;
    stub_->async()->CountDataValues(&context, &request, &response, [&](grpc::Status finished) {
      std::lock_guard<std::mutex> lock(mu);
      status = std::move(finished);
      ended.notify_all();
    });
    context.TryCancel();
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(ended.wait_for(lock, std::chrono::seconds(10), [&] { return status.has_value(); }));
    EXPECT_EQ(status->error_code(), grpc::StatusCode::CANCELLED) << status->error_message();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_->service().live_calls() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server_->service().live_calls(), 0);
  EXPECT_GT(CountOrFail(request), 0);
}

TEST_F(StreamExportTest, CountMatchesTheDatabaseForOneOrgUnitAndPeriod) {
  const std::vector<std::string> one = QueryColumn(
      "SELECT ou.uid || ' ' || to_char(pe.startdate, 'YYYYMM') FROM datavalue dv "
      "JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid "
      "JOIN period pe ON pe.periodid = dv.periodid JOIN periodtype pt "
      "ON pt.periodtypeid = pe.periodtypeid WHERE pt.name = 'Monthly' AND NOT dv.deleted "
      "AND dv.dataelementid IN (SELECT dataelementid FROM datasetelement) LIMIT 1");
  ASSERT_EQ(one.size(), 1u);
  const std::string org_unit = one[0].substr(0, one[0].find(' '));
  const std::string period = one[0].substr(one[0].find(' ') + 1);
  const std::vector<std::string> expected = QueryColumn(absl::StrCat(
      "SELECT count(*) FROM datavalue dv JOIN organisationunit ou ON ou.organisationunitid = "
      "dv.sourceid JOIN period pe ON pe.periodid = dv.periodid JOIN periodtype pt ON "
      "pt.periodtypeid = pe.periodtypeid WHERE pt.name = 'Monthly' AND NOT dv.deleted AND "
      "dv.dataelementid IN (SELECT dataelementid FROM datasetelement) AND ou.uid = '",
      org_unit, "' AND to_char(pe.startdate, 'YYYYMM') = '", period, "'"));
  ExportRequest query;
  for (const std::string& ds : *data_sets_) query.add_data_set(ds);
  query.add_org_unit(org_unit);
  query.add_period(period);
  EXPECT_EQ(absl::StrCat(CountOrFail(query)), expected.at(0));
}

TEST_F(StreamExportTest, InvalidRequestIsInvalidArgumentOnEveryRpc) {
  ExportRequest no_data_set = WholeDatabase();  // E2001: no data set, element or group
  no_data_set.clear_data_set();
  ExportRequest bad_period = WholeDatabase();
  bad_period.clear_start_date();
  bad_period.clear_end_date();
  bad_period.add_period("2024X13");
  ExportRequest negative_limit = WholeDatabase();
  negative_limit.set_limit(-1);
  for (const ExportRequest& query : {no_data_set, bad_period, negative_limit}) {
    int64_t count;
    EXPECT_EQ(Count(query, &count).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    StreamResult stream = Stream(query);
    EXPECT_EQ(stream.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(stream.batches.empty());
    ExportFileRequest file_request;
    *file_request.mutable_query() = query;
    grpc::ClientContext context;
    auto reader = stub_->ExportFile(&context, file_request);
    v1::FileChunk chunk;
    EXPECT_FALSE(reader->Read(&chunk));
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_F(StreamExportTest, UnknownIdentifierIsNotFoundForStreamAndCount) {
  ExportRequest query = WholeDatabase();
  query.add_data_set("aaaaaaaaaaa");
  int64_t count;
  EXPECT_EQ(Count(query, &count).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Stream(query).status.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(StreamExportTest, JsonPrettyParsesToTheJsonDocument) {
  ExportFileRequest request;
  *request.mutable_query() = WholeDatabase();
  request.mutable_query()->set_include_deleted(true);
  request.set_format(v1::FORMAT_JSON);
  const std::string compact = ExportFile(request);
  request.set_format(v1::FORMAT_JSON_PRETTY);
  const std::string pretty = ExportFile(request);
  EXPECT_GT(pretty.size(), compact.size());
  EXPECT_NE(pretty.find("\n      \"dataElement\": \""), std::string::npos);
  EXPECT_TRUE(nlohmann::ordered_json::parse(pretty) == nlohmann::ordered_json::parse(compact));
}

TEST_F(StreamExportTest, JsonPrettyKeepsTheSingleDataValueSetHeader) {
  ExportFileRequest request;
  request.mutable_query()->add_data_set(data_sets_->front());
  request.mutable_query()->add_org_unit(roots_->front());
  request.mutable_query()->add_period("202401");
  request.set_format(v1::FORMAT_JSON);
  const std::string compact = ExportFile(request);
  request.set_format(v1::FORMAT_JSON_PRETTY);
  const std::string pretty = ExportFile(request);
  EXPECT_EQ(pretty.rfind("{\n  \"dataSet\": ", 0), 0u) << pretty.substr(0, 80);
  EXPECT_TRUE(nlohmann::ordered_json::parse(pretty) == nlohmann::ordered_json::parse(compact));
}

// The client library against the real server.
class ExportClientStreamTest : public StreamExportTest {};

TEST_F(ExportClientStreamTest, StreamsCountsAndChecksHealth) {
  client::ExportClient client(client::CreateChannel(*target_));
  int64_t received = 0;
  int batches = 0;
  absl::StatusOr<int64_t> values =
      client.StreamDataValues(WholeDatabase(), [&](const DataValueBatch& batch) {
        received += batch.data_values_size();
        ++batches;
        return true;
      });
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, received);
  EXPECT_GT(batches, 1);
  absl::StatusOr<int64_t> count = client.CountDataValues(WholeDatabase());
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, *values);
  absl::StatusOr<client::ServingStatus> health = client.Health();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(ExportClientStreamTest, ReportsServerErrorsWithTheirCode) {
  client::ExportClient client(client::CreateChannel(*target_));
  ExportRequest query = WholeDatabase();
  query.clear_data_set();
  absl::StatusOr<int64_t> values =
      client.StreamDataValues(query, [](const DataValueBatch&) { return true; });
  EXPECT_EQ(values.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client.CountDataValues(query).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ExportClientStreamTest, ConsumerThatStopsCancelsTheStreamAndFreesTheServer) {
  // A server with one export slot: it is only free again once the stopped
  // stream has ended on the server too.
  server::ServerOptions options;
  options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
  options.listen = "127.0.0.1:0";
  options.conninfo = testing::TestConninfo();
  options.pool_size = 1;
  options.service.max_concurrent_exports = 1;
  options.service.batch_bytes = 1024;
  auto server = server::ExportServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  client::ExportClient client(client::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->port())));
  int batches = 0;
  absl::StatusOr<int64_t> values = client.StreamDataValues(
      WholeDatabase(), [&](const DataValueBatch&) { return ++batches < 2; });
  EXPECT_EQ(values.status().code(), absl::StatusCode::kCancelled) << values.status();
  EXPECT_EQ(batches, 2);
  absl::StatusOr<int64_t> count = absl::UnknownError("not called");
  for (int attempt = 0; attempt < 100; ++attempt) {
    count = client.CountDataValues(WholeDatabase());
    if (count.status().code() != absl::StatusCode::kResourceExhausted) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(count.ok()) << count.status();
}

TEST_F(ExportClientStreamTest, UnreachableServerIsUnavailable) {
  client::ExportClient client(client::CreateChannel("127.0.0.1:1"));
  client::CallOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  EXPECT_EQ(client.Health("", options).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(client.CountDataValues(WholeDatabase(), options).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dvexport
