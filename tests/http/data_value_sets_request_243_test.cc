// DHIS2 2.43's GET /api/dataValueSets (service/http/data_value_sets_request_243.h): routes, the
// format without content negotiation, 2.43's parameters, and the headers and file names of its
// 200, each beside what 2.42 does with the same request.

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "service/http/data_value_sets_request.h"
#include "tests/http/data_value_sets_testing.h"

namespace dvexport::http {
namespace {

using dvexport::v1::ExportRequest;
using testing::Accepted;
using testing::FormatOf;
using testing::Header;
using testing::Headers;
using testing::Refused;

constexpr int k242 = 42;
constexpr int k243 = 43;
constexpr char kBase[] = "/api/dataValueSets?dataSet=pBOMPrpg1QX&orgUnit=DiszpKrYNg8";

const ExportRequest& Query(const DataValueSetsRequest& request) {
  return request.export_request.query();
}

DataValueSetsRequest Accepted243(const std::string& parameters) {
  return Accepted(absl::StrCat(kBase, parameters), "", k243);
}

// The message of the 400 that refuses "parameters" on 2.43.
std::string Refusal243(const std::string& parameters) {
  const HttpResponse response = Refused(absl::StrCat(kBase, parameters), "", k243);
  EXPECT_EQ(response.status, 400) << parameters;
  return response.body;
}

std::string BadRequest(const std::string& message) {
  return absl::StrCat(R"({"httpStatus":"Bad Request","httpStatusCode":400,"status":"ERROR",)",
                      R"("message":")", message, R"("})");
}

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::vector<int> Orders(const DataValueSetsRequest& request) {
  return {Query(request).order().begin(), Query(request).order().end()};
}

// --- Routes ---------------------------------------------------------------------------------

TEST(DataValueSets243Test, RoutesVersions28To43) {
  for (int version = 28; version <= 43; ++version) {
    const std::string path = absl::StrCat("/api/", version, "/dataValueSets");
    EXPECT_TRUE(IsDataValueSetsPath(path, k243)) << path;
    EXPECT_EQ(IsDataValueSetsPath(path, k242), version <= 42) << path;
  }
  for (const char* path : {"/api/27/dataValueSets", "/api/44/dataValueSets",
                           "/api/43/dataValueSets.json/", "/api/043/dataValueSets"}) {
    EXPECT_FALSE(IsDataValueSetsPath(path, k243)) << path;
  }
  for (const char* path : {"/api/dataValueSets", "/api/dataValueSets/", "/api/43/dataValueSets/",
                           "/api/43/dataValueSets.csv", "/api/dataValueSets.anything"}) {
    EXPECT_TRUE(IsDataValueSetsPath(path, k243)) << path;
  }
}

TEST(DataValueSets243Test, VersionsBelow43AreAnsweredAs242AndAbove43As243) {
  EXPECT_FALSE(IsDataValueSetsPath("/api/43/dataValueSets", 0));
  EXPECT_FALSE(IsDataValueSetsPath("/api/43/dataValueSets", 40));
  EXPECT_TRUE(IsDataValueSetsPath("/api/43/dataValueSets", 44));
}

TEST(DataValueSets243Test, OtherVersionsAreNotFound) {
  const HttpResponse response = Refused("/api/44/dataValueSets?dataSet=pBOMPrpg1QX", "", k243);
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.body,
            R"({"httpStatus":"Not Found","httpStatusCode":404,"status":"ERROR","message":"No )"
            R"(such resource: the export is GET /api/dataValueSets or )"
            R"(/api/{28..43}/dataValueSets"})");
  EXPECT_EQ(Refused("/api/27/dataValueSets", "", k243).status, 404);
  EXPECT_EQ(FormatOf("/api/43/dataValueSets.csv?dataSet=pBOMPrpg1QX", "", k243), v1::FORMAT_CSV);
}

// --- Format (the reference's section 2.2) ---------------------------------------------------

TEST(DataValueSets243Test, FormatTableAgainst242) {
  struct Row {
    const char* path;
    const char* accept;
    v1::Format on_242;
    v1::Format on_243;
  };
  const Row kRows[] = {
      {"/api/dataValueSets", "application/xml", v1::FORMAT_XML, v1::FORMAT_JSON},
      {"/api/dataValueSets", "application/adx+xml", v1::FORMAT_ADX, v1::FORMAT_JSON},
      {"/api/dataValueSets", "text/csv", v1::FORMAT_CSV, v1::FORMAT_JSON},
      {"/api/dataValueSets", "application/csv", v1::FORMAT_CSV, v1::FORMAT_JSON},
      {"/api/dataValueSets.adx.xml", "", v1::FORMAT_ADX, v1::FORMAT_XML},
      {"/api/dataValueSets.adx+xml", "", v1::FORMAT_JSON, v1::FORMAT_ADX},
      {"/api/dataValueSets.adx+xml", "application/adx+xml", v1::FORMAT_ADX, v1::FORMAT_ADX},
      {"/api/dataValueSets.xml", "", v1::FORMAT_XML, v1::FORMAT_XML},
      {"/api/dataValueSets.csv", "application/xml", v1::FORMAT_CSV, v1::FORMAT_CSV},
      {"/api/dataValueSets.json", "application/xml", v1::FORMAT_JSON, v1::FORMAT_JSON},
  };
  for (const Row& row : kRows) {
    const std::string target = absl::StrCat(row.path, "?dataSet=pBOMPrpg1QX");
    EXPECT_EQ(FormatOf(target, row.accept, k242), row.on_242) << target << " " << row.accept;
    EXPECT_EQ(FormatOf(target, row.accept, k243), row.on_243) << target << " " << row.accept;
  }
}

TEST(DataValueSets243Test, CompressedSuffixesAreJsonNot406) {
  for (const char* path : {"/api/dataValueSets.json.gz", "/api/dataValueSets.csv.zip",
                           "/api/dataValueSets.pdf", "/api/dataValueSets.xml.gz"}) {
    const std::string target = absl::StrCat(path, "?dataSet=pBOMPrpg1QX");
    EXPECT_EQ(Refused(target, "", k242).status, 406) << path;
    const DataValueSetsRequest request = Accepted(target, "", k243);
    EXPECT_EQ(request.export_request.format(), v1::FORMAT_JSON) << path;
    EXPECT_EQ(request.export_request.compression(), v1::COMPRESSION_UNSPECIFIED) << path;
  }
  EXPECT_EQ(FormatOf("/api/dataValueSets?dataSet=pBOMPrpg1QX", "image/png", k243), v1::FORMAT_JSON);
}

TEST(DataValueSets243Test, FormatParameterIsExactThenThePathsEnd) {
  EXPECT_EQ(FormatOf("/api/dataValueSets.csv?format=xml", "", k243), v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/dataValueSets.csv?format=JSON", "", k243), v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=adx", "", k243), v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=CSV", "", k243), v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=adx%2Bxml", "", k243), v1::FORMAT_ADX);
  EXPECT_EQ(FormatOf("/api/dataValueSets.CSV", "", k243), v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets/", "text/csv", k243), v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/43/dataValueSets.json.csv", "", k243), v1::FORMAT_CSV);
  // Tomcat's pathInfo is percent-decoded.
  EXPECT_EQ(FormatOf("/api/dataValueSets.adx%2Bxml", "", k243), v1::FORMAT_ADX);
  EXPECT_EQ(FormatOf("/api/dataValueSets.%63sv", "", k243), v1::FORMAT_CSV);
}

TEST(DataValueSets243Test, ErrorMessagesStillFollowAccept) {
  const HttpResponse response =
      Refused("/api/dataValueSets?dataSet=pBOMPrpg1QX&limit=x", "application/xml", k243);
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Header(response.headers, "Content-Type"), testing::kXmlType);
  EXPECT_EQ(Accepted("/api/dataValueSets", "application/xml", k243).message_format,
            MessageFormat::kXml);
  EXPECT_EQ(Accepted("/api/dataValueSets.xml", "", k243).message_format, MessageFormat::kXml);
  EXPECT_EQ(Accepted("/api/dataValueSets.adx+xml", "", k243).message_format, MessageFormat::kJson);
}

// --- Parameters (the reference's section 3) ----------------------------------------------

TEST(DataValueSets243Test, BindsTheNewParameters) {
  const DataValueSetsRequest request = Accepted243(
      "&categoryOptionCombo=HllvX50cXC0,Prlt0C1RF0s&offset=-20&level=3&order=OU,PE"
      "&orderByPeriod=true&inputUseCodeFallback=false&excludeDefaultCoc=yes"
      "&excludeDefaultAoc=1&unfoldOptionCombos=false");
  const ExportRequest& query = Query(request);
  EXPECT_EQ(std::vector<std::string>(query.category_option_combo().begin(),
                                     query.category_option_combo().end()),
            (std::vector<std::string>{"HllvX50cXC0", "Prlt0C1RF0s"}));
  ASSERT_TRUE(query.has_offset());
  EXPECT_EQ(query.offset(), -20);  // the validator takes the absolute value, as 2.43 does
  ASSERT_TRUE(query.has_level());
  EXPECT_EQ(query.level(), 3);
  EXPECT_EQ(Orders(request), (std::vector<int>{v1::EXPORT_ORDER_OU, v1::EXPORT_ORDER_PE}));
  EXPECT_TRUE(query.order_by_period());
  ASSERT_TRUE(query.has_input_use_code_fallback());
  EXPECT_FALSE(query.input_use_code_fallback());
  EXPECT_TRUE(query.exclude_default_coc());
  EXPECT_TRUE(query.exclude_default_aoc());
}

TEST(DataValueSets243Test, NewParametersUnsetStayUnset) {
  const ExportRequest query = Query(Accepted243("&level=&offset=&inputUseCodeFallback="));
  EXPECT_FALSE(query.has_offset());
  EXPECT_FALSE(query.has_level());
  EXPECT_FALSE(query.has_input_use_code_fallback());
  EXPECT_TRUE(query.order().empty());
  EXPECT_FALSE(query.order_by_period());
  EXPECT_FALSE(query.exclude_default_coc());
}

TEST(DataValueSets243Test, On242TheNewParametersAreIgnored) {
  const std::string target = absl::StrCat(
      kBase,
      "&categoryOptionCombo=HllvX50cXC0&offset=x&level=3&order=nonsense&orderByPeriod=maybe"
      "&inputUseCodeFallback=true&excludeDefaultCoc=true&unfoldOptionCombos=true&order=%FF");
  const ExportRequest query = Query(Accepted(target, "", k242));
  EXPECT_TRUE(query.category_option_combo().empty());
  EXPECT_FALSE(query.has_offset());
  EXPECT_FALSE(query.has_level());
  EXPECT_TRUE(query.order().empty());
  EXPECT_FALSE(query.has_input_use_code_fallback());
  EXPECT_FALSE(query.exclude_default_coc());
}

TEST(DataValueSets243Test, NewParametersThatDoNotBindAreRefused) {
  EXPECT_EQ(Refusal243("&offset=x"),
            BadRequest("Value 'x' is not valid for parameter offset. It must be an integer from "
                       "-2147483648 to 2147483647"));
  EXPECT_EQ(Refusal243("&level=1.5"),
            BadRequest("Value '1.5' is not valid for parameter level. It must be an integer "
                       "from -2147483648 to 2147483647"));
  EXPECT_EQ(Refusal243("&excludeDefaultAoc=maybe"),
            BadRequest("Value 'maybe' is not valid for parameter excludeDefaultAoc. It must be a "
                       "boolean: true or false (also on/off, yes/no, 1/0)"));
  EXPECT_EQ(Refused(absl::StrCat(kBase, "&order=%FF"), "", k243).status, 400);
}

TEST(DataValueSets243Test, DatesAreKeptEachOnItsOwn) {
  ExportRequest query = Query(Accepted243("&startDate=2024-01-01"));
  EXPECT_EQ(query.start_date(), "2024-01-01");
  EXPECT_EQ(query.end_date(), "");
  query = Query(Accepted243("&period=202401&startDate=2024-01-01&endDate=2024-12-31"));
  EXPECT_EQ(query.start_date(), "2024-01-01");  // the validator's E2003
  EXPECT_EQ(query.end_date(), "2024-12-31");
  query = Query(Accepted(absl::StrCat(kBase, "&period=202401&startDate=2024-01-01"), "", k242));
  EXPECT_EQ(query.start_date(), "");
  EXPECT_TRUE(Contains(Refusal243("&endDate=2024-13-01"),
                       "Value '2024-13-01' is not valid for parameter endDate."));
}

TEST(DataValueSets243Test, OrderBindsAsSpringBindsListOfEnum) {
  // The conversion service: exact names, elements trimmed, empty ones dropped.
  EXPECT_EQ(Orders(Accepted243("&order=DE,%20PE,,AOC")),
            (std::vector<int>{v1::EXPORT_ORDER_DE, v1::EXPORT_ORDER_PE, v1::EXPORT_ORDER_AOC}));
  EXPECT_EQ(Orders(Accepted243("&order=CREATED&order=OU")),
            (std::vector<int>{v1::EXPORT_ORDER_CREATED, v1::EXPORT_ORDER_OU}));
  EXPECT_TRUE(Orders(Accepted243("&order=")).empty());
  // Its fallback, DHIS2's ConvertEnum: any case, untrimmed.
  EXPECT_EQ(Orders(Accepted243("&order=pe,De")),
            (std::vector<int>{v1::EXPORT_ORDER_PE, v1::EXPORT_ORDER_DE}));
  EXPECT_EQ(Orders(Accepted243("&order=created&order=aoc")),
            (std::vector<int>{v1::EXPORT_ORDER_CREATED, v1::EXPORT_ORDER_AOC}));
}

TEST(DataValueSets243Test, OrderThatBindsNeitherWayIsSpringsMessage) {
  EXPECT_EQ(Refusal243("&order=x"),
            BadRequest("Value 'x' is not valid for parameter order.  Cannot convert x to class "
                       "org.hisp.dhis.datavalue.DataExportParams$Order"));
  // Lower case fails the conversion service, and the fallback neither trims nor skips.
  EXPECT_EQ(Refusal243("&order=de,%20pe"),
            BadRequest("Value 'de, pe' is not valid for parameter order.  Cannot convert  pe "
                       "to class org.hisp.dhis.datavalue.DataExportParams$Order"));
  EXPECT_EQ(Refusal243("&order=de,,pe"),
            BadRequest("Value 'de,,pe' is not valid for parameter order.  Cannot convert  to "
                       "class org.hisp.dhis.datavalue.DataExportParams$Order"));
  EXPECT_EQ(Refusal243("&order=DE&order=DE,PE"),
            BadRequest("Value 'DE,DE,PE' is not valid for parameter order.  Cannot convert "
                       "DE,PE to class org.hisp.dhis.datavalue.DataExportParams$Order"));
}

TEST(DataValueSets243Test, CompressionIsDhis2sEnum) {
  EXPECT_EQ(Accepted243("&compression=GZIP").export_request.compression(), v1::COMPRESSION_GZIP);
  EXPECT_EQ(Accepted243("&compression=Zip").export_request.compression(), v1::COMPRESSION_ZIP);
  EXPECT_EQ(Accepted243("&compression=zstd").export_request.compression(), v1::COMPRESSION_ZSTD);
  EXPECT_EQ(Accepted243("&compression=None").export_request.compression(),
            v1::COMPRESSION_UNSPECIFIED);
  // Java's equalsIgnoreCase takes U+0131 (dotless i) for I.
  EXPECT_EQ(Accepted243("&compression=z%C4%B1p").export_request.compression(), v1::COMPRESSION_ZIP);
  EXPECT_EQ(Refusal243("&compression=gz"),
            BadRequest("Value 'gz' is not valid for parameter compression. Valid values are: "
                       "[NONE, GZIP, ZIP]"));
  EXPECT_EQ(Refusal243("&compression="),
            BadRequest("compression cannot be empty. Valid values are: [NONE, GZIP, ZIP]"));
  EXPECT_EQ(Refusal243("&compression=%20gzip"),
            BadRequest("Value ' gzip' is not valid for parameter compression. Valid values are: "
                       "[NONE, GZIP, ZIP]"));
  // 2.42 took anything else for no compression.
  EXPECT_EQ(Accepted(absl::StrCat(kBase, "&compression=gz"), "", k242).export_request.compression(),
            v1::COMPRESSION_UNSPECIFIED);
}

TEST(DataValueSets243Test, UnfoldOptionCombosOnlyAsDvexportWrites) {
  EXPECT_EQ(Refusal243("&unfoldOptionCombos=true"),
            BadRequest("Value 'true' is not valid for parameter unfoldOptionCombos. dvexport does "
                       "not unfold option combos into categories and options (DHIS2 2.43's Alpha "
                       "feature) outside ADX: leave the parameter out or set it to false"));
  EXPECT_TRUE(Contains(Refusal243("&format=csv&unfoldOptionCombos=on"),
                       "Value 'on' is not valid for parameter unfoldOptionCombos. dvexport"));
  Accepted243("&unfoldOptionCombos=false");
  Accepted243("&unfoldOptionCombos=");
  Accepted243("&format=adx%2Bxml&unfoldOptionCombos=true");
  EXPECT_EQ(Refusal243("&format=adx%2Bxml&unfoldOptionCombos=false"),
            BadRequest("Value 'false' is not valid for parameter unfoldOptionCombos. dvexport "
                       "writes ADX's option combos by category and option, as DHIS2 does by "
                       "default: leave the parameter out or set it to true"));
  EXPECT_TRUE(Contains(Refusal243("&unfoldOptionCombos=perhaps"),
                       "Value 'perhaps' is not valid for parameter unfoldOptionCombos. It must "
                       "be a boolean"));
}

TEST(DataValueSets243Test, RemovedParametersAreIgnored) {
  const DataValueSetsRequest request =
      Accepted243("&programIdScheme=CODE&programStageIdScheme=x&trackedEntityAttributeIdScheme=y");
  EXPECT_EQ(Query(request).id_scheme(), "");
}

// --- Headers and file names (the reference's section 8.2) ---------------------------------

struct HeaderRow {
  const char* parameters;
  const char* content_type;
  const char* disposition;  // "<absent>" when none
};

TEST(DataValueSets243Test, HeadersAndFileNames) {
  const HeaderRow kRows[] = {
      {"", "application/json;charset=UTF-8", R"(attachment; filename="dataValues.json")"},
      {"&attachment=x", "application/json;charset=UTF-8", "<absent>"},
      {"&compression=gzip", "application/json+gzip;charset=UTF-8",
       R"(attachment; filename="dataValues.json.gz")"},
      {"&format=csv&compression=zip", "application/csv+zip;charset=UTF-8",
       R"(attachment; filename="dataValues.csv.zip")"},
      {"&format=xml&compression=gzip", "application/xml+gzip;charset=UTF-8",
       R"(attachment; filename="dataValues.xml.gz")"},
      {"&format=adx%2Bxml", "application/adx+xml;charset=UTF-8",
       R"(attachment; filename="dataValues.adx.xml")"},
      {"&format=adx%2Bxml&compression=zip", "application/adx+xml+zip;charset=UTF-8",
       R"(attachment; filename="dataValues.adx.xml.zip")"},
      {"&compression=zstd", "application/json+zstd;charset=UTF-8",
       R"(attachment; filename="dataValues.json.zst")"},
      {"&format=JSON", "application/json;charset=UTF-8",
       R"(attachment; filename="dataValues.JSON")"},
      {"&format=", "application/json;charset=UTF-8", R"(attachment; filename="dataValues.")"},
      {"&attachment=a.b.xml&format=xml&compression=gzip&startDate=2024-01-01&endDate=2024-12-31",
       "application/xml+gzip;charset=UTF-8",
       R"(attachment; filename="a.b_2024-01-01_2024-12-31.xml.gz")"},
      {"&attachment=data.json.zip&compression=zip&startDate=2022-01-01&endDate=2022-01-30",
       "application/json+zip;charset=UTF-8",
       R"(attachment; filename="data_2022-01-01_2022-01-30.json.zip")"},
      {"&period=202401&startDate=20240105", "application/json;charset=UTF-8",
       R"(attachment; filename="dataValues_2024-01-05.json")"},
      {"&attachment=&compression=gzip", "application/json+gzip;charset=UTF-8",
       R"(attachment; filename=".json.gz")"},
      {"&attachment=a;b,c.csv&format=csv&compression=gzip", "application/csv+gzip;charset=UTF-8",
       R"(attachment; filename="a;b,c.csv.gz")"},
  };
  for (const HeaderRow& row : kRows) {
    const Headers headers = Accepted243(row.parameters).headers;
    EXPECT_EQ(Header(headers, "Content-Type"), row.content_type) << row.parameters;
    EXPECT_EQ(Header(headers, "Content-Disposition"), row.disposition) << row.parameters;
    EXPECT_EQ(Header(headers, "Content-Transfer-Encoding"),
              std::string_view(row.disposition) == "<absent>" ? "<absent>" : "binary")
        << row.parameters;
  }
}

TEST(DataValueSets243Test, PlainExportHeadersInOrder) {
  const Headers expected = {
      {"Content-Type", "application/csv;charset=UTF-8"},
      {"Content-Disposition", R"(attachment; filename="dataValues.csv")"},
      {"Content-Transfer-Encoding", "binary"},
      {"Cache-Control", "no-cache, no-store, max-age=0, must-revalidate"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-XSS-Protection", "0"},
  };
  EXPECT_EQ(Accepted("/api/43/dataValueSets.csv?dataSet=pBOMPrpg1QX", "", k243).headers, expected);
  // 2.42 answered the same request without Content-Disposition.
  EXPECT_EQ(Header(Accepted("/api/dataValueSets.csv", "", k242).headers, "Content-Disposition"),
            "<absent>");
}

TEST(DataValueSets243Test, FileNamesThatWouldBreakTheHeaderAreRefused) {
  EXPECT_EQ(Refusal243("&attachment=a%22b&compression=gzip"),
            BadRequest(R"(Value 'a\"b' is not valid for parameter attachment. It names the file: )"
                       R"(printable ASCII without '\"', '/' or '\\')"));
  EXPECT_EQ(Refused(absl::StrCat(kBase, "&attachment=..%2Fx&compression=zip"), "", k243).status,
            400);
  EXPECT_EQ(Refused(absl::StrCat(kBase, "&format=a%0D%0Ab"), "", k243).status, 400);
  EXPECT_EQ(Refused(absl::StrCat(kBase, "&format=", std::string(256, 'j')), "", k243).status, 400);
  // Only where a file name is written: an attachment without compression names nothing.
  EXPECT_EQ(Header(Accepted243("&attachment=a%22b").headers, "Content-Disposition"), "<absent>");
  EXPECT_EQ(Header(Accepted243("&attachment=x&format=a%22b").headers, "Content-Type"),
            "application/json;charset=UTF-8");
}

TEST(DataValueSets243Test, AttachmentGoesToTheRequestForTheZipEntry) {
  EXPECT_EQ(Accepted243("&attachment=a.b.json&compression=zip").export_request.attachment(),
            "a.b.json");
}

}  // namespace
}  // namespace dvexport::http
