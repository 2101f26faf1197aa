// ExportFile end to end: a real dvexport server in-process, real gRPC over
// loopback, the demo database in a real PostgreSQL (scripts/test). Every
// export is compared with an independent SQL query of the same data, written
// the way DHIS2 2.42 joins it (reference §2), with ISO periods and dates
// computed by PostgreSQL rather than by dvexport.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/server/export_server.h"
#include "tests/integration/test_database.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport {
namespace {

using testing::QueryAll;
using testing::QueryColumn;
using testing::SqlRow;
using v1::ExportFileRequest;

// ISO period ids computed by PostgreSQL from the reference table (§1.3),
// independently of dvexport's C++: y, m, and for weeks the year and week of
// the week's fourth day (WeekFields with minimal days 4).
constexpr char kIsoPeriodSql[] =
    "CASE pt.name "
    "WHEN 'Daily' THEN to_char(pe.startdate, 'YYYYMMDD') "
    "WHEN 'Weekly' THEN %W% "
    "WHEN 'WeeklyWednesday' THEN replace(%W%, 'W', 'WedW') "
    "WHEN 'WeeklyThursday' THEN replace(%W%, 'W', 'ThuW') "
    "WHEN 'WeeklySaturday' THEN replace(%W%, 'W', 'SatW') "
    "WHEN 'WeeklySunday' THEN replace(%W%, 'W', 'SunW') "
    "WHEN 'BiWeekly' THEN extract(isoyear FROM pe.startdate)::int || 'BiW' || "
    "  (extract(week FROM pe.startdate)::int / 2 + 1) "
    "WHEN 'Monthly' THEN to_char(pe.startdate, 'YYYYMM') "
    "WHEN 'BiMonthly' THEN to_char(pe.startdate, 'YYYY') || "
    "  lpad(((extract(month FROM pe.startdate)::int + 1) / 2)::text, 2, '0') || 'B' "
    "WHEN 'Quarterly' THEN to_char(pe.startdate, 'YYYY') || 'Q' || "
    "  extract(quarter FROM pe.startdate)::int "
    "WHEN 'QuarterlyNov' THEN CASE extract(month FROM pe.startdate)::int "
    "  WHEN 11 THEN (extract(year FROM pe.startdate)::int + 1) || 'NovQ1' "
    "  WHEN 2 THEN to_char(pe.startdate, 'YYYY') || 'NovQ2' "
    "  WHEN 5 THEN to_char(pe.startdate, 'YYYY') || 'NovQ3' "
    "  WHEN 8 THEN to_char(pe.startdate, 'YYYY') || 'NovQ4' END "
    "WHEN 'SixMonthly' THEN to_char(pe.startdate, 'YYYY') || "
    "  CASE extract(month FROM pe.startdate)::int WHEN 1 THEN 'S1' WHEN 7 THEN 'S2' END "
    "WHEN 'SixMonthlyApril' THEN to_char(pe.startdate, 'YYYY') || "
    "  CASE extract(month FROM pe.startdate)::int WHEN 4 THEN 'AprilS1' WHEN 10 THEN 'AprilS2' "
    "  END "
    "WHEN 'SixMonthlyNov' THEN CASE extract(month FROM pe.startdate)::int "
    "  WHEN 11 THEN (extract(year FROM pe.startdate)::int + 1) || 'NovS1' "
    "  WHEN 5 THEN to_char(pe.startdate, 'YYYY') || 'NovS2' END "
    "WHEN 'Yearly' THEN to_char(pe.startdate, 'YYYY') "
    "WHEN 'FinancialApril' THEN to_char(pe.startdate, 'YYYY') || 'April' "
    "WHEN 'FinancialJuly' THEN to_char(pe.startdate, 'YYYY') || 'July' "
    "WHEN 'FinancialSep' THEN to_char(pe.startdate, 'YYYY') || 'Sep' "
    "WHEN 'FinancialOct' THEN to_char(pe.startdate, 'YYYY') || 'Oct' "
    "WHEN 'FinancialNov' THEN (extract(year FROM pe.startdate)::int + 1) || 'Nov' "
    "END";

std::string IsoPeriodSql() {
  return absl::StrReplaceAll(kIsoPeriodSql,
                             {{"%W%",
                               "(extract(year FROM pe.startdate + 3)::int || 'W' || "
                               "((extract(doy FROM pe.startdate + 3)::int - 1) / 7 + 1))"}});
}

// The independent query: DHIS2's six-way join (reference §2), ids as UIDs,
// dates as DHIS2's toLongGmtDate.
std::string OracleSql(const std::string& where) {
  return absl::StrCat(
      "SELECT de.uid, ", IsoPeriodSql(),
      ", "
      "ou.uid, coc.uid, aoc.uid, dv.value, dv.storedby, "
      "to_char(date_trunc('milliseconds', dv.created), 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+0000\"'), "
      "to_char(date_trunc('milliseconds', dv.lastupdated), "
      "  'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+0000\"'), "
      "dv.comment, coalesce(dv.followup, false)::text, dv.deleted::text "
      "FROM datavalue dv "
      "JOIN dataelement de ON dv.dataelementid = de.dataelementid "
      "JOIN period pe ON dv.periodid = pe.periodid "
      "JOIN periodtype pt ON pe.periodtypeid = pt.periodtypeid "
      "JOIN organisationunit ou ON dv.sourceid = ou.organisationunitid "
      "JOIN categoryoptioncombo coc ON dv.categoryoptioncomboid = coc.categoryoptioncomboid "
      "JOIN categoryoptioncombo aoc ON dv.attributeoptioncomboid = aoc.categoryoptioncomboid "
      "WHERE ",
      where);
}

std::string Quoted(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& v : values) quoted.push_back(absl::StrCat("'", v, "'"));
  return absl::StrJoin(quoted, ",");
}

struct ExportResult {
  grpc::Status status;
  std::string bytes;
  bool has_trailer = false;
  v1::ExportTrailer trailer;
};

uint32_t Crc32(const std::string& bytes) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

std::string Gunzip(const std::string& compressed) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out;
  char buffer[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END) << "the gzip stream does not end properly";
  EXPECT_EQ(zs.avail_in, 0u) << "bytes after the end of the gzip stream";
  inflateEnd(&zs);
  return out;
}

uint32_t Le16(const std::string& bytes, size_t at) {
  return static_cast<uint8_t>(bytes.at(at)) | static_cast<uint8_t>(bytes.at(at + 1)) << 8;
}
uint32_t Le32(const std::string& bytes, size_t at) {
  return Le16(bytes, at) | Le16(bytes, at + 2) << 16;
}

struct ZipEntry {
  std::string name;
  std::string content;
  uint32_t crc = 0;  // From the data descriptor.
};

// Reads the one entry of a streamed zip front to back, as a streaming reader does (the
// encode tests check the layout field by field; Python, unzip and Java read it there).
ZipEntry Unzip(const std::string& zip) {
  ZipEntry entry;
  EXPECT_EQ(Le32(zip, 0), 0x04034b50u) << "not a zip";
  EXPECT_EQ(Le16(zip, 6) & 8, 8u) << "no data descriptor flag";
  const size_t name_length = Le16(zip, 26);
  entry.name = zip.substr(30, name_length);
  const size_t data = 30 + name_length + Le16(zip, 28);
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, -15), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zip.data() + data));
  zs.avail_in = static_cast<uInt>(zip.size() - data);
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    entry.content.append(buffer, sizeof(buffer) - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END) << "the entry's deflate stream does not end properly";
  const size_t descriptor = data + zs.total_in;
  inflateEnd(&zs);
  EXPECT_EQ(Le32(zip, descriptor), 0x08074b50u) << "no data descriptor after the entry";
  entry.crc = Le32(zip, descriptor + 4);
  EXPECT_EQ(Le32(zip, descriptor + 12), entry.content.size());
  EXPECT_EQ(Le32(zip, zip.size() - 22), 0x06054b50u) << "no end of central directory record";
  return entry;
}

// Decompresses a zstd stream (frames without a content size).
std::string Unzstd(const std::string& compressed) {
  std::string out;
  ZSTD_DCtx* context = ZSTD_createDCtx();
  ZSTD_inBuffer input{compressed.data(), compressed.size(), 0};
  std::string buffer(ZSTD_DStreamOutSize(), '\0');
  size_t hint = 1;
  while (input.pos < input.size) {
    ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
    hint = ZSTD_decompressStream(context, &output, &input);
    EXPECT_FALSE(ZSTD_isError(hint)) << ZSTD_getErrorName(hint);
    if (ZSTD_isError(hint)) break;
    out.append(buffer.data(), output.pos);
  }
  EXPECT_EQ(hint, 0u) << "the zstd frame does not end";
  ZSTD_freeDCtx(context);
  return out;
}

// Java's String.trim(), as javacsv applies it.
std::string JavaTrim(const std::string& s) {
  size_t begin = 0, end = s.size();
  while (begin < end && static_cast<unsigned char>(s[begin]) <= 0x20) ++begin;
  while (end > begin && static_cast<unsigned char>(s[end - 1]) <= 0x20) --end;
  return s.substr(begin, end - begin);
}

// RFC 4180 with "\n" line ends.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quoted CSV field";
  EXPECT_TRUE(field.empty() && row.empty()) << "the CSV does not end with a line end";
  return rows;
}

SqlRow JsonValueToRow(const nlohmann::json& v) {
  SqlRow row;
  for (const char* key :
       {"dataElement", "period", "orgUnit", "categoryOptionCombo", "attributeOptionCombo", "value",
        "storedBy", "created", "lastUpdated", "comment"}) {
    EXPECT_TRUE(v.contains(key)) << "missing key " << key << " in " << v.dump();
    const nlohmann::json& field = v.at(key);
    row.push_back(field.is_null() ? std::nullopt
                                  : std::optional<std::string>(field.get<std::string>()));
  }
  row.emplace_back(v.at("followup").get<bool>() ? "true" : "false");
  if (v.contains("deleted")) {
    EXPECT_EQ(v.at("deleted"), true) << "deleted is written only when true";
    row.emplace_back("true");
  } else {
    row.emplace_back("false");
  }
  return row;
}

constexpr char kDxfNamespace[] = "http://dhis2.org/schema/dxf/2.0|";

SqlRow XmlValueToRow(const test_support::XmlElement& v) {
  SqlRow row;
  EXPECT_EQ(v.name, absl::StrCat(kDxfNamespace, "dataValue"));
  for (const char* name :
       {"dataElement", "period", "orgUnit", "categoryOptionCombo", "attributeOptionCombo", "value",
        "storedBy", "created", "lastUpdated", "comment"}) {
    const std::string* attribute = v.Attribute(name);
    row.push_back(attribute == nullptr ? std::nullopt : std::optional<std::string>(*attribute));
  }
  const std::string* follow_up = v.Attribute("followUp");
  EXPECT_TRUE(follow_up != nullptr && (*follow_up == "true" || *follow_up == "false"));
  row.emplace_back(follow_up == nullptr ? "" : *follow_up);
  const std::string* deleted = v.Attribute("deleted");
  if (deleted != nullptr) {
    EXPECT_EQ(*deleted, "true") << "deleted is written only when true";
  }
  row.emplace_back(deleted != nullptr ? "true" : "false");
  return row;
}

// The oracle's rows as the XML export's parser gives them back.
std::vector<SqlRow> AsXmlParsed(std::vector<SqlRow> rows) {
  for (SqlRow& row : rows) {
    for (std::optional<std::string>& field : row) {
      if (field.has_value()) *field = test_support::XmlCharactersOnly(*field);
    }
  }
  return rows;
}

// The first completed registration of a Monthly period for the default attribute option combo
// (by data set uid, start date and org unit uid): its data set uid, period (YYYYMM), org unit
// uid and completion date as the exports write it. Empty when the database has none.
std::vector<SqlRow> FirstCompletedRegistration() {
  return QueryAll(
      "SELECT ds.uid, to_char(pe.startdate, 'YYYYMM'), ou.uid, "
      "to_char(date_trunc('milliseconds', r.date), 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+0000\"') "
      "FROM completedatasetregistration r JOIN dataset ds ON ds.datasetid = r.datasetid "
      "JOIN period pe ON pe.periodid = r.periodid "
      "JOIN periodtype pt ON pt.periodtypeid = pe.periodtypeid "
      "JOIN organisationunit ou ON ou.organisationunitid = r.sourceid "
      "JOIN categoryoptioncombo aoc ON aoc.categoryoptioncomboid = r.attributeoptioncomboid "
      "WHERE pt.name = 'Monthly' AND aoc.name = 'default' AND r.date IS NOT NULL "
      "ORDER BY ds.uid, pe.startdate, ou.uid LIMIT 1");
}

// A request (in the default format) for the single data value set of "reg", a row of
// FirstCompletedRegistration().
ExportFileRequest SingleDataValueSetRequest(const SqlRow& reg) {
  ExportFileRequest request;
  request.mutable_query()->add_data_set(*reg[0]);
  request.mutable_query()->add_period(*reg[1]);
  request.mutable_query()->add_org_unit(*reg[2]);
  return request;
}

// The oracle's condition for the values of that data value set that are not deleted.
std::string SingleDataValueSetWhere(const SqlRow& reg) {
  return absl::StrCat(
      "de.dataelementid IN (SELECT dse.dataelementid FROM datasetelement dse JOIN dataset ds ON "
      "ds.datasetid = dse.datasetid WHERE ds.uid = '",
      *reg[0], "') AND ou.uid = '", *reg[2],
      "' AND pt.name = 'Monthly' AND to_char(pe.startdate, 'YYYYMM') = '", *reg[1],
      "' AND dv.deleted IS FALSE");
}

class ExportFileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server::ServerOptions options;
    options.service.auth = pipeline::AuthMode::kNone;  // not a test of authentication
    options.listen = "127.0.0.1:0";
    options.conninfo = testing::TestConninfo();
    options.pool_size = 4;
    options.service.chunk_size = 16 * 1024;  // many chunks even for small exports
    auto started = server::ExportServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = started->release();
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                       grpc::InsecureChannelCredentials());
    stub_ = v1::DataValueExport::NewStub(channel).release();
    data_sets_ = new std::vector<std::string>(QueryColumn("SELECT uid FROM dataset ORDER BY uid"));
    roots_ = new std::vector<std::string>(
        QueryColumn("SELECT uid FROM organisationunit WHERE parentid IS NULL ORDER BY uid"));
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete server_;
    delete data_sets_;
    delete roots_;
  }

  static ExportResult Export(const ExportFileRequest& request) {
    ExportResult result;
    grpc::ClientContext context;
    auto reader = stub_->ExportFile(&context, request);
    v1::FileChunk chunk;
    while (reader->Read(&chunk)) {
      EXPECT_FALSE(result.has_trailer) << "a message after the trailer";
      if (chunk.has_trailer()) {
        result.has_trailer = true;
        result.trailer = chunk.trailer();
      } else {
        result.bytes += chunk.data();
      }
    }
    result.status = reader->Finish();
    return result;
  }

  // Everything in the demo database: all data sets, every root with its
  // children, every period.
  static ExportFileRequest WholeDatabase(v1::Format format) {
    ExportFileRequest request;
    request.set_format(format);
    for (const std::string& ds : *data_sets_) request.mutable_query()->add_data_set(ds);
    for (const std::string& ou : *roots_) request.mutable_query()->add_org_unit(ou);
    request.mutable_query()->set_children(true);
    request.mutable_query()->set_start_date("1900-01-01");
    request.mutable_query()->set_end_date("2100-12-31");
    return request;
  }

  static std::string WholeDatabaseWhere() {
    std::vector<std::string> like;
    for (const std::string& root : *roots_) {
      like.push_back(absl::StrCat("ou.path LIKE (SELECT path FROM organisationunit WHERE uid = '",
                                  root, "') || '%'"));
    }
    return absl::StrCat(
        "dv.dataelementid IN (SELECT dse.dataelementid FROM datasetelement dse JOIN dataset ds "
        "ON ds.datasetid = dse.datasetid WHERE ds.uid IN (",
        Quoted(*data_sets_), ")) AND (", absl::StrJoin(like, " OR "),
        ") AND pe.startdate >= '1900-01-01' "
        "AND pe.enddate <= '2100-12-31'");
  }

  static std::vector<SqlRow> ParseJsonValues(const std::string& bytes) {
    nlohmann::json doc = nlohmann::json::parse(bytes);  // throws on invalid JSON or UTF-8
    std::vector<SqlRow> rows;
    for (const nlohmann::json& v : doc.at("dataValues")) rows.push_back(JsonValueToRow(v));
    return rows;
  }

  // Parses with expat, which fails on anything not well-formed XML 1.0.
  static std::vector<SqlRow> ParseXmlValues(const std::string& bytes) {
    auto parsed = test_support::ParseXmlStrictly(bytes);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return {};
    EXPECT_EQ(parsed->root.name, absl::StrCat(kDxfNamespace, "dataValueSet"));
    std::vector<SqlRow> rows;
    for (const test_support::XmlElement& v : parsed->root.children)
      rows.push_back(XmlValueToRow(v));
    return rows;
  }

  static void ExpectSameRows(std::vector<SqlRow> actual, std::vector<SqlRow> expected) {
    std::sort(actual.begin(), actual.end());
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      ASSERT_EQ(actual[i], expected[i]) << "first difference at sorted row " << i;
    }
  }

  static server::ExportServer* server_;
  static v1::DataValueExport::Stub* stub_;
  static std::vector<std::string>* data_sets_;
  static std::vector<std::string>* roots_;
};

server::ExportServer* ExportFileTest::server_ = nullptr;
v1::DataValueExport::Stub* ExportFileTest::stub_ = nullptr;
std::vector<std::string>* ExportFileTest::data_sets_ = nullptr;
std::vector<std::string>* ExportFileTest::roots_ = nullptr;

TEST_F(ExportFileTest, JsonExportEqualsIndependentQuery) {
  ExportResult result = Export(WholeDatabase(v1::FORMAT_JSON));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_TRUE(result.has_trailer);
  std::vector<SqlRow> expected =
      QueryAll(OracleSql(WholeDatabaseWhere() + " AND dv.deleted IS FALSE"));
  ASSERT_GT(expected.size(), 1000u) << "the demo database looks empty";
  std::vector<SqlRow> actual = ParseJsonValues(result.bytes);
  EXPECT_EQ(result.trailer.values(), static_cast<int64_t>(actual.size()));
  EXPECT_EQ(result.trailer.file_bytes(), static_cast<int64_t>(result.bytes.size()));
  EXPECT_EQ(result.trailer.file_crc32(), Crc32(result.bytes));
  EXPECT_EQ(result.trailer.uncompressed_crc32(), Crc32(result.bytes));
  ExpectSameRows(actual, expected);
}

TEST_F(ExportFileTest, JsonHasNoRawControlCharacters) {
  ExportResult result = Export(WholeDatabase(v1::FORMAT_JSON));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  for (char c : result.bytes) {
    ASSERT_GE(static_cast<unsigned char>(c), 0x20) << "raw control character in JSON";
  }
}

TEST_F(ExportFileTest, CsvRowsMatchIndependentQuery) {
  ExportResult result = Export(WholeDatabase(v1::FORMAT_CSV));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::vector<std::vector<std::string>> rows = ParseCsv(result.bytes);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(absl::StrJoin(rows.front(), ","),
            "dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,"
            "lastupdated,comment,followup,deleted");
  rows.erase(rows.begin());
  std::vector<SqlRow> expected;
  for (const SqlRow& r : QueryAll(OracleSql(WholeDatabaseWhere() + " AND dv.deleted IS FALSE"))) {
    SqlRow csv;
    for (int i : {0, 1, 2, 3, 4, 5, 6, 8, 9, 10}) csv.emplace_back(JavaTrim(r[i].value_or("")));
    csv.emplace_back(*r[11] == "true" ? "true" : "null");
    expected.push_back(std::move(csv));
  }
  std::vector<SqlRow> actual;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 11u);
    actual.emplace_back(row.begin(), row.end());
  }
  EXPECT_EQ(result.trailer.values(), static_cast<int64_t>(actual.size()));
  ExpectSameRows(actual, expected);
}

TEST_F(ExportFileTest, XmlExportEqualsIndependentQuery) {
  ExportResult result = Export(WholeDatabase(v1::FORMAT_XML));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_TRUE(result.has_trailer);
  const std::string start =
      "<?xml version='1.0' encoding='UTF-8'?>"
      "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\"><dataValue dataElement=\"";
  EXPECT_EQ(result.bytes.substr(0, start.size()), start);
  EXPECT_TRUE(result.bytes.ends_with("/></dataValueSet>"));
  std::vector<SqlRow> expected =
      AsXmlParsed(QueryAll(OracleSql(WholeDatabaseWhere() + " AND dv.deleted IS FALSE")));
  ASSERT_GT(expected.size(), 1000u) << "the demo database looks empty";
  std::vector<SqlRow> actual = ParseXmlValues(result.bytes);
  EXPECT_EQ(result.trailer.values(), static_cast<int64_t>(actual.size()));
  EXPECT_EQ(result.trailer.file_bytes(), static_cast<int64_t>(result.bytes.size()));
  EXPECT_EQ(result.trailer.file_crc32(), Crc32(result.bytes));
  ExpectSameRows(actual, expected);
}

TEST_F(ExportFileTest, XmlCarriesTheAwkwardTextAsJsonDoesButForWhatXmlCannotCarry) {
  // The demo's awkward text (controls, quotes, CR/LF/tab, non-BMP): the XML gives back what the
  // JSON gives back, with U+FFFD only where XML 1.0 has no character.
  ExportResult json = Export(WholeDatabase(v1::FORMAT_JSON));
  ExportResult xml = Export(WholeDatabase(v1::FORMAT_XML));
  ASSERT_TRUE(json.status.ok() && xml.status.ok()) << xml.status.error_message();
  std::vector<SqlRow> from_json = AsXmlParsed(ParseJsonValues(json.bytes));
  std::vector<SqlRow> from_xml = ParseXmlValues(xml.bytes);
  bool replaced = false;
  for (const SqlRow& row : from_xml) {
    for (const auto& field : row)
      replaced |= field && field->find("\xEF\xBF\xBD") != std::string::npos;
  }
  EXPECT_TRUE(replaced) << "the demo's awkward text should hold control characters";
  ExpectSameRows(from_xml, from_json);
}

TEST_F(ExportFileTest, XmlSingleDataValueSetHasDhis2HeaderAttributes) {
  std::vector<SqlRow> registration = FirstCompletedRegistration();
  ASSERT_EQ(registration.size(), 1u) << "the demo database needs a completed registration";
  const SqlRow& reg = registration[0];
  ExportFileRequest request = SingleDataValueSetRequest(reg);
  request.set_format(v1::FORMAT_XML);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  const std::string prefix = absl::StrCat(
      "<?xml version='1.0' encoding='UTF-8'?><dataValueSet "
      "xmlns=\"http://dhis2.org/schema/dxf/2.0\" dataSet=\"",
      *reg[0], "\" completeDate=\"", *reg[3], "\" period=\"", *reg[1], "\" orgUnit=\"", *reg[2],
      "\">");
  EXPECT_EQ(result.bytes.substr(0, prefix.size()), prefix);
  std::vector<SqlRow> expected = AsXmlParsed(QueryAll(OracleSql(SingleDataValueSetWhere(reg))));
  ExpectSameRows(ParseXmlValues(result.bytes), expected);
}

TEST_F(ExportFileTest, XmlWithoutValuesIsAnEmptyRootElement) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_XML);
  request.mutable_query()->set_limit(0);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_EQ(result.bytes,
            "<?xml version='1.0' encoding='UTF-8'?>"
            "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\"/>");
  EXPECT_EQ(result.trailer.values(), 0);
}

TEST_F(ExportFileTest, XmlIncludeDeletedMarksTheDeletedValues) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_XML);
  request.mutable_query()->set_include_deleted(true);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::vector<SqlRow> actual = ParseXmlValues(result.bytes);
  size_t deleted =
      std::count_if(actual.begin(), actual.end(), [](const SqlRow& r) { return r[11] == "true"; });
  EXPECT_GT(deleted, 0u) << "the demo database should have deleted values";
  ExpectSameRows(actual, AsXmlParsed(QueryAll(OracleSql(WholeDatabaseWhere()))));
}

TEST_F(ExportFileTest, GzipDecompressesToTheUncompressedBytes) {
  for (v1::Format format : {v1::FORMAT_JSON, v1::FORMAT_CSV, v1::FORMAT_XML}) {
    ExportResult plain = Export(WholeDatabase(format));
    ExportFileRequest request = WholeDatabase(format);
    request.set_compression(v1::COMPRESSION_GZIP);
    ExportResult gz = Export(request);
    ASSERT_TRUE(plain.status.ok() && gz.status.ok()) << gz.status.error_message();
    EXPECT_LT(gz.bytes.size(), plain.bytes.size() / 3);
    EXPECT_TRUE(Gunzip(gz.bytes) == plain.bytes) << "gunzip differs from the plain export";
    EXPECT_EQ(gz.trailer.uncompressed_bytes(), static_cast<int64_t>(plain.bytes.size()));
    EXPECT_EQ(gz.trailer.uncompressed_crc32(), Crc32(plain.bytes));
    EXPECT_EQ(gz.trailer.file_bytes(), static_cast<int64_t>(gz.bytes.size()));
    EXPECT_EQ(gz.trailer.file_crc32(), Crc32(gz.bytes));
  }
}

TEST_F(ExportFileTest, ZipHoldsTheUncompressedBytesUnderDhis2sName) {
  for (v1::Format format : {v1::FORMAT_JSON, v1::FORMAT_CSV, v1::FORMAT_JSON_PRETTY}) {
    ExportResult plain = Export(WholeDatabase(format));
    ExportFileRequest request = WholeDatabase(format);
    request.set_compression(v1::COMPRESSION_ZIP);
    ExportResult zip = Export(request);
    ASSERT_TRUE(plain.status.ok() && zip.status.ok()) << zip.status.error_message();
    ASSERT_TRUE(zip.has_trailer);
    EXPECT_LT(zip.bytes.size(), plain.bytes.size() / 3);
    ZipEntry entry = Unzip(zip.bytes);
    EXPECT_EQ(entry.name, format == v1::FORMAT_CSV ? "dataValues_1900-01-01_2100-12-31.csv"
                                                   : "dataValues_1900-01-01_2100-12-31.json");
    EXPECT_TRUE(entry.content == plain.bytes) << "the zip entry differs from the plain export";
    EXPECT_EQ(entry.crc, Crc32(plain.bytes));
    EXPECT_EQ(zip.trailer.values(), plain.trailer.values());
    EXPECT_EQ(zip.trailer.uncompressed_bytes(), static_cast<int64_t>(plain.bytes.size()));
    EXPECT_EQ(zip.trailer.uncompressed_crc32(), Crc32(plain.bytes));
    EXPECT_EQ(zip.trailer.file_bytes(), static_cast<int64_t>(zip.bytes.size()));
    EXPECT_EQ(zip.trailer.file_crc32(), Crc32(zip.bytes));
  }
}

TEST_F(ExportFileTest, ZipJsonEqualsIndependentQuery) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
  request.set_compression(v1::COMPRESSION_ZIP);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ExpectSameRows(ParseJsonValues(Unzip(result.bytes).content),
                 QueryAll(OracleSql(WholeDatabaseWhere() + " AND dv.deleted IS FALSE")));
}

TEST_F(ExportFileTest, ZipEntryWithoutDatesIsDataValues) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_CSV);
  request.mutable_query()->clear_start_date();
  request.mutable_query()->clear_end_date();
  request.mutable_query()->set_last_updated("1900-01-01");
  request.set_compression(v1::COMPRESSION_ZIP);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_EQ(Unzip(result.bytes).name, "dataValues.csv");
}

TEST_F(ExportFileTest, ZstdDecompressesToTheUncompressedBytes) {
  for (v1::Format format : {v1::FORMAT_JSON, v1::FORMAT_CSV}) {
    ExportResult plain = Export(WholeDatabase(format));
    ExportFileRequest request = WholeDatabase(format);
    request.set_compression(v1::COMPRESSION_ZSTD);
    ExportResult zst = Export(request);
    ASSERT_TRUE(plain.status.ok() && zst.status.ok()) << zst.status.error_message();
    ASSERT_TRUE(zst.has_trailer);
    EXPECT_LT(zst.bytes.size(), plain.bytes.size() / 3);
    EXPECT_TRUE(Unzstd(zst.bytes) == plain.bytes) << "zstd -d differs from the plain export";
    EXPECT_EQ(zst.trailer.uncompressed_bytes(), static_cast<int64_t>(plain.bytes.size()));
    EXPECT_EQ(zst.trailer.uncompressed_crc32(), Crc32(plain.bytes));
    EXPECT_EQ(zst.trailer.file_bytes(), static_cast<int64_t>(zst.bytes.size()));
    EXPECT_EQ(zst.trailer.file_crc32(), Crc32(zst.bytes));
  }
}

TEST_F(ExportFileTest, ZstdCsvRowsMatchIndependentQuery) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_CSV);
  request.set_compression(v1::COMPRESSION_ZSTD);
  request.set_compression_level(9);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::vector<std::vector<std::string>> rows = ParseCsv(Unzstd(result.bytes));
  ASSERT_FALSE(rows.empty());
  rows.erase(rows.begin());
  std::vector<SqlRow> expected;
  for (const SqlRow& r : QueryAll(OracleSql(WholeDatabaseWhere() + " AND dv.deleted IS FALSE"))) {
    SqlRow csv;
    for (int i : {0, 1, 2, 3, 4, 5, 6, 8, 9, 10}) csv.emplace_back(JavaTrim(r[i].value_or("")));
    csv.emplace_back(*r[11] == "true" ? "true" : "null");
    expected.push_back(std::move(csv));
  }
  std::vector<SqlRow> actual;
  for (const auto& row : rows) actual.emplace_back(row.begin(), row.end());
  EXPECT_EQ(result.trailer.values(), static_cast<int64_t>(actual.size()));
  ExpectSameRows(actual, expected);
}

// The first data chunk leaves after the first 16 KiB rendered, compressed or not.
TEST_F(ExportFileTest, FirstChunkIsSmallForEveryCompression) {
  for (v1::Compression compression :
       {v1::COMPRESSION_NONE, v1::COMPRESSION_GZIP, v1::COMPRESSION_ZIP, v1::COMPRESSION_ZSTD}) {
    ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
    request.set_compression(compression);
    grpc::ClientContext context;
    auto reader = stub_->ExportFile(&context, request);
    v1::FileChunk first;
    ASSERT_TRUE(reader->Read(&first)) << v1::Compression_Name(compression);
    ASSERT_TRUE(first.has_data()) << v1::Compression_Name(compression);
    EXPECT_GT(first.data().size(), 0u);
    EXPECT_LE(first.data().size(), 64u * 1024) << v1::Compression_Name(compression);
    EXPECT_LT(first.values_so_far(), 200) << v1::Compression_Name(compression);
    context.TryCancel();
    v1::FileChunk ignored;
    while (reader->Read(&ignored)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
}

TEST_F(ExportFileTest, CompressionLevelsGiveTheSameContent) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_CSV);
  request.set_compression(v1::COMPRESSION_GZIP);
  request.set_compression_level(9);
  ExportResult best = Export(request);
  request.set_compression_level(1);
  ExportResult fast = Export(request);
  ASSERT_TRUE(best.status.ok() && fast.status.ok());
  EXPECT_LE(best.bytes.size(), fast.bytes.size());
  EXPECT_TRUE(Gunzip(best.bytes) == Gunzip(fast.bytes));
}

TEST_F(ExportFileTest, PeriodFilterSelectsOnlyThosePeriods) {
  // One Monthly and, if the demo has one, one Weekly period, by ISO id.
  std::vector<SqlRow> periods = QueryAll(
      "SELECT to_char(pe.startdate, 'YYYYMM'), pe.periodid::text FROM period pe "
      "JOIN periodtype pt ON pt.periodtypeid = pe.periodtypeid WHERE pt.name = 'Monthly' AND "
      "EXISTS (SELECT 1 FROM datavalue dv WHERE dv.periodid = pe.periodid) "
      "ORDER BY pe.startdate LIMIT 1");
  std::vector<SqlRow> weeks = QueryAll(
      "SELECT extract(isoyear FROM pe.startdate)::int || 'W' || "
      "extract(week FROM pe.startdate)::int, pe.periodid::text FROM period pe "
      "JOIN periodtype pt ON pt.periodtypeid = pe.periodtypeid WHERE pt.name = 'Weekly' AND "
      "EXISTS (SELECT 1 FROM datavalue dv WHERE dv.periodid = pe.periodid) "
      "ORDER BY pe.startdate LIMIT 1");
  ASSERT_EQ(periods.size(), 1u);
  periods.insert(periods.end(), weeks.begin(), weeks.end());
  ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
  request.mutable_query()->clear_start_date();
  request.mutable_query()->clear_end_date();
  std::vector<std::string> ids;
  for (const SqlRow& p : periods) {
    request.mutable_query()->add_period(*p[0]);
    ids.push_back(*p[1]);
  }
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::string where = WholeDatabaseWhere();
  where = where.substr(0, where.find(" AND pe.startdate"));
  std::vector<SqlRow> expected = QueryAll(OracleSql(absl::StrCat(
      where, " AND dv.deleted IS FALSE AND dv.periodid IN (", absl::StrJoin(ids, ","), ")")));
  ASSERT_FALSE(expected.empty());
  ExpectSameRows(ParseJsonValues(result.bytes), expected);
}

TEST_F(ExportFileTest, OrgUnitWithoutChildrenSelectsOnlyThatUnit) {
  std::vector<std::string> unit = QueryColumn(
      "SELECT ou.uid FROM organisationunit ou WHERE EXISTS (SELECT 1 FROM datavalue dv "
      "WHERE dv.sourceid = ou.organisationunitid) ORDER BY ou.uid LIMIT 1");
  ASSERT_EQ(unit.size(), 1u);
  ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
  request.mutable_query()->clear_org_unit();
  request.mutable_query()->add_org_unit(unit[0]);
  request.mutable_query()->set_children(false);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::string where = WholeDatabaseWhere();
  where = where.substr(0, where.find(" AND (ou.path"));
  std::vector<SqlRow> expected = QueryAll(
      OracleSql(absl::StrCat(where, " AND dv.deleted IS FALSE AND ou.uid = '", unit[0], "'")));
  ASSERT_FALSE(expected.empty());
  ExpectSameRows(ParseJsonValues(result.bytes), expected);
}

TEST_F(ExportFileTest, DataElementFilterAloneWorks) {
  std::vector<std::string> element = QueryColumn(
      "SELECT de.uid FROM dataelement de WHERE EXISTS (SELECT 1 FROM datavalue dv "
      "WHERE dv.dataelementid = de.dataelementid) ORDER BY de.uid LIMIT 1");
  ASSERT_EQ(element.size(), 1u);
  ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
  request.mutable_query()->clear_data_set();
  request.mutable_query()->add_data_element(element[0]);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::string where = WholeDatabaseWhere();
  where = where.substr(where.find(" AND (ou.path") + 5);
  std::vector<SqlRow> expected = QueryAll(
      OracleSql(absl::StrCat(where, " AND dv.deleted IS FALSE AND de.uid = '", element[0], "'")));
  ASSERT_FALSE(expected.empty());
  ExpectSameRows(ParseJsonValues(result.bytes), expected);
}

TEST_F(ExportFileTest, IncludeDeletedAddsTheDeletedValues) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
  request.mutable_query()->set_include_deleted(true);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::vector<SqlRow> expected = QueryAll(OracleSql(WholeDatabaseWhere()));
  std::vector<SqlRow> actual = ParseJsonValues(result.bytes);
  size_t deleted =
      std::count_if(actual.begin(), actual.end(), [](const SqlRow& r) { return r[11] == "true"; });
  EXPECT_GT(deleted, 0u) << "the demo database should have deleted values";
  ExpectSameRows(actual, expected);
}

TEST_F(ExportFileTest, LimitCapsTheNumberOfValues) {
  for (int limit : {0, 1, 7}) {
    ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
    request.mutable_query()->set_limit(limit);
    ExportResult result = Export(request);
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    EXPECT_EQ(ParseJsonValues(result.bytes).size(), static_cast<size_t>(limit));
    EXPECT_EQ(result.trailer.values(), limit);
  }
}

TEST_F(ExportFileTest, SingleDataValueSetHasDhis2Header) {
  std::vector<SqlRow> registration = FirstCompletedRegistration();
  ASSERT_EQ(registration.size(), 1u) << "the demo database needs a completed registration";
  const SqlRow& reg = registration[0];
  ExportFileRequest request = SingleDataValueSetRequest(reg);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  std::string prefix = absl::StrCat("{\"dataSet\":\"", *reg[0], "\",\"completeDate\":\"", *reg[3],
                                    "\",\"period\":\"", *reg[1], "\",\"orgUnit\":\"", *reg[2],
                                    "\",\"dataValues\":[");
  EXPECT_EQ(result.bytes.substr(0, prefix.size()), prefix);
  std::vector<SqlRow> expected = QueryAll(OracleSql(SingleDataValueSetWhere(reg)));
  ExpectSameRows(ParseJsonValues(result.bytes), expected);
}

TEST_F(ExportFileTest, SingleDataValueSetWithoutRegistrationHasNullCompleteDate) {
  std::vector<SqlRow> triple = QueryAll(
      "SELECT ds.uid, ou.uid FROM dataset ds CROSS JOIN organisationunit ou "
      "WHERE NOT EXISTS (SELECT 1 FROM completedatasetregistration r "
      "JOIN period pe ON pe.periodid = r.periodid WHERE r.datasetid = ds.datasetid "
      "AND r.sourceid = ou.organisationunitid AND pe.startdate = '2024-03-01') "
      "ORDER BY ds.uid, ou.uid LIMIT 1");
  ASSERT_EQ(triple.size(), 1u);
  ExportFileRequest request;
  request.mutable_query()->add_data_set(*triple[0][0]);
  request.mutable_query()->add_period("2024-03");  // DHIS2's other Monthly input form
  request.mutable_query()->add_org_unit(*triple[0][1]);
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_EQ(result.bytes.substr(0, 200).find(absl::StrCat("{\"dataSet\":\"", *triple[0][0],
                                                          "\",\"completeDate\":null,"
                                                          "\"period\":\"202403\"")),
            0u)
      << result.bytes.substr(0, 100);
}

struct InvalidCase {
  std::string name;
  std::function<void(v1::ExportRequest*)> mutate;
  grpc::StatusCode code;
  std::string message;
};

TEST_F(ExportFileTest, InvalidRequestsAreRejectedWithDhis2Messages) {
  std::vector<InvalidCase> cases = {
      {"no data", [](v1::ExportRequest* q) { q->clear_data_set(); },
       grpc::StatusCode::INVALID_ARGUMENT,
       "E2001: At least one data element, data set or data element group must be specified"},
      {"no time",
       [](v1::ExportRequest* q) {
         q->clear_start_date();
         q->clear_end_date();
       },
       grpc::StatusCode::INVALID_ARGUMENT,
       "E2002: At least one period, start/end dates, last updated or last updated duration must "
       "be specified"},
      {"no org unit",
       [](v1::ExportRequest* q) {
         q->clear_org_unit();
         q->set_children(false);
       },
       grpc::StatusCode::INVALID_ARGUMENT,
       "E2006: At least one organisation unit or organisation unit group must be specified"},
      {"negative limit", [](v1::ExportRequest* q) { q->set_limit(-1); },
       grpc::StatusCode::INVALID_ARGUMENT, "E2009: Limit cannot be less than zero: `-1`"},
      {"bad period",
       [](v1::ExportRequest* q) {
         q->clear_start_date();
         q->clear_end_date();
         q->add_period("2024M13");
       },
       grpc::StatusCode::INVALID_ARGUMENT, "2024M13"},
      {"malformed uid", [](v1::ExportRequest* q) { q->add_data_set("not-a-uid"); },
       grpc::StatusCode::INVALID_ARGUMENT, "not-a-uid"},
      {"unknown data set", [](v1::ExportRequest* q) { q->add_data_set("aaaaaaaaaaa"); },
       grpc::StatusCode::NOT_FOUND, "data_set: \"aaaaaaaaaaa\""},
      {"unknown org unit", [](v1::ExportRequest* q) { q->add_org_unit("bbbbbbbbbbb"); },
       grpc::StatusCode::NOT_FOUND, "org_unit: \"bbbbbbbbbbb\""},
      {"unknown data element", [](v1::ExportRequest* q) { q->add_data_element("ccccccccccc"); },
       grpc::StatusCode::NOT_FOUND, "data_element: \"ccccccccccc\""},
      {"bad date", [](v1::ExportRequest* q) { q->set_start_date("2024-02-30"); },
       grpc::StatusCode::INVALID_ARGUMENT, "2024-02-30"},
      {"start after end", [](v1::ExportRequest* q) { q->set_start_date("2101-01-01"); },
       grpc::StatusCode::INVALID_ARGUMENT, "E2004: Start date must be before end date"},
      {"sql in uid", [](v1::ExportRequest* q) { q->add_org_unit("a'); DROP T"); },
       grpc::StatusCode::INVALID_ARGUMENT, "DROP T"},
  };
  for (const InvalidCase& c : cases) {
    ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
    c.mutate(request.mutable_query());
    ExportResult result = Export(request);
    EXPECT_EQ(result.status.error_code(), c.code)
        << c.name << ": " << result.status.error_message();
    EXPECT_NE(result.status.error_message().find(c.message), std::string::npos)
        << c.name << ": " << result.status.error_message();
    EXPECT_FALSE(result.has_trailer) << c.name;
    EXPECT_TRUE(result.bytes.empty()) << c.name;
  }
}

TEST_F(ExportFileTest, InvalidFileOptionsAreRejected) {
  ExportFileRequest request = WholeDatabase(v1::FORMAT_JSON);
  request.set_compression(v1::COMPRESSION_GZIP);
  request.set_compression_level(10);
  ExportResult result = Export(request);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("compression_level"), std::string::npos);
  for (auto [compression, level] :
       {std::pair{v1::COMPRESSION_ZIP, 10}, std::pair{v1::COMPRESSION_ZSTD, 20},
        std::pair{v1::COMPRESSION_ZSTD, -1}, std::pair{v1::COMPRESSION_NONE, 10}}) {
    request.set_compression(compression);
    request.set_compression_level(level);
    result = Export(request);
    EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << level;
    EXPECT_NE(result.status.error_message().find("compression_level"), std::string::npos)
        << result.status.error_message();
  }
  request.set_compression(v1::COMPRESSION_ZSTD);
  request.mutable_query()->set_limit(100);
  request.set_compression_level(9);
  EXPECT_TRUE(Export(request).status.ok()) << "9 is the default --max_zstd_level";
  request.set_compression_level(10);
  result = Export(request);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(result.status.error_message(),
            "compression_level: 10 is above this server's zstd limit, 9 (--max_zstd_level; 1 to 9 "
            "accepted, 0: default)");
  request.set_compression(static_cast<v1::Compression>(5));
  request.set_compression_level(0);
  result = Export(request);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("compression"), std::string::npos);
  request.set_compression(v1::COMPRESSION_GZIP);
  request.set_compression_level(0);
  request.set_format(static_cast<v1::Format>(42));
  result = Export(request);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("format"), std::string::npos);
}

// ADX (FORMAT_ADX): the data sets ADX can name, every root with its children, every period.
ExportFileRequest AdxRequest(const std::vector<std::string>& data_sets,
                             const std::vector<std::string>& roots) {
  ExportFileRequest request;
  request.set_format(v1::FORMAT_ADX);
  for (const std::string& ds : data_sets) request.mutable_query()->add_data_set(ds);
  for (const std::string& ou : roots) request.mutable_query()->add_org_unit(ou);
  request.mutable_query()->set_children(true);
  request.mutable_query()->set_start_date("1900-01-01");
  request.mutable_query()->set_end_date("2100-12-31");
  return request;
}

// The categories of an option combo as "CATEGORY=OPTION ..." in the combo's order, in SQL (the
// option of each category is the one the option combo and the category share).
std::string CategoriesSql(const std::string& option_combo_id, const std::string& scheme_column) {
  return absl::StrCat(
      "(SELECT coalesce(string_agg(c.", scheme_column, " || '=' || co.", scheme_column,
      ", ' ' ORDER BY ccc.sort_order), '') FROM categorycombos_optioncombos x "
      "JOIN categorycombo cc ON cc.categorycomboid = x.categorycomboid AND cc.name <> 'default' "
      "JOIN categorycombos_categories ccc ON ccc.categorycomboid = cc.categorycomboid "
      "JOIN category c ON c.categoryid = ccc.categoryid "
      "JOIN categoryoptioncombos_categoryoptions y ON y.categoryoptioncomboid = "
      "x.categoryoptioncomboid "
      "JOIN categories_categoryoptions z ON z.categoryid = c.categoryid "
      "AND z.categoryoptionid = y.categoryoptionid "
      "JOIN categoryoption co ON co.categoryoptionid = y.categoryoptionid "
      "WHERE x.categoryoptioncomboid = ",
      option_combo_id, ")");
}

// One row per value of the ADX export of "data_sets" (uids) in "scheme_column" (code or uid):
// data set, period as start/duration, org unit, the attribute option combo's categories, data
// element, the category option combo's categories, value attribute, annotation.
std::vector<SqlRow> AdxOracle(const std::vector<std::string>& data_sets, const std::string& where,
                              const std::string& scheme_column) {
  std::vector<SqlRow> rows = QueryAll(absl::StrCat(
      "SELECT ds.", scheme_column,
      ", to_char(pe.startdate, 'YYYY-MM-DD') || '/' || CASE pt.name "
      "WHEN 'Daily' THEN 'P1D' WHEN 'BiWeekly' THEN 'P14D' WHEN 'Monthly' THEN 'P1M' "
      "WHEN 'BiMonthly' THEN 'P2M' WHEN 'TwoYearly' THEN 'P2Y' "
      "ELSE CASE WHEN pt.name LIKE 'Weekly%' THEN 'P7D' WHEN pt.name LIKE 'Quarterly%' THEN 'P3M' "
      "WHEN pt.name LIKE 'SixMonthly%' THEN 'P6M' "
      "WHEN pt.name = 'Yearly' OR pt.name LIKE 'Financial%' THEN 'P1Y' END END, ou.",
      scheme_column, ", ", CategoriesSql("dv.attributeoptioncomboid", scheme_column), ", de.",
      scheme_column, ", ", CategoriesSql("dv.categoryoptioncomboid", scheme_column),
      ", CASE WHEN de.valuetype IN ('INTEGER', 'INTEGER_POSITIVE', 'INTEGER_NEGATIVE', "
      "'INTEGER_ZERO_OR_POSITIVE', 'NUMBER', 'UNIT_INTERVAL', 'PERCENTAGE') THEN dv.value "
      "ELSE '0' END, CASE WHEN de.valuetype IN ('INTEGER', 'INTEGER_POSITIVE', "
      "'INTEGER_NEGATIVE', 'INTEGER_ZERO_OR_POSITIVE', 'NUMBER', 'UNIT_INTERVAL', 'PERCENTAGE') "
      "THEN NULL ELSE coalesce(dv.value, '') END "
      "FROM datavalue dv "
      "JOIN datasetelement dse ON dse.dataelementid = dv.dataelementid "
      "JOIN dataset ds ON ds.datasetid = dse.datasetid "
      "JOIN dataelement de ON dv.dataelementid = de.dataelementid "
      "JOIN period pe ON dv.periodid = pe.periodid "
      "JOIN periodtype pt ON pe.periodtypeid = pt.periodtypeid "
      "JOIN organisationunit ou ON dv.sourceid = ou.organisationunitid "
      "WHERE ds.uid IN (",
      Quoted(data_sets),
      ") AND dv.attributeoptioncomboid IN (SELECT categoryoptioncomboid FROM "
      "categorycombos_optioncombos WHERE categorycomboid = ds.categorycomboid) AND ",
      where));
  return AsXmlParsed(std::move(rows));
}

// The ADX document's values as AdxOracle's rows; also checks that no group appears twice.
std::vector<SqlRow> ParseAdxValues(const std::string& bytes) {
  auto parsed = test_support::ParseXmlStrictly(bytes);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return {};
  constexpr char kAdx[] = "urn:ihe:qrph:adx:2015|";
  EXPECT_EQ(parsed->root.name, absl::StrCat(kAdx, "adx"));
  EXPECT_TRUE(parsed->version.empty()) << "DHIS2 writes no XML declaration for ADX";
  auto attribute = [](const test_support::XmlElement& e, const char* name) {
    const std::string* a = e.Attribute(name);
    return a == nullptr ? std::nullopt : std::optional<std::string>(*a);
  };
  // The attributes other than "own", as "NAME=VALUE ..." in document order.
  auto categories = [](const test_support::XmlElement& e, std::vector<std::string> own) {
    std::vector<std::string> parts;
    for (const auto& [name, value] : e.attributes) {
      if (std::find(own.begin(), own.end(), name) == own.end()) {
        parts.push_back(absl::StrCat(name, "=", value));
      }
    }
    return absl::StrJoin(parts, " ");
  };
  std::vector<SqlRow> rows;
  std::set<SqlRow> groups;
  for (const test_support::XmlElement& group : parsed->root.children) {
    EXPECT_EQ(group.name, absl::StrCat(kAdx, "group"));
    SqlRow key = {attribute(group, "dataSet"), attribute(group, "period"),
                  attribute(group, "orgUnit"), categories(group, {"dataSet", "period", "orgUnit"})};
    EXPECT_TRUE(groups.insert(key).second) << "a group appears twice: " << *key[1];
    EXPECT_FALSE(group.children.empty());
    for (const test_support::XmlElement& value : group.children) {
      EXPECT_EQ(value.name, absl::StrCat(kAdx, "dataValue"));
      SqlRow row = key;
      row.push_back(attribute(value, "dataElement"));
      row.push_back(categories(value, {"dataElement", "value"}));
      row.push_back(attribute(value, "value"));
      if (value.children.empty()) {
        row.push_back(std::nullopt);
      } else {
        EXPECT_EQ(value.children.size(), 1u);
        EXPECT_EQ(value.children[0].name, absl::StrCat(kAdx, "annotation"));
        row.push_back(value.children[0].text);
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// The demo's data sets ADX can name (not the two whose categories lack codes).
std::vector<std::string> AdxDataSets() {
  return QueryColumn("SELECT uid FROM dataset WHERE code NOT LIKE 'DS_ADX%' ORDER BY uid");
}

TEST_F(ExportFileTest, AdxExportEqualsIndependentQuery) {
  const std::vector<std::string> data_sets = AdxDataSets();
  ExportResult result = Export(AdxRequest(data_sets, *roots_));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_TRUE(result.has_trailer);
  EXPECT_TRUE(result.bytes.starts_with("<adx xmlns=\"urn:ihe:qrph:adx:2015\"><group dataSet=\""));
  EXPECT_TRUE(result.bytes.ends_with("</group></adx>"));
  std::vector<SqlRow> expected =
      AdxOracle(data_sets, WholeDatabaseWhere() + " AND dv.deleted IS FALSE", "code");
  ASSERT_GT(expected.size(), 1000u) << "the demo database looks empty";
  std::vector<SqlRow> actual = ParseAdxValues(result.bytes);
  EXPECT_EQ(result.trailer.values(), static_cast<int64_t>(actual.size()));
  EXPECT_EQ(result.trailer.file_crc32(), Crc32(result.bytes));
  ExpectSameRows(actual, expected);
  // The demo has text values (annotations), disaggregated values and attribute combos.
  EXPECT_NE(result.bytes.find("value=\"0\"><annotation>"), std::string::npos);
  EXPECT_NE(result.bytes.find(" SEX=\""), std::string::npos);
  EXPECT_NE(result.bytes.find(" FUNDING_PARTNER=\""), std::string::npos);
  EXPECT_NE(result.bytes.find("/P3M\""), std::string::npos);
}

TEST_F(ExportFileTest, AdxWithUidSchemeNamesEverythingByUid) {
  const std::vector<std::string> data_sets = AdxDataSets();
  ExportFileRequest request = AdxRequest(data_sets, *roots_);
  request.mutable_query()->set_id_scheme("UID");
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ExpectSameRows(ParseAdxValues(result.bytes),
                 AdxOracle(data_sets, WholeDatabaseWhere() + " AND dv.deleted IS FALSE", "uid"));
}

TEST_F(ExportFileTest, AdxEveryCompressionHoldsThePlainDocument) {
  const ExportFileRequest plain_request = AdxRequest(AdxDataSets(), *roots_);
  ExportResult plain = Export(plain_request);
  ASSERT_TRUE(plain.status.ok()) << plain.status.error_message();
  for (v1::Compression compression :
       {v1::COMPRESSION_GZIP, v1::COMPRESSION_ZIP, v1::COMPRESSION_ZSTD}) {
    SCOPED_TRACE(v1::Compression_Name(compression));
    ExportFileRequest request = plain_request;
    request.set_compression(compression);
    ExportResult result = Export(request);
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    std::string content;
    if (compression == v1::COMPRESSION_GZIP) content = Gunzip(result.bytes);
    if (compression == v1::COMPRESSION_ZSTD) content = Unzstd(result.bytes);
    if (compression == v1::COMPRESSION_ZIP) {
      ZipEntry entry = Unzip(result.bytes);
      EXPECT_EQ(entry.name, "dataValues_1900-01-01_2100-12-31.xml");  // DHIS2's name for ADX
      content = entry.content;
    }
    EXPECT_TRUE(content == plain.bytes) << "the decompressed document differs";
    EXPECT_EQ(result.trailer.uncompressed_crc32(), Crc32(plain.bytes));
    EXPECT_EQ(result.trailer.file_crc32(), Crc32(result.bytes));
    EXPECT_EQ(result.trailer.values(), plain.trailer.values());
  }
}

TEST_F(ExportFileTest, AdxFirstChunkIsSmall) {
  grpc::ClientContext context;
  auto reader = stub_->ExportFile(&context, AdxRequest(AdxDataSets(), *roots_));
  v1::FileChunk first;
  ASSERT_TRUE(reader->Read(&first));
  ASSERT_TRUE(first.has_data());
  EXPECT_LE(first.data().size(), 64u * 1024);
  EXPECT_LT(first.values_so_far(), 500);
  context.TryCancel();
  v1::FileChunk ignored;
  while (reader->Read(&ignored)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(ExportFileTest, AdxWithoutValuesIsAnEmptyRootElement) {
  ExportFileRequest request = AdxRequest(AdxDataSets(), *roots_);
  request.mutable_query()->set_start_date("1901-01-01");
  request.mutable_query()->set_end_date("1901-12-31");
  ExportResult result = Export(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_EQ(result.bytes, "<adx xmlns=\"urn:ihe:qrph:adx:2015\"/>");
  EXPECT_EQ(result.trailer.values(), 0);
}

// DHIS2's AdxException messages, before the first byte: the call ends without data.
TEST_F(ExportFileTest, AdxMissingCodesFailBeforeTheFirstByte) {
  const std::pair<const char*, const char*> kCases[] = {
      {"DS_ADX_DONOR", "Category CODE for Donor is missing or invalid: null"},
      {"DS_ADX_PROGRAMME", "CategoryOption CODE for Programme Y is missing"}};
  for (const auto& [code, message] : kCases) {
    SCOPED_TRACE(code);
    const std::vector<std::string> data_sets =
        QueryColumn(absl::StrCat("SELECT uid FROM dataset WHERE code = '", code, "'"));
    ASSERT_EQ(data_sets.size(), 1u);
    std::vector<std::string> with_good = AdxDataSets();
    with_good.push_back(data_sets[0]);
    for (v1::Compression compression : {v1::COMPRESSION_NONE, v1::COMPRESSION_GZIP}) {
      ExportFileRequest request = AdxRequest(with_good, *roots_);
      request.set_compression(compression);
      ExportResult result = Export(request);
      EXPECT_EQ(result.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
      EXPECT_EQ(result.status.error_message(), message);
      EXPECT_TRUE(result.bytes.empty()) << "bytes were sent before the error";
      EXPECT_FALSE(result.has_trailer);
    }
  }
}

TEST_F(ExportFileTest, AdxRequestsWithoutDataSetsAreRejected) {
  ExportFileRequest request = AdxRequest({}, *roots_);
  ExportResult result = Export(request);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(result.status.error_message().starts_with("data_set: "))
      << result.status.error_message();
  request = AdxRequest(AdxDataSets(), *roots_);
  request.mutable_query()->add_data_element(QueryColumn("SELECT uid FROM dataelement LIMIT 1")[0]);
  result = Export(request);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(result.status.error_message().starts_with("data_element: "))
      << result.status.error_message();
}

}  // namespace
}  // namespace dvexport
