#include "service/encode/xml_243_data_value_encoder.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/encode/data_value_encoder_243_testing.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport::encode {
namespace {

using dvexport::test_support::ParseXmlStrictly;
using dvexport::test_support::XmlDocument;

// Woodstox's writeStartDocument("UTF-8", "1.0") (single quotes) and DataExportOutput.toXml's
// root (dhis2-core 2.43.1 lines 201-203).
constexpr std::string_view kStart =
    R"(<?xml version='1.0' encoding='UTF-8'?><dataValueSet xmlns="http://dhis2.org/schema/dxf/2.0")";

// ExampleRow() as 2.43 writes it: no comment (null), no followUp (false).
constexpr std::string_view kExampleValue =
    R"(<dataValue dataElement="fbfJHSPpUQD" period="202401" orgUnit="DiszpKrYNg8" )"
    R"(categoryOptionCombo="PT59n8BQbqM" attributeOptionCombo="HllvX50cXC0" value="12" )"
    R"(storedBy="admin" created="2024-01-05T10:11:12.123+0000" )"
    R"(lastUpdated="2024-01-05T10:11:12.123+0000"/>)";

std::string EncodeDocument(const DataValueGroupHeader& header,
                           const std::vector<DataValueRow>& rows, size_t initial_capacity = 1024) {
  return Encode243<Xml243DataValueEncoder>(header, rows, initial_capacity);
}

std::string Document(std::string_view values) {
  return std::string(kStart) + ">" + std::string(values) + "</dataValueSet>";
}

TEST(Xml243DataValueEncoderTest, WritesEmptyDocumentAsEmptyElement) {
  const std::string document = EncodeDocument({}, {});
  EXPECT_EQ(document, std::string(kStart) + "/>");
  absl::StatusOr<XmlDocument> parsed = ParseXmlStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->version, "1.0");
  EXPECT_EQ(parsed->encoding, "UTF-8");
  EXPECT_EQ(parsed->root.name, "http://dhis2.org/schema/dxf/2.0|dataValueSet");
}

TEST(Xml243DataValueEncoderTest, WritesHeaderAttributesWithPeriodInAdxForm) {
  // Reference §7.3: period="2024-07-01/P1M" (AdxPeriod.serialize), 2.42 wrote the ISO id.
  DataValueGroupHeader header = FullGroupHeader();
  header.id_schemes = AllCodeIdSchemes();
  EXPECT_EQ(EncodeDocument(header, {}),
            std::string(kStart) +
                R"( dataSet="pBOMPrpg1QX" period="2024-07-01/P1M" orgUnit="DiszpKrYNg8")"
                R"( attributeOptionCombo="HllvX50cXC0" dataSetIdScheme="CODE")"
                R"( dataElementIdScheme="CODE" orgUnitIdScheme="CODE")"
                R"( categoryOptionComboIdScheme="CODE" attributeOptionComboIdScheme="CODE")"
                R"( categoryIdScheme="CODE" categoryOptionIdScheme="CODE"/>)");
}

TEST(Xml243DataValueEncoderTest, WritesValueWithoutHeaderInDhis2Order) {
  EXPECT_EQ(EncodeDocument({}, {ExampleRow(), ExampleRow()}),
            Document(std::string(kExampleValue) + std::string(kExampleValue)));
}

TEST(Xml243DataValueEncoderTest, WritesEveryAttributeInDhis2Order) {
  DataValueRow row = ExampleRow();
  row.comment = T("c");
  row.followup = true;
  row.deleted = true;
  EXPECT_EQ(
      EncodeDocument({}, {row}),
      Document(R"(<dataValue dataElement="fbfJHSPpUQD" period="202401" orgUnit="DiszpKrYNg8" )"
               R"(categoryOptionCombo="PT59n8BQbqM" attributeOptionCombo="HllvX50cXC0" )"
               R"(value="12" storedBy="admin" created="2024-01-05T10:11:12.123+0000" )"
               R"(lastUpdated="2024-01-05T10:11:12.123+0000" comment="c" followUp="true" )"
               R"(deleted="true"/>)"));
}

TEST(Xml243DataValueEncoderTest, WritesFollowUpOnlyWhenTrue) {
  DataValueRow null_followup = ExampleRow();
  null_followup.followup_null = true;
  null_followup.followup = true;  // ignored: the column is NULL
  EXPECT_EQ(EncodeDocument({}, {null_followup}), Document(kExampleValue));
}

TEST(Xml243DataValueEncoderTest, LeavesOutNullAndEmptyAttributes) {
  DataValueRow row = ExampleRow();
  row.period = row.org_unit = kNullText;
  row.category_option_combo = row.attribute_option_combo = kNullText;
  row.stored_by = T("");
  row.comment = T("");
  row.value = T("");
  EXPECT_EQ(EncodeDocument({}, {row}), Document(R"(<dataValue dataElement="fbfJHSPpUQD" value="" )"
                                                R"(created="2024-01-05T10:11:12.123+0000" )"
                                                R"(lastUpdated="2024-01-05T10:11:12.123+0000"/>)"));
  row.value = kNullText;
  row.data_element = kNullText;
  EXPECT_EQ(EncodeDocument({}, {row}),
            Document(R"(<dataValue created="2024-01-05T10:11:12.123+0000" )"
                     R"(lastUpdated="2024-01-05T10:11:12.123+0000"/>)"));
}

TEST(Xml243DataValueEncoderTest, MovesHeaderAttributesOutOfTheValues) {
  EXPECT_EQ(EncodeDocument(FullGroupHeader(), {ExampleRow()}),
            std::string(kStart) +
                R"( dataSet="pBOMPrpg1QX" period="2024-07-01/P1M" orgUnit="DiszpKrYNg8")"
                R"( attributeOptionCombo="HllvX50cXC0"><dataValue dataElement="fbfJHSPpUQD")"
                R"( categoryOptionCombo="PT59n8BQbqM" value="12" storedBy="admin")"
                R"( created="2024-01-05T10:11:12.123+0000")"
                R"( lastUpdated="2024-01-05T10:11:12.123+0000"/></dataValueSet>)");
}

// Each subset of the header's members {dataSet, period, orgUnit, attributeOptionCombo}.
class Xml243HeaderCombinationTest : public testing::TestWithParam<int> {};

TEST_P(Xml243HeaderCombinationTest, WritesEachAttributeEitherOnTheRootOrOnTheValues) {
  const int mask = GetParam();
  const DataValueGroupHeader full = FullGroupHeader();
  DataValueGroupHeader header;
  std::string root(kStart);
  std::string value = R"(<dataValue dataElement="fbfJHSPpUQD")";
  if (mask & 1) {
    header.data_set = full.data_set;
    root += R"( dataSet="pBOMPrpg1QX")";
  }
  if (mask & 2) {
    header.period = full.period;
    header.period_adx = full.period_adx;
    root += R"( period="2024-07-01/P1M")";
  } else {
    value += R"( period="202401")";
  }
  if (mask & 4) {
    header.org_unit = full.org_unit;
    root += R"( orgUnit="DiszpKrYNg8")";
  } else {
    value += R"( orgUnit="DiszpKrYNg8")";
  }
  value += R"( categoryOptionCombo="PT59n8BQbqM")";
  if (mask & 8) {
    header.attribute_option_combo = full.attribute_option_combo;
    root += R"( attributeOptionCombo="HllvX50cXC0")";
  } else {
    value += R"( attributeOptionCombo="HllvX50cXC0")";
  }
  value += R"( value="12" storedBy="admin" created="2024-01-05T10:11:12.123+0000")"
           R"( lastUpdated="2024-01-05T10:11:12.123+0000"/>)";
  const std::string expected = root + ">" + value + "</dataValueSet>";
  EXPECT_EQ(EncodeDocument(header, {ExampleRow()}), expected);
  EXPECT_EQ(EncodeByParts243<Xml243DataValueEncoder>(header, {ExampleRow()}), expected);
  EXPECT_TRUE(ParseXmlStrictly(expected).ok());
}

INSTANTIATE_TEST_SUITE_P(AllSubsets, Xml243HeaderCombinationTest, testing::Range(0, 16));

TEST(Xml243DataValueEncoderTest, EscapesAttributesAsWoodstoxDoes) {
  DataValueGroupHeader header;
  header.org_unit = T("A&B <C> \"D\"");
  header.id_schemes = {{"orgUnitIdScheme", "ATTRIBUTE:\"x\""}};
  DataValueRow row = ExampleRow();
  row.comment = T("t\tl\nr\r'\x7F\xF0\x9F\x98\x80");
  row.value = T("\x01");
  EXPECT_EQ(
      EncodeDocument(header, {row}),
      std::string(kStart) +
          R"( orgUnit="A&amp;B &lt;C> &quot;D&quot;" orgUnitIdScheme="ATTRIBUTE:&quot;x&quot;">)"
          R"(<dataValue dataElement="fbfJHSPpUQD" period="202401")"
          R"( categoryOptionCombo="PT59n8BQbqM" attributeOptionCombo="HllvX50cXC0")"
          " value=\"\xEF\xBF\xBD\" storedBy=\"admin\""
          R"( created="2024-01-05T10:11:12.123+0000")"
          R"( lastUpdated="2024-01-05T10:11:12.123+0000")"
          " comment=\"t&#x9;l&#xa;r&#xd;'\x7F\xF0\x9F\x98\x80\"/></dataValueSet>");
}

TEST(Xml243DataValueEncoderTest, WritesTheSameDocumentByParts) {
  DataValueRow other = ExampleRow();
  other.followup = true;
  other.comment = T("c");
  const std::vector<DataValueRow> rows = {ExampleRow(), other, ExampleRow()};
  for (const DataValueGroupHeader& header : {DataValueGroupHeader{}, FullGroupHeader()}) {
    EXPECT_EQ(EncodeByParts243<Xml243DataValueEncoder>(header, rows), EncodeDocument(header, rows));
    EXPECT_EQ(EncodeByParts243<Xml243DataValueEncoder>(header, {}), EncodeDocument(header, {}));
  }
}

TEST(Xml243DataValueEncoderTest, WorstCaseRowsFitAfterGrowingFromTinyBuffer) {
  const std::string quotes(200, '"');
  DataValueRow row;
  row.data_element = row.period = row.org_unit = T(quotes);
  row.category_option_combo = row.attribute_option_combo = T(quotes);
  row.value = row.stored_by = row.comment = T(quotes);
  row.created.micros = row.last_updated.micros = std::numeric_limits<int64_t>::min();
  row.followup = true;
  row.deleted = true;
  DataValueGroupHeader header;
  header.data_set = header.period_adx = header.org_unit = T(quotes);
  header.attribute_option_combo = T(quotes);
  header.id_schemes = {{"categoryIdScheme", quotes}};
  const std::string small = EncodeDocument(header, {row, row}, /*initial_capacity=*/1);
  EXPECT_EQ(small, EncodeDocument(header, {row, row}, /*initial_capacity=*/1 << 20));
  absl::StatusOr<XmlDocument> parsed = ParseXmlStrictly(small);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->root.children.size(), 2u);
}

TEST(Xml243DataValueEncoderTest, StartsAFreshDocumentAfterEnd) {
  ChunkBuffer buffer(16);
  Xml243DataValueEncoder encoder(&buffer);
  encoder.Begin(FullGroupHeader());
  encoder.Add(ExampleRow());
  encoder.End();
  buffer.Clear();
  encoder.Begin({});
  encoder.End();
  EXPECT_EQ(buffer.view(), std::string(kStart) + "/>");
}

}  // namespace
}  // namespace dvexport::encode
