// Content negotiation (service/http/content_negotiation.h): the export's format from `format=`,
// the path's suffix or Accept, and the format of a refusal's WebMessage, through the route's
// parsing as a request meets them, and directly.

#include "service/http/content_negotiation.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "service/http/data_value_sets_request.h"
#include "service/http/web_message.h"
#include "tests/http/data_value_sets_testing.h"

namespace dvexport::http {
namespace {

using testing::Accepted;
using testing::FormatOf;
using testing::Header;
using testing::kBrowserAccept;
using testing::kJsonType;
using testing::kXmlType;
using testing::Refused;

TEST(ContentNegotiationTest, FormatParameterWinsAndIsExact) {
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=xml"), dvexport::v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=csv"), dvexport::v1::FORMAT_CSV);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=adx%2Bxml"), dvexport::v1::FORMAT_ADX);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=json"), dvexport::v1::FORMAT_JSON);
  // Over the suffix and the Accept header.
  EXPECT_EQ(FormatOf("/api/dataValueSets.csv?format=xml", "text/csv"), dvexport::v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/dataValueSets.xml?format=json"), dvexport::v1::FORMAT_JSON);
  // Anything but the three exact values is JSON: '+' decodes as a space, case matters, an empty
  // value is present, and repeated values are joined ("xml,xml").
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=adx+xml"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=XML", "application/xml"),
            dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=adx"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets.csv?format="), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets.csv?format"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=xml&format=xml"), dvexport::v1::FORMAT_JSON);
  // Even an Accept header that no handler produces.
  EXPECT_EQ(FormatOf("/api/dataValueSets?format=csv", "text/html"), dvexport::v1::FORMAT_CSV);
}

TEST(ContentNegotiationTest, RegisteredSuffixChoosesFormat) {
  EXPECT_EQ(FormatOf("/api/dataValueSets.json", "application/xml"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets.xml"), dvexport::v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/41/dataValueSets.csv"), dvexport::v1::FORMAT_CSV);
  EXPECT_EQ(FormatOf("/api/dataValueSets.adx.xml"), dvexport::v1::FORMAT_ADX);
  EXPECT_EQ(FormatOf("/api/dataValueSets.CSV"), dvexport::v1::FORMAT_CSV);  // lower-cased
}

TEST(ContentNegotiationTest, UnregisteredSuffixFallsThroughToAccept) {
  // The Import/Export app's .adx+xml: a browser gets DXF2 XML, curl JSON.
  EXPECT_EQ(FormatOf("/api/dataValueSets.adx+xml", kBrowserAccept), dvexport::v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/dataValueSets.adx+xml", "*/*"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets.foo", "text/csv"), dvexport::v1::FORMAT_CSV);
  EXPECT_EQ(FormatOf("/api/dataValueSets."), dvexport::v1::FORMAT_JSON);
}

TEST(ContentNegotiationTest, CompressedSuffixIsNotAcceptableWithoutFormat) {
  for (const char* suffix : {"json.gz", "json.zip", "xml.gz", "xml.zip", "csv.gz", "csv.zip",
                             "adx.xml.gz", "adx.xml.zip"}) {
    HttpResponse response = Refused(absl::StrCat("/api/dataValueSets.", suffix, "?dataSet=a"));
    EXPECT_EQ(response.status, 406) << suffix;
    EXPECT_EQ(Header(response.headers, "Content-Type"), kJsonType);
    EXPECT_NE(response.body.find(absl::StrCat("The suffix .", suffix,
                                              " names a compressed file, which is asked for "
                                              "with compression=gzip or compression=zip")),
              std::string::npos)
        << response.body;
  }
  EXPECT_EQ(FormatOf("/api/dataValueSets.csv.gz?format=csv&compression=gzip"),
            dvexport::v1::FORMAT_CSV);
}

TEST(ContentNegotiationTest, OtherRegisteredSuffixesAreNotAcceptable) {
  for (const char* suffix : {"pdf", "png", "xls", "xlsx", "jsonp", "geojson"}) {
    EXPECT_EQ(Refused(absl::StrCat("/api/dataValueSets.", suffix)).status, 406) << suffix;
  }
}

TEST(ContentNegotiationTest, AcceptChoosesFormat) {
  EXPECT_EQ(FormatOf("/api/dataValueSets", ""), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "*/*"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/json"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/xml"), dvexport::v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "Application/XML; charset=UTF-8"),
            dvexport::v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "text/csv"), dvexport::v1::FORMAT_CSV);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/csv"), dvexport::v1::FORMAT_CSV);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/adx+xml"), dvexport::v1::FORMAT_ADX);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/*+xml"), dvexport::v1::FORMAT_ADX);
  EXPECT_EQ(FormatOf("/api/dataValueSets", kBrowserAccept), dvexport::v1::FORMAT_XML);
  // axios's default.
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/json, text/plain, */*"),
            dvexport::v1::FORMAT_JSON);
  // Quality first, then specificity; q=0 is "not acceptable".
  EXPECT_EQ(FormatOf("/api/dataValueSets", "text/csv;q=0.5, application/xml;q=0.8"),
            dvexport::v1::FORMAT_XML);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "*/*;q=1, text/csv"), dvexport::v1::FORMAT_CSV);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/xml;q=0, */*"), dvexport::v1::FORMAT_JSON);
  // A range that includes several formats: JSON.
  EXPECT_EQ(FormatOf("/api/dataValueSets", "application/*"), dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "text/html, */*;q=0.8"), dvexport::v1::FORMAT_JSON);
  // Ranges that do not parse are left out.
  EXPECT_EQ(FormatOf("/api/dataValueSets", "garbage, application/xml;q=2, text/csv;q=x"),
            dvexport::v1::FORMAT_JSON);
  EXPECT_EQ(FormatOf("/api/dataValueSets", "garbage, text/csv"), dvexport::v1::FORMAT_CSV);
}

TEST(ContentNegotiationTest, AcceptWithoutProducedTypeIsNotAcceptable) {
  EXPECT_EQ(Refused("/api/dataValueSets", "text/html").status, 406);
  EXPECT_EQ(Refused("/api/dataValueSets", "application/json;q=0").status, 406);
  // DHIS2's XML handler produces application/xml only; the 406 itself is in XML.
  HttpResponse response = Refused("/api/dataValueSets", "text/xml");
  EXPECT_EQ(response.status, 406);
  EXPECT_EQ(Header(response.headers, "Content-Type"), kXmlType);
  EXPECT_EQ(response.body.rfind(R"(<webMessage xmlns="http://dhis2.org/schema/dxf/2.0" )"
                                R"(httpStatus="Not Acceptable" httpStatusCode="406" )"
                                R"(status="ERROR"><message>None of the acceptable)",
                                0),
            0u)
      << response.body;
}

TEST(ContentNegotiationTest, RefusalsAreXmlWhenXmlIsAcceptable) {
  EXPECT_EQ(Accepted("/api/dataValueSets.xml").message_format, MessageFormat::kXml);
  EXPECT_EQ(Accepted("/api/dataValueSets", "application/xml").message_format, MessageFormat::kXml);
  EXPECT_EQ(Accepted("/api/dataValueSets", kBrowserAccept).message_format, MessageFormat::kXml);
  EXPECT_EQ(Accepted("/api/dataValueSets.adx+xml", kBrowserAccept).message_format,
            MessageFormat::kXml);
  // `format` chooses the export, not the refusal's format (DHIS2 negotiates it from Accept).
  EXPECT_EQ(Accepted("/api/dataValueSets?format=xml").message_format, MessageFormat::kJson);
  EXPECT_EQ(Accepted("/api/dataValueSets?format=json", "application/xml").message_format,
            MessageFormat::kXml);
  // DHIS2 has no WebMessage for CSV or ADX (a 500); dvexport answers in JSON.
  EXPECT_EQ(Accepted("/api/dataValueSets.csv").message_format, MessageFormat::kJson);
  EXPECT_EQ(Accepted("/api/dataValueSets.adx.xml").message_format, MessageFormat::kJson);
  EXPECT_EQ(Accepted("/api/dataValueSets", "application/adx+xml").message_format,
            MessageFormat::kJson);

  HttpResponse response = Refused("/api/dataValueSets.xml?limit=ten");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Header(response.headers, "Content-Type"), kXmlType);
  EXPECT_EQ(response.body,
            R"(<webMessage xmlns="http://dhis2.org/schema/dxf/2.0" httpStatus="Bad Request" )"
            R"(httpStatusCode="400" status="ERROR"><message>Value 'ten' is not valid for )"
            R"(parameter limit. It must be an integer from -2147483648 to )"
            R"(2147483647</message></webMessage>)");
}

TEST(ContentNegotiationTest, AcceptableTypesAreSortedByQualityThenSpecificity) {
  const std::vector<MediaType> acceptable =
      AcceptableTypes("", "*/*;q=0.9, text/*;q=0.9, text/csv;q=0.9, application/xml, x/y;q=0");
  std::vector<std::string> names;
  for (const MediaType& type : acceptable) names.push_back(type.type + "/" + type.subtype);
  EXPECT_EQ(names, (std::vector<std::string>{"application/xml", "text/csv", "text/*", "*/*"}));
  // A registered suffix wins over Accept; only */* (or nothing) is no preference: JSON.
  EXPECT_EQ(AcceptableTypes("CSV", "application/xml").front().subtype, "csv");
  EXPECT_EQ(AcceptableTypes("", "*/*").front().subtype, "json");
  EXPECT_TRUE(AcceptableTypes("", "text/csv;q=0").empty());
}

TEST(ContentNegotiationTest, NotAcceptableMessageNamesWhatToAskForInstead) {
  EXPECT_EQ(NotAcceptableMessage("csv.gz"),
            "The suffix .csv.gz names a compressed file, which is asked for with "
            "compression=gzip or compression=zip (or give format=)");
  EXPECT_EQ(NotAcceptableMessage("pdf"),
            "None of the acceptable media types is produced here: application/json, "
            "application/xml, application/csv, text/csv and application/adx+xml");
}

}  // namespace
}  // namespace dvexport::http
