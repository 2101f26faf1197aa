#include "service/http/data_value_sets_request.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "service/auth/verify.h"
#include "service/dhis2/export_request_validator.h"
#include "tests/http/data_value_sets_testing.h"

namespace dvexport::http {
namespace {

using dvexport::v1::ExportRequest;
using testing::Accepted;
using testing::FormatOf;
using testing::Header;
using testing::Headers;
using testing::kBrowserAccept;
using testing::kJsonType;
using testing::Refused;

constexpr char kDataSet[] = "pBOMPrpg1QX";
constexpr char kDataSet2[] = "QX4ZTUbOt3a";
constexpr char kOrgUnit[] = "DiszpKrYNg8";
constexpr char kOrgUnit2[] = "ImspTQPwCqd";
const ExportRequest& Query(const DataValueSetsRequest& request) {
  return request.export_request.query();
}

std::vector<std::string> Values(const google::protobuf::RepeatedPtrField<std::string>& field) {
  return {field.begin(), field.end()};
}

// The JSON WebMessage of a 400 naming a parameter.
std::string BadRequest(const std::string& message) {
  return absl::StrCat(R"({"httpStatus":"Bad Request","httpStatusCode":400,"status":"ERROR",)",
                      R"("message":")", message, R"("})");
}

// --- Routes ---------------------------------------------------------------------------------

TEST(DataValueSetsPathTest, RoutesDhis2Paths) {
  for (const char* path :
       {"/api/dataValueSets", "/api/dataValueSets/", "/api/28/dataValueSets",
        "/api/42/dataValueSets", "/api/38/dataValueSets/", "/api/41/dataValueSets.json",
        "/api/dataValueSets.adx.xml", "/api/dataValueSets.adx+xml", "/api/dataValueSets.json.gz",
        "/api/dataValueSets.foo", "/api/dataValueSets."}) {
    EXPECT_TRUE(IsDataValueSetsPath(path, 42)) << path;
  }
}

TEST(DataValueSetsPathTest, RefusesOtherPaths) {
  for (const char* path :
       {"/api/43/dataValueSets", "/api/27/dataValueSets", "/api/041/dataValueSets",
        "/api/4/dataValueSets", "/api/dataValueSets.json/", "/api/dataValueSets//",
        "/api/datavaluesets", "/api/dataValueSetsX", "/dataValueSets", "/41/api/dataValueSets",
        "/api/dataValueSets/x", "/api/dataValues", "/api/", ""}) {
    EXPECT_FALSE(IsDataValueSetsPath(path, 42)) << path;
  }
}

TEST(DataValueSetsRequestTest, OtherPathsAreNotFound) {
  HttpResponse response = Refused("/api/43/dataValueSets?dataSet=pBOMPrpg1QX");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(Header(response.headers, "Content-Type"), kJsonType);
  EXPECT_EQ(response.body,
            R"({"httpStatus":"Not Found","httpStatusCode":404,"status":"ERROR","message":"No )"
            R"(such resource: the export is GET /api/dataValueSets or )"
            R"(/api/{28..42}/dataValueSets"})");
  EXPECT_EQ(Refused("/api/dataValueSets.json/").status, 404);
}

// --- Parameters -----------------------------------------------------------------------------

TEST(DataValueSetsRequestTest, BindsEveryParameterToItsField) {
  const DataValueSetsRequest request = Accepted(
      "/api/dataValueSets?dataSet=pBOMPrpg1QX&dataElement=fbfJHSPpUQD&dataElementGroup=oDkJh5Ddh7d"
      "&period=202401&orgUnit=DiszpKrYNg8&children=true&orgUnitGroup=CXw2yu5fodb"
      "&attributeOptionCombo=HllvX50cXC0&attributeCombo=bjDvmb4bfuf&attributeOptions=xYerKDKCefk"
      "&includeDeleted=yes&lastUpdated=2024-01-01T10:00:00Z&lastUpdatedDuration=10d&limit=100"
      "&inputIdScheme=code&inputOrgUnitIdScheme=NAME&inputDataElementIdScheme=UID"
      "&inputDataSetIdScheme=CODE&inputDataElementGroupIdScheme=NAME&idScheme=code"
      "&dataElementIdScheme=NAME&orgUnitIdScheme=CODE&categoryOptionComboIdScheme=UID"
      "&attributeOptionComboIdScheme=CODE&dataSetIdScheme=NAME&changesSince=AAEC"
      "&compression=gzip&compressionLevel=6&attachment=export.json");
  const ExportRequest& query = Query(request);
  EXPECT_EQ(Values(query.data_set()), std::vector<std::string>{kDataSet});
  EXPECT_EQ(Values(query.data_element()), std::vector<std::string>{"fbfJHSPpUQD"});
  EXPECT_EQ(Values(query.data_element_group()), std::vector<std::string>{"oDkJh5Ddh7d"});
  EXPECT_EQ(Values(query.period()), std::vector<std::string>{"202401"});
  EXPECT_EQ(Values(query.org_unit()), std::vector<std::string>{kOrgUnit});
  EXPECT_TRUE(query.children());
  EXPECT_EQ(Values(query.org_unit_group()), std::vector<std::string>{"CXw2yu5fodb"});
  EXPECT_EQ(Values(query.attribute_option_combo()), std::vector<std::string>{"HllvX50cXC0"});
  EXPECT_EQ(query.attribute_combo(), "bjDvmb4bfuf");
  EXPECT_EQ(Values(query.attribute_options()), std::vector<std::string>{"xYerKDKCefk"});
  EXPECT_TRUE(query.include_deleted());
  EXPECT_EQ(query.last_updated(), "2024-01-01T10:00:00Z");
  EXPECT_EQ(query.last_updated_duration(), "10d");
  ASSERT_TRUE(query.has_limit());
  EXPECT_EQ(query.limit(), 100);
  EXPECT_EQ(query.input_id_scheme(), "code");
  EXPECT_EQ(query.input_org_unit_id_scheme(), "NAME");
  EXPECT_EQ(query.input_data_element_id_scheme(), "UID");
  EXPECT_EQ(query.input_data_set_id_scheme(), "CODE");
  EXPECT_EQ(query.input_data_element_group_id_scheme(), "NAME");
  EXPECT_EQ(query.id_scheme(), "code");
  EXPECT_EQ(query.data_element_id_scheme(), "NAME");
  EXPECT_EQ(query.org_unit_id_scheme(), "CODE");
  EXPECT_EQ(query.category_option_combo_id_scheme(), "UID");
  EXPECT_EQ(query.attribute_option_combo_id_scheme(), "CODE");
  EXPECT_EQ(query.data_set_id_scheme(), "NAME");
  EXPECT_EQ(query.changes_since(), "AAEC");
  EXPECT_TRUE(query.start_date().empty());
  EXPECT_EQ(request.export_request.compression(), dvexport::v1::COMPRESSION_GZIP);
  EXPECT_EQ(request.export_request.compression_level(), 6);
  EXPECT_EQ(request.export_request.attachment(), "export.json");
}

TEST(DataValueSetsRequestTest, UnsetParametersStayUnset) {
  dvexport::v1::ExportFileRequest expected;
  expected.mutable_query();
  expected.set_format(dvexport::v1::FORMAT_JSON);
  const DataValueSetsRequest request = Accepted("/api/dataValueSets");
  EXPECT_EQ(request.export_request.SerializeAsString(), expected.SerializeAsString());
  EXPECT_FALSE(Query(request).has_limit());
}

TEST(DataValueSetsRequestTest, IgnoresUnknownParameters) {
  const DataValueSetsRequest request = Accepted(
      "/api/dataValueSets?paging=false&fields=dataValues%5B*%5D&page=2&pageSize=50"
      "&completedOnly=true&categoryOptionIdScheme=CODE&programIdScheme=CODE&DataSet=x"
      "&unknown=%C3%28&dataset=pBOMPrpg1QX");
  dvexport::v1::ExportFileRequest expected;
  expected.mutable_query();
  expected.set_format(dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(request.export_request.SerializeAsString(), expected.SerializeAsString());
}

TEST(DataValueSetsRequestTest, ListsAreRepeatedOrCommaSeparated) {
  // Python clients (requests, openhexa, dhis2-superset): repeated keys.
  ExportRequest query =
      Query(Accepted("/api/dataValueSets?dataSet=pBOMPrpg1QX&dataSet=QX4ZTUbOt3a&period=202401"
                     "&period=202402&orgUnit=DiszpKrYNg8&orgUnit=ImspTQPwCqd"));
  EXPECT_EQ(Values(query.data_set()), (std::vector<std::string>{kDataSet, kDataSet2}));
  EXPECT_EQ(Values(query.period()), (std::vector<std::string>{"202401", "202402"}));
  EXPECT_EQ(Values(query.org_unit()), (std::vector<std::string>{kOrgUnit, kOrgUnit2}));
  // app-runtime, the Android SDK and the Import/Export app: comma-joined, %2C included; each
  // element trimmed (Spring's StringToCollectionConverter).
  query =
      Query(Accepted("/api/41/dataValueSets?dataSet=pBOMPrpg1QX,QX4ZTUbOt3a&period=202401%2C202402"
                     "&orgUnit=+DiszpKrYNg8+,%20ImspTQPwCqd%09"));
  EXPECT_EQ(Values(query.data_set()), (std::vector<std::string>{kDataSet, kDataSet2}));
  EXPECT_EQ(Values(query.period()), (std::vector<std::string>{"202401", "202402"}));
  EXPECT_EQ(Values(query.org_unit()), (std::vector<std::string>{kOrgUnit, kOrgUnit2}));
  // Mixed: repeated values are not split (nor trimmed); the validator then names "a,b".
  query = Query(Accepted("/api/dataValueSets?orgUnit=DiszpKrYNg8,ImspTQPwCqd&orgUnit=x"));
  EXPECT_EQ(Values(query.org_unit()), (std::vector<std::string>{"DiszpKrYNg8,ImspTQPwCqd", "x"}));
  // Empty elements match nothing in DHIS2: dropped.
  query =
      Query(Accepted("/api/dataValueSets?orgUnit=,DiszpKrYNg8,,&dataSet=&dataSet=pBOMPrpg1QX"
                     "&period="));
  EXPECT_EQ(Values(query.org_unit()), std::vector<std::string>{kOrgUnit});
  EXPECT_EQ(Values(query.data_set()), std::vector<std::string>{kDataSet});
  EXPECT_TRUE(query.period().empty());
}

TEST(DataValueSetsRequestTest, TenThousandCommasAreNoIdentifiers) {
  const ExportRequest query =
      Query(Accepted(absl::StrCat("/api/dataValueSets?orgUnit=", std::string(10000, ','),
                                  "&dataSet=pBOMPrpg1QX", std::string(10000, ','))));
  EXPECT_TRUE(query.org_unit().empty());
  EXPECT_EQ(Values(query.data_set()), std::vector<std::string>{kDataSet});
}

TEST(DataValueSetsRequestTest, BooleansAsSpringConvertsThem) {
  for (const char* value : {"true", "True", "TRUE", "on", "Yes", "1", "%20true%20"}) {
    EXPECT_TRUE(Query(Accepted(absl::StrCat("/api/dataValueSets?children=", value))).children())
        << value;
  }
  for (const char* value : {"false", "False", "off", "NO", "0", "", "+"}) {
    ExportRequest query = Query(
        Accepted(absl::StrCat("/api/dataValueSets?children=", value, "&includeDeleted=", value)));
    EXPECT_FALSE(query.children()) << value;
    EXPECT_FALSE(query.include_deleted()) << value;
  }
  // Repeated: the first value (Spring's ArrayToObjectConverter).
  EXPECT_TRUE(Query(Accepted("/api/dataValueSets?children=true&children=maybe")).children());

  HttpResponse response = Refused("/api/dataValueSets?children=maybe");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body, BadRequest("Value 'maybe' is not valid for parameter children. It "
                                      "must be a boolean: true or false (also on/off, yes/no, "
                                      "1/0)"));
  EXPECT_EQ(Refused("/api/dataValueSets?includeDeleted=2").body,
            BadRequest("Value '2' is not valid for parameter includeDeleted. It must be a "
                       "boolean: true or false (also on/off, yes/no, 1/0)"));
  EXPECT_EQ(Refused("/api/dataValueSets?children=t%00rue").body,
            BadRequest("Value 't\\u0000rue' is not valid for parameter children. It must be a "
                       "boolean: true or false (also on/off, yes/no, 1/0)"));
  // Java's trim() takes NUL for white space: "%00" is empty, the default.
  EXPECT_FALSE(Query(Accepted("/api/dataValueSets?children=%00")).children());
  EXPECT_TRUE(Query(Accepted("/api/dataValueSets?children=%00true%00")).children());
}

TEST(DataValueSetsRequestTest, IntegersAsSpringConvertsThem) {
  struct Case {
    const char* text;
    int32_t limit;
  };
  for (const Case& c :
       {Case{"10", 10}, Case{"%2B5", 5}, Case{"-1", -1}, Case{"%201%200%20", 10}, Case{"+7+", 7},
        Case{"0x10", 16}, Case{"%2310", 16}, Case{"-0X1f", -31}, Case{"2147483647", 2147483647},
        Case{"-2147483648", -2147483647 - 1}, Case{"007", 7}}) {
    const ExportRequest query = Query(Accepted(absl::StrCat("/api/dataValueSets?limit=", c.text)));
    ASSERT_TRUE(query.has_limit()) << c.text;
    EXPECT_EQ(query.limit(), c.limit) << c.text;
  }
  EXPECT_FALSE(Query(Accepted("/api/dataValueSets?limit=")).has_limit());
  // Repeated: the first value.
  EXPECT_EQ(Query(Accepted("/api/dataValueSets?limit=3&limit=x")).limit(), 3);
  // ('+' in a query is a space: %2B is the sign.)
  for (const char* text : {"abc", "2147483648", "-2147483649", "1.5", "1e3", "%20", "%2B-1", "0x",
                           "%2B0x10", "--1", "1,2", "99999999999999999999", "0x1g"}) {
    HttpResponse response = Refused(absl::StrCat("/api/dataValueSets?limit=", text));
    EXPECT_EQ(response.status, 400) << text;
    EXPECT_NE(response.body.find("is not valid for parameter limit. It must be an integer"),
              std::string::npos)
        << response.body;
  }
  EXPECT_EQ(Refused("/api/dataValueSets?limit=ten").body,
            BadRequest("Value 'ten' is not valid for parameter limit. It must be an integer from "
                       "-2147483648 to 2147483647"));
  EXPECT_EQ(Accepted("/api/dataValueSets?compressionLevel=9").export_request.compression_level(),
            9);
  EXPECT_EQ(Refused("/api/dataValueSets?compressionLevel=max").body,
            BadRequest("Value 'max' is not valid for parameter compressionLevel. It must be an "
                       "integer from -2147483648 to 2147483647"));
}

TEST(DataValueSetsRequestTest, NegativeLimitIsLeftToTheValidator) {
  const ExportRequest query = Query(Accepted(
      "/api/dataValueSets?dataSet=pBOMPrpg1QX&period=202401&orgUnit=DiszpKrYNg8&limit=-1000"));
  absl::StatusOr<dhis2::ExportParams> params =
      dhis2::ValidateExportRequest(query, dhis2::RuleOrder::kLastFailure);
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(params.status().message(), "E2009: Limit cannot be less than zero: `-1,000`");
}

TEST(DataValueSetsRequestTest, DatesAreUsedOnlyWithoutPeriodAndTogether) {
  ExportRequest query =
      Query(Accepted("/api/dataValueSets?startDate=2024-01-01&endDate=2024-12-31"));
  EXPECT_EQ(query.start_date(), "2024-01-01");
  EXPECT_EQ(query.end_date(), "2024-12-31");
  // With a period DHIS2 ignores them: no E2003 from a URL.
  query =
      Query(Accepted("/api/dataValueSets?period=202401&startDate=2024-01-01&endDate=2024-12-31"));
  EXPECT_TRUE(query.start_date().empty());
  EXPECT_TRUE(query.end_date().empty());
  // Even a period whose only element is empty counts as given.
  query = Query(Accepted("/api/dataValueSets?period=,&startDate=2024-01-01&endDate=2024-12-31"));
  EXPECT_TRUE(query.start_date().empty());
  // One without the other is ignored.
  query = Query(Accepted("/api/dataValueSets?startDate=2024-01-01"));
  EXPECT_TRUE(query.start_date().empty());
  query = Query(Accepted("/api/dataValueSets?startDate=&endDate=2024-01-01"));
  EXPECT_TRUE(query.end_date().empty());
  // Every form DateUtils.parseDate accepts, passed on as written.
  query = Query(Accepted("/api/dataValueSets?startDate=20240105&endDate=2024-03"));
  EXPECT_EQ(query.start_date(), "20240105");
  EXPECT_EQ(query.end_date(), "2024-03");
  query = Query(
      Accepted("/api/dataValueSets?startDate=2023&endDate=2024-02-29T23:59:59.123456789%2B02:00"));
  EXPECT_EQ(query.start_date(), "2023");
  EXPECT_EQ(query.end_date(), "2024-02-29T23:59:59.123456789+02:00");
}

TEST(DataValueSetsRequestTest, DatesThatDoNotParseAreRefusedEvenWhenUnused) {
  EXPECT_EQ(
      Refused("/api/dataValueSets?period=202401&startDate=2024-13-01&endDate=2024-12-31").body,
      BadRequest("Value '2024-13-01' is not valid for parameter startDate. \\\"2024-13-01\\\""
                 " is not a valid date (yyyy-MM-dd)"));
  EXPECT_EQ(Refused("/api/dataValueSets?startDate=2024-01-01&endDate=tomorrow").status, 400);
  // Repeated dates are joined with ',' by Spring: no date.
  EXPECT_NE(Refused("/api/dataValueSets?endDate=2024-01-01&endDate=2024-02-01")
                .body.find("Value '2024-01-01,2024-02-01' is not valid for parameter endDate."),
            std::string::npos);
  EXPECT_NE(Refused("/api/dataValueSets?lastUpdated=2024-02-30")
                .body.find("Value '2024-02-30' is not valid for parameter lastUpdated."),
            std::string::npos);
}

TEST(DataValueSetsRequestTest, CompressionAsDhis2ReadsIt) {
  struct Case {
    const char* text;
    dvexport::v1::Compression compression;
  };
  for (const Case& c :
       {Case{"gzip", dvexport::v1::COMPRESSION_GZIP}, Case{"GZIP", dvexport::v1::COMPRESSION_GZIP},
        Case{"Zip", dvexport::v1::COMPRESSION_ZIP}, Case{"zstd", dvexport::v1::COMPRESSION_ZSTD},
        Case{"none", dvexport::v1::COMPRESSION_UNSPECIFIED},
        Case{"gz", dvexport::v1::COMPRESSION_UNSPECIFIED},
        Case{"gzip&compression=gzip", dvexport::v1::COMPRESSION_UNSPECIFIED},
        Case{"", dvexport::v1::COMPRESSION_UNSPECIFIED}}) {
    EXPECT_EQ(Accepted(absl::StrCat("/api/dataValueSets?compression=", c.text))
                  .export_request.compression(),
              c.compression)
        << c.text;
  }
}

// --- Hostile input --------------------------------------------------------------------------

TEST(DataValueSetsRequestTest, InvalidPercentEncodingNamesTheParameter) {
  HttpResponse response = Refused("/api/dataValueSets?dataSet=pBOMPrpg1QX&orgUnit=%zz");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Header(response.headers, "Content-Type"), kJsonType);
  EXPECT_EQ(Header(response.headers, "Cache-Control"), "no-cache, private");
  EXPECT_EQ(response.body, BadRequest("Value '%zz' is not valid for parameter orgUnit. It is not "
                                      "valid percent-encoded text (RFC 3986)"));
  EXPECT_EQ(Refused("/api/dataValueSets?period=2024%").body,
            BadRequest("Value '2024%' is not valid for parameter period. It is not valid "
                       "percent-encoded text (RFC 3986)"));
  // A key is decoded to name it.
  EXPECT_EQ(Refused("/api/dataValueSets?org%55nit=%4").body,
            BadRequest("Value '%4' is not valid for parameter orgUnit. It is not valid "
                       "percent-encoded text (RFC 3986)"));
  EXPECT_EQ(Refused("/api/dataValueSets?%zz=1").body,
            BadRequest("Parameter name '%zz' is not valid percent-encoded text (RFC 3986)"));
  // Characters a URI cannot hold raw: a space, a quote, a raw non-ASCII byte.
  EXPECT_EQ(Refused("/api/dataValueSets?orgUnit=a b").body,
            BadRequest("Value 'a b' is not valid for parameter orgUnit. It is not valid "
                       "percent-encoded text (RFC 3986)"));
  EXPECT_EQ(Refused("/api/dataValueSets?attachment=\"x\"").status, 400);
  EXPECT_EQ(Refused("/api/dataValueSets?orgUnit=\xC3\xA9").body,
            BadRequest("Value '\xC3\xA9' is not valid for parameter orgUnit. It is not valid "
                       "percent-encoded text (RFC 3986)"));
  // The path itself.
  EXPECT_EQ(Refused("/api/dataValueSets.%zz?orgUnit=a").body,
            BadRequest("The request target is not a valid URI path and query (RFC 3986)"));
}

// A target is a piece of the connection's buffer, never NUL-terminated: parsing reads only its
// bytes (AddressSanitizer checks it here: the target is a heap buffer exactly its size), and a
// bad parameter before a good one is still the one named.
TEST(DataValueSetsRequestTest, TargetWithoutATerminatingNulIsReadToItsEndOnly) {
  for (const std::string text : {"/api/dataValueSets?dataSet=%ZZ&period=202401&orgUnit=abc",
                                 "/api/dataValueSets?dataSet=a&period=%E2%82&orgUnit=%ZZ",
                                 "/api/dataValueSets?%zz=1&orgUnit=x",
                                 "/api/dataValueSets?dataSet=pBOMPrpg1QX&orgUnit=ImspTQPwCqd"}) {
    const std::unique_ptr<char[]> buffer(new char[text.size()]);
    std::memcpy(buffer.get(), text.data(), text.size());
    const ParsedRequest parsed =
        ParseDataValueSetsRequest(std::string_view(buffer.get(), text.size()), "", 42);
    const ParsedRequest expected = ParseDataValueSetsRequest(text, "", 42);
    ASSERT_EQ(parsed.request.has_value(), expected.request.has_value()) << text;
    if (parsed.refusal.has_value()) {
      EXPECT_EQ(parsed.refusal->body, expected.refusal->body) << text;
    }
  }
  EXPECT_EQ(Refused("/api/dataValueSets?dataSet=%ZZ&period=202401&orgUnit=abc").body,
            BadRequest("Value '%ZZ' is not valid for parameter dataSet. It is not valid "
                       "percent-encoded text (RFC 3986)"));
}

TEST(DataValueSetsRequestTest, InvalidUtf8NamesTheParameter) {
  HttpResponse response = Refused("/api/dataValueSets?orgUnit=%C3%28");
  EXPECT_EQ(response.status, 400);
  // The JSON escaper writes the ill-formed byte as U+FFFD.
  EXPECT_EQ(response.body,
            BadRequest("Value '\xEF\xBF\xBD(' is not valid for parameter orgUnit. It is not UTF-8 "
                       "(percent-encode text as UTF-8 bytes)"));
  EXPECT_EQ(Refused("/api/dataValueSets?lastUpdatedDuration=%FF").status, 400);
  EXPECT_EQ(Refused("/api/dataValueSets?format=%ED%A0%80").status, 400);  // a surrogate
  // Valid UTF-8 passes.
  EXPECT_EQ(Values(Query(Accepted("/api/dataValueSets?orgUnit=%C3%A9%F0%9F%98%80")).org_unit()),
            std::vector<std::string>{"\xC3\xA9\xF0\x9F\x98\x80"});
}

TEST(DataValueSetsRequestTest, NulIsLeftToTheValidator) {
  // Java's trim() strips NUL from a comma-separated element's ends, not from its middle.
  EXPECT_TRUE(Query(Accepted("/api/dataValueSets?orgUnit=%00")).org_unit().empty());
  const ExportRequest query = Query(Accepted(
      "/api/dataValueSets?dataSet=pBOMPrpg1QX&period=202401&orgUnit=a%00b&inputIdScheme=CODE"));
  EXPECT_EQ(Values(query.org_unit()), std::vector<std::string>{std::string("a\0b", 3)});
  absl::StatusOr<dhis2::ExportParams> params =
      dhis2::ValidateExportRequest(query, dhis2::RuleOrder::kLastFailure);
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(params.status().message().find("org_unit"), std::string::npos);
}

TEST(DataValueSetsRequestTest, HugeValuesMakeShortMessages) {
  const std::string huge(100000, '9');
  HttpResponse response = Refused(absl::StrCat("/api/dataValueSets?limit=", huge));
  EXPECT_EQ(response.status, 400);
  EXPECT_LT(response.body.size(), 400u);
  EXPECT_NE(response.body.find(absl::StrCat("Value '", std::string(64, '9'),
                                            "...' (100000 bytes) is not valid for parameter "
                                            "limit.")),
            std::string::npos)
      << response.body;
  // A multi-byte character is not cut.
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "%C3%A9";
  response = Refused(absl::StrCat("/api/dataValueSets?children=a", accents));
  std::string expected = "Value 'a";
  for (int i = 0; i < 31; ++i) expected += "\xC3\xA9";
  EXPECT_NE(response.body.find(expected + "...' (201 bytes)"), std::string::npos) << response.body;
  // A huge identifier list is bound as it is (the validator judges it).
  EXPECT_EQ(Query(Accepted(absl::StrCat("/api/dataValueSets?period=", huge))).period(0), huge);
}

TEST(DataValueSetsRequestTest, AttachmentThatWouldBreakTheHeaderIsRefused) {
  constexpr char kWhy[] = "A file name is printable ASCII without '\\\"', ';', ',', '/' or '\\\\'";
  EXPECT_EQ(Refused("/api/dataValueSets?attachment=a%0D%0ASet-Cookie:%20x=1").body,
            BadRequest(absl::StrCat("Value 'a\\r\\nSet-Cookie: x=1' is not valid for parameter "
                                    "attachment. ",
                                    kWhy)));
  for (const char* value : {"a%0Ab", "a%00b", "a%09b", "a%7Fb", "a%22b", "a;filename*=x", "a%3Bb",
                            "a,b", "..%2Fetc%2Fx", "a%5Cb", "donn%C3%A9es"}) {
    HttpResponse response = Refused(absl::StrCat("/api/dataValueSets?attachment=", value));
    EXPECT_EQ(response.status, 400) << value;
    EXPECT_NE(response.body.find("is not valid for parameter attachment. A file name is "
                                 "printable ASCII"),
              std::string::npos)
        << response.body;
  }
  HttpResponse response =
      Refused(absl::StrCat("/api/dataValueSets?attachment=", std::string(256, 'a')));
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body,
            BadRequest(absl::StrCat("Value '", std::string(64, 'a'),
                                    "...' (256 bytes) is not valid for parameter attachment. A "
                                    "file name has at most 255 characters")));
  const DataValueSetsRequest request =
      Accepted(absl::StrCat("/api/dataValueSets?attachment=", std::string(255, 'a')));
  EXPECT_EQ(request.export_request.attachment(), std::string(255, 'a'));
}

// --- Headers of a 200 -----------------------------------------------------------------------

TEST(DataValueSetsRequestTest, PlainExportHeaders) {
  const Headers expected = {
      {"Content-Type", "application/json;charset=UTF-8"},
      {"Cache-Control", "no-cache, no-store, max-age=0, must-revalidate"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-XSS-Protection", "0"},
  };
  EXPECT_EQ(Accepted("/api/dataValueSets?dataSet=pBOMPrpg1QX").headers, expected);
  EXPECT_EQ(Header(Accepted("/api/dataValueSets.xml").headers, "Content-Type"),
            "application/xml;charset=UTF-8");
  EXPECT_EQ(Header(Accepted("/api/dataValueSets.csv").headers, "Content-Type"),
            "application/csv;charset=UTF-8");
  EXPECT_EQ(Header(Accepted("/api/dataValueSets", "text/csv").headers, "Content-Type"),
            "application/csv;charset=UTF-8");
  EXPECT_EQ(Header(Accepted("/api/dataValueSets.adx.xml").headers, "Content-Type"),
            "application/adx+xml;charset=UTF-8");
  for (const auto& [name, value] : Accepted("/api/dataValueSets?compression=gzip").headers) {
    EXPECT_NE(name, "Content-Encoding");
  }
}

TEST(DataValueSetsRequestTest, CompressedExportHeaders) {
  // curl in the DHIS2 docs: .csv?...&compression=gzip. The type stays the plain format's.
  Headers headers = Accepted(
                        "/api/dataValueSets.csv?dataSet=pBOMPrpg1QX&period=202401"
                        "&orgUnit=DiszpKrYNg8&compression=gzip")
                        .headers;
  const Headers expected = {
      {"Content-Type", "application/csv;charset=UTF-8"},
      {"Content-Disposition", "attachment; filename=dataValues.csv.gz"},
      {"Content-Transfer-Encoding", "binary"},
      {"Cache-Control", "no-cache, no-store, max-age=0, must-revalidate"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-XSS-Protection", "0"},
  };
  EXPECT_EQ(headers, expected);
  // DHIS2's e2e DataValueSetTest: ADX with dates, zip.
  headers = Accepted(
                "/api/dataValueSets?format=adx%2Bxml&startDate=2024-01-01&endDate=2050-01-30"
                "&compression=zip")
                .headers;
  EXPECT_EQ(Header(headers, "Content-Type"), "application/adx+xml;charset=UTF-8");
  EXPECT_EQ(Header(headers, "Content-Disposition"),
            "attachment; filename=dataValues_2024-01-01_2050-01-30.xml.zip");
  headers = Accepted("/api/dataValueSets.json?compression=zstd").headers;
  EXPECT_EQ(Header(headers, "Content-Disposition"), "attachment; filename=dataValues.json.zst");
  EXPECT_EQ(Header(headers, "Content-Transfer-Encoding"), "binary");
  // Dates next to a period are not used, nor named.
  headers = Accepted(
                "/api/dataValueSets.xml?period=202401&startDate=2024-01-01"
                "&endDate=2024-12-31&compression=gzip")
                .headers;
  EXPECT_EQ(Header(headers, "Content-Disposition"), "attachment; filename=dataValues.xml.gz");
}

TEST(DataValueSetsRequestTest, AttachmentHeaders) {
  DataValueSetsRequest request = Accepted("/api/dataValueSets?period=202401&attachment=data.json");
  EXPECT_EQ(request.export_request.attachment(), "data.json");
  EXPECT_EQ(Header(request.headers, "Content-Disposition"), "attachment; filename=data.json.json");
  EXPECT_EQ(Header(request.headers, "Content-Transfer-Encoding"), "binary");
  request = Accepted("/api/dataValueSets.csv?attachment=data.csv.gz&compression=gzip");
  EXPECT_EQ(Header(request.headers, "Content-Disposition"), "attachment; filename=data.csv.gz");
  request = Accepted(
      "/api/dataValueSets?attachment=my+data.json&startDate=2024-01-01&endDate=2024-12-31"
      "&compression=zip");
  EXPECT_EQ(Header(request.headers, "Content-Disposition"),
            "attachment; filename=my data_2024-01-01_2024-12-31.json.zip");
  request = Accepted("/api/dataValueSets?attachment=");
  EXPECT_EQ(Header(request.headers, "Content-Disposition"), "<absent>");
  EXPECT_EQ(Header(request.headers, "Content-Transfer-Encoding"), "<absent>");
}

// --- Clients of the reference's table -------------------------------------------------------

TEST(DataValueSetsClientsTest, CurlFromTheDocs) {
  DataValueSetsRequest request =
      Accepted("/api/dataValueSets?dataSet=pBOMPrpg1QX&period=201401&orgUnit=DiszpKrYNg8",
               "application/xml");
  EXPECT_EQ(request.export_request.format(), dvexport::v1::FORMAT_XML);
  request = Accepted("/api/dataValueSets?orgUnit=DiszpKrYNg8&dataSet=pBOMPrpg1QX&period=201401",
                     "application/adx+xml");
  EXPECT_EQ(request.export_request.format(), dvexport::v1::FORMAT_ADX);
  // The docs' typo: orgUnit is never bound, so DHIS2 answers E2006.
  request = Accepted(
      "/api/dataValueSets?dataValueSets?orgUnit=DiszpKrYNg8&dataSet=pBOMPrpg1QX&period=201401",
      "application/adx+xml");
  EXPECT_TRUE(Query(request).org_unit().empty());
  absl::StatusOr<dhis2::ExportParams> params =
      dhis2::ValidateExportRequest(Query(request), dhis2::RuleOrder::kLastFailure);
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(RefusalResponse(params.status(), request.message_format, false).body,
            R"({"httpStatus":"Conflict","httpStatusCode":409,"status":"ERROR","message":"At )"
            R"(least one organisation unit or organisation unit group must be )"
            R"(specified","errorCode":"E2006"})");
}

TEST(DataValueSetsClientsTest, NoParametersAtAllIsE2006AsInDhis2) {
  const DataValueSetsRequest request = Accepted("/api/dataValueSets", "*/*");
  absl::StatusOr<dhis2::ExportParams> params =
      dhis2::ValidateExportRequest(Query(request), dhis2::RuleOrder::kLastFailure);
  ASSERT_FALSE(params.ok());
  const HttpResponse response = RefusalResponse(params.status(), request.message_format, false);
  EXPECT_EQ(response.status, 409);
  EXPECT_EQ(response.body,
            R"({"httpStatus":"Conflict","httpStatusCode":409,"status":"ERROR","message":"At )"
            R"(least one organisation unit or organisation unit group must be )"
            R"(specified","errorCode":"E2006"})");
}

TEST(DataValueSetsClientsTest, PythonClientsRepeatKeys) {
  // openhexa-toolbox: repeated keys, Python's True.
  const DataValueSetsRequest request = Accepted(
      "/api/dataValueSets?dataElement=fbfJHSPpUQD&dataElement=cYeuwXTCPkU&period=202401"
      "&period=202402&orgUnit=DiszpKrYNg8&children=True&includeDeleted=False",
      "*/*");
  EXPECT_EQ(Values(Query(request).data_element()),
            (std::vector<std::string>{"fbfJHSPpUQD", "cYeuwXTCPkU"}));
  EXPECT_TRUE(Query(request).children());
  EXPECT_FALSE(Query(request).include_deleted());
  EXPECT_EQ(request.export_request.format(), dvexport::v1::FORMAT_JSON);
  EXPECT_TRUE(dhis2::ValidateExportRequest(Query(request), dhis2::RuleOrder::kLastFailure).ok());
  // dhis2.py: the format as the path's suffix.
  EXPECT_EQ(FormatOf("/api/39/dataValueSets.csv?dataSet=pBOMPrpg1QX", "*/*"),
            dvexport::v1::FORMAT_CSV);
}

TEST(DataValueSetsClientsTest, AndroidSdkAndAppRuntimeJoinWithCommas) {
  DataValueSetsRequest request = Accepted(
      "/api/dataValueSets?fields=dataElement%2Cperiod%2CorgUnit&lastUpdated=2024-05-01T10:11:12.345"
      "&dataSet=pBOMPrpg1QX,QX4ZTUbOt3a&period=202401,202402&orgUnit=DiszpKrYNg8,ImspTQPwCqd"
      "&attributeOptionCombo=HllvX50cXC0&children=true&includeDeleted=true");
  EXPECT_EQ(Values(Query(request).data_set()), (std::vector<std::string>{kDataSet, kDataSet2}));
  EXPECT_EQ(Query(request).last_updated(), "2024-05-01T10:11:12.345");
  EXPECT_TRUE(Query(request).include_deleted());
  EXPECT_TRUE(dhis2::ValidateExportRequest(Query(request), dhis2::RuleOrder::kLastFailure).ok());
  request = Accepted(
      "/api/41/dataValueSets?dataSet=pBOMPrpg1QX,QX4ZTUbOt3a&period=202401"
      "&orgUnit=DiszpKrYNg8&children=false",
      "application/json");
  EXPECT_EQ(request.export_request.format(), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(request.message_format, MessageFormat::kJson);
}

TEST(DataValueSetsClientsTest, ImportExportAppDownload) {
  const DataValueSetsRequest request = Accepted(
      "/api/dataValueSets.adx+xml?dataElementIdScheme=CODE&orgUnitIdScheme=CODE&idScheme=CODE"
      "&includeDeleted=false&children=true&startDate=2024-01-01&endDate=2024-12-31"
      "&orgUnit=DiszpKrYNg8,ImspTQPwCqd&dataSet=pBOMPrpg1QX,QX4ZTUbOt3a&compression=zip",
      kBrowserAccept);
  EXPECT_EQ(request.export_request.format(), dvexport::v1::FORMAT_XML);
  EXPECT_EQ(request.export_request.compression(), dvexport::v1::COMPRESSION_ZIP);
  EXPECT_EQ(Query(request).start_date(), "2024-01-01");
  EXPECT_EQ(Query(request).id_scheme(), "CODE");
  EXPECT_EQ(Header(request.headers, "Content-Type"), "application/xml;charset=UTF-8");
  EXPECT_EQ(Header(request.headers, "Content-Disposition"),
            "attachment; filename=dataValues_2024-01-01_2024-12-31.xml.zip");
  EXPECT_TRUE(dhis2::ValidateExportRequest(Query(request), dhis2::RuleOrder::kLastFailure).ok());
}

}  // namespace
}  // namespace dvexport::http
