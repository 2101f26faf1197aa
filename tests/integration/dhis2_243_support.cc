#include "tests/integration/dhis2_243_support.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdlib>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>

#include "absl/strings/str_cat.h"
#include "tests/support/postgres_timestamp.h"

namespace dvexport::testing {
namespace {

std::optional<std::string> Text(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return std::string(field.c_str(), field.size());
}

std::string Shown(const std::optional<std::string>& text) {
  return text ? absl::StrCat("'", *text, "'") : "NULL";
}

std::string TimestampText(const google::protobuf::Timestamp& timestamp) {
  return test_support::PostgresTimestampText(timestamp.seconds() * 1000000 +
                                             timestamp.nanos() / 1000);
}

ExportRow RowOf(const v1::DataValue& value) {
  ExportRow row;
  row.data_element = value.data_element();
  row.period = value.period();
  row.org_unit = value.org_unit();
  row.category_option_combo = value.category_option_combo();
  row.attribute_option_combo = value.attribute_option_combo();
  if (value.has_value()) row.value = value.value();
  if (value.has_stored_by()) row.stored_by = value.stored_by();
  row.created = TimestampText(value.created());
  row.last_updated = TimestampText(value.last_updated());
  if (value.has_comment()) row.comment = value.comment();
  row.followup = value.followup();
  row.deleted = value.deleted();
  return row;
}

// The rank of each "key" by "order" (equal keys, equal ranks).
std::map<std::string, int64_t> Ranks(pqxx::nontransaction& tx, const std::string& table,
                                     const std::string& key, const std::string& order) {
  std::map<std::string, int64_t> ranks;
  for (const pqxx::row& row : tx.exec(absl::StrCat("SELECT ", key, ", dense_rank() OVER (ORDER BY ",
                                                   order, ") FROM ", table))) {
    ranks[row[0].c_str()] = row[1].as<int64_t>();
  }
  return ranks;
}

int64_t RankOf(const std::map<std::string, int64_t>& ranks, const std::string& key) {
  auto found = ranks.find(key);
  EXPECT_NE(found, ranks.end()) << "unknown id " << key;
  return found == ranks.end() ? -1 : found->second;
}

}  // namespace

std::string Conninfo243() {
  const char* conninfo = std::getenv("DVEXPORT_TEST_PG_243");
  return conninfo == nullptr ? "" : conninfo;
}

std::string Describe(const ExportRow& row) {
  return absl::StrCat(
      row.data_element, " ", row.period, " ", row.org_unit, " ", row.category_option_combo, " ",
      row.attribute_option_combo, " value=", Shown(row.value), " storedby=", Shown(row.stored_by),
      " created=", row.created, " lastupdated=", row.last_updated, " comment=", Shown(row.comment),
      " followup=", row.followup ? (*row.followup ? "true" : "false") : "NULL",
      " deleted=", row.deleted ? "true" : "false");
}

std::vector<ExportRow> QueryDhis2Rows(const std::string& conninfo, const std::string& sql) {
  std::vector<ExportRow> rows;
  try {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    for (const pqxx::row& r : tx.exec(sql)) {
      ExportRow row;
      row.data_element = r["deid"].c_str();
      row.period = r["iso"].c_str();
      row.org_unit = r["ouid"].c_str();
      row.category_option_combo = r["cocid"].c_str();
      row.attribute_option_combo = r["aocid"].c_str();
      row.value = Text(r["value"]);
      row.stored_by = Text(r["storedby"]);
      row.created = r["created"].c_str();
      row.last_updated = r["lastupdated"].c_str();
      row.comment = Text(r["comment"]);
      if (!r["followup"].is_null()) row.followup = r["followup"].as<bool>();
      row.deleted = r["deleted"].as<bool>();
      rows.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "DHIS2's query failed: " << e.what() << "\n" << sql;
  }
  return rows;
}

std::vector<ExportRow> FollowupNullAsFalse(std::vector<ExportRow> rows) {
  for (ExportRow& row : rows) row.followup = row.followup.value_or(false);
  return rows;
}

void ExpectSameMultiset(std::vector<ExportRow> got, std::vector<ExportRow> want,
                        const std::string& what) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  if (got == want) return;
  std::vector<ExportRow> extra, missing;
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  std::string shown;
  for (size_t i = 0; i < std::min<size_t>(extra.size(), 5); ++i) {
    absl::StrAppend(&shown, "\n  only dvexport: ", Describe(extra[i]));
  }
  for (size_t i = 0; i < std::min<size_t>(missing.size(), 5); ++i) {
    absl::StrAppend(&shown, "\n  only DHIS2:    ", Describe(missing[i]));
  }
  ADD_FAILURE() << what << ": dvexport " << got.size() << " values, DHIS2 " << want.size() << "; "
                << extra.size() << " only in dvexport, " << missing.size() << " only in DHIS2"
                << shown;
}

void ExpectSameSequence(const std::vector<ExportRow>& got, const std::vector<ExportRow>& want,
                        const std::string& what) {
  if (got == want) return;
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  ADD_FAILURE() << what << ": dvexport " << got.size() << " values, DHIS2 " << want.size()
                << "; first difference at " << i
                << "\n  dvexport: " << (i < got.size() ? Describe(got[i]) : "(end)")
                << "\n  DHIS2:    " << (i < want.size() ? Describe(want[i]) : "(end)");
}

OrderKeys::OrderKeys(const std::string& conninfo) {
  try {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    period_ = Ranks(tx, "period", "iso", "startdate, enddate");
    org_unit_ = Ranks(tx, "organisationunit", "uid", "path");
    data_element_ = Ranks(tx, "dataelement", "uid", "uid");
    option_combo_ = Ranks(tx, "categoryoptioncombo", "uid", "uid");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "reading the order's ranks: " << e.what();
  }
}

std::vector<int64_t> OrderKeys::Of(const ExportRow& row,
                                   const std::vector<v1::ExportOrder>& orders) const {
  std::vector<int64_t> key;
  std::vector<v1::ExportOrder> seen;
  for (const v1::ExportOrder order : orders) {
    if (std::find(seen.begin(), seen.end(), order) != seen.end()) continue;
    seen.push_back(order);
    switch (order) {
      case v1::EXPORT_ORDER_PE:
        key.push_back(RankOf(period_, row.period));
        break;
      case v1::EXPORT_ORDER_OU:
        key.push_back(RankOf(org_unit_, row.org_unit));
        break;
      case v1::EXPORT_ORDER_DE:
        key.push_back(RankOf(data_element_, row.data_element));
        break;
      case v1::EXPORT_ORDER_AOC:
        key.push_back(RankOf(option_combo_, row.attribute_option_combo));
        break;
      case v1::EXPORT_ORDER_CREATED:
        key.push_back(test_support::PostgresTimestampMicros(row.created));
        break;
      default:
        ADD_FAILURE() << "no column for order " << order;
    }
  }
  return key;
}

std::vector<std::vector<int64_t>> OrderKeys::Of(const std::vector<ExportRow>& rows,
                                                const std::vector<v1::ExportOrder>& orders) const {
  std::vector<std::vector<int64_t>> keys;
  for (const ExportRow& row : rows) keys.push_back(Of(row, orders));
  return keys;
}

Server243::Server243(const std::string& conninfo, const db::ReadPlanOptions& read_plan) {
  server::ServerOptions options;
  options.service.read_plan = read_plan;
  options.service.auth = pipeline::AuthMode::kNone;  // a superuser's export
  options.listen = "127.0.0.1:0";
  options.http.listen = "127.0.0.1:0";
  options.conninfo = conninfo;
  options.pool_size = 2;
  absl::StatusOr<std::unique_ptr<server::ExportServer>> started =
      server::ExportServer::Start(options);
  if (!started.ok()) {
    ADD_FAILURE() << started.status();
    return;
  }
  server_ = *std::move(started);
  stub_ = v1::DataValueExport::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials()));
}

Server243::~Server243() = default;

absl::StatusOr<std::vector<ExportRow>> Server243::Stream(const v1::ExportRequest& query) {
  if (stub_ == nullptr) return absl::UnavailableError("no server");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  std::unique_ptr<grpc::ClientReader<v1::DataValueBatch>> reader =
      stub_->StreamDataValues(&context, query);
  std::vector<ExportRow> rows;
  v1::DataValueBatch batch;
  bool last = false;
  while (reader->Read(&batch)) {
    for (const v1::DataValue& value : batch.data_values()) rows.push_back(RowOf(value));
    last = batch.last();
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  if (!last) return absl::DataLossError("the stream ended without its last batch");
  return rows;
}

absl::StatusOr<std::string> Server243::ExportFile(const v1::ExportRequest& query,
                                                  v1::Format format) {
  if (stub_ == nullptr) return absl::UnavailableError("no server");
  v1::ExportFileRequest request;
  *request.mutable_query() = query;
  request.set_format(format);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  std::unique_ptr<grpc::ClientReader<v1::FileChunk>> reader = stub_->ExportFile(&context, request);
  std::string file;
  bool trailer = false;
  v1::FileChunk chunk;
  while (reader->Read(&chunk)) {
    if (chunk.has_trailer()) {
      trailer = true;
    } else {
      file += chunk.data();
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  if (!trailer) return absl::DataLossError("the file ended without its trailer");
  return file;
}

std::pair<int, std::string> Server243::HttpGet(const std::string& target) {
  namespace net = boost::asio;
  namespace bhttp = boost::beast::http;
  if (server_ == nullptr) return {0, "no server"};
  net::io_context io;
  net::ip::tcp::socket socket(io);
  boost::beast::error_code error;
  socket.connect(
      {net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(server_->http_port())},
      error);
  if (error) return {0, error.message()};
  bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target, 11};
  request.set(bhttp::field::host, "127.0.0.1");
  request.keep_alive(false);
  bhttp::write(socket, request, error);
  boost::beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(256 * 1024 * 1024);
  bhttp::read(socket, buffer, parser, error);
  if (error && error != bhttp::error::end_of_stream) return {0, error.message()};
  return {parser.get().result_int(), parser.get().body()};
}

}  // namespace dvexport::testing
