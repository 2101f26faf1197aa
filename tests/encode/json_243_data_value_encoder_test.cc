#include "service/encode/json_243_data_value_encoder.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/encode/data_value_encoder_243_testing.h"
#include "tests/encode/strict_json_parser.h"

namespace dvexport::encode {
namespace {

using test_support::ParseJsonStrictly;

// ExampleRow() as 2.43 writes it without a header: no comment (null), followup false.
constexpr std::string_view kExampleValue =
    R"({"dataElement":"fbfJHSPpUQD","period":"202401","orgUnit":"DiszpKrYNg8",)"
    R"("categoryOptionCombo":"PT59n8BQbqM","attributeOptionCombo":"HllvX50cXC0","value":"12",)"
    R"("storedBy":"admin","created":"2024-01-05T10:11:12.123+0000",)"
    R"("lastUpdated":"2024-01-05T10:11:12.123+0000","followup":false})";

std::string EncodeDocument(const DataValueGroupHeader& header,
                           const std::vector<DataValueRow>& rows, size_t initial_capacity = 1024) {
  return Encode243<Json243DataValueEncoder>(header, rows, initial_capacity);
}

std::string Document(std::string_view values) {
  return R"({"dataValues":[)" + std::string(values) + "]}";
}

TEST(Json243DataValueEncoderTest, WritesEmptyDocumentWithoutHeader) {
  // DHIS2 2.43 reference §7.1.1: "No header keys: {"dataValues":[]}", no trailing line end.
  EXPECT_EQ(EncodeDocument({}, {}), R"({"dataValues":[]})");
}

TEST(Json243DataValueEncoderTest, WritesGroupHeaderLikeDataExportOutputTest) {
  // dhis2-core 2.43.1 DataExportOutputTest.testToJson_Group, minimized.
  DataValueGroupHeader header;
  header.data_set = T("ds123456789");
  header.period = T("2026");
  header.period_adx = T("2026-01-01/P1Y");
  header.org_unit = T("ou123456789");
  header.attribute_option_combo = T("aoc23456789");
  EXPECT_EQ(EncodeDocument(header, {}),
            R"({"dataSet":"ds123456789","period":"2026","orgUnit":"ou123456789",)"
            R"("attributeOptionCombo":"aoc23456789","dataValues":[]})");
}

TEST(Json243DataValueEncoderTest, WritesIdSchemesLikeDataExportOutputTest) {
  // dhis2-core 2.43.1 DataExportOutputTest.testToJson_Schema, minimized.
  DataValueGroupHeader header;
  header.id_schemes = AllCodeIdSchemes();
  EXPECT_EQ(EncodeDocument(header, {}),
            R"({"dataSetIdScheme":"CODE","dataElementIdScheme":"CODE","orgUnitIdScheme":"CODE",)"
            R"("categoryOptionComboIdScheme":"CODE","attributeOptionComboIdScheme":"CODE",)"
            R"("categoryIdScheme":"CODE","categoryOptionIdScheme":"CODE","dataValues":[]})");
}

TEST(Json243DataValueEncoderTest, WritesEveryMemberLikeDataExportOutputTest) {
  // dhis2-core 2.43.1 DataExportOutputTest.testToJson_Values, minimized; its created and
  // lastUpdated are strings made up by the test ("2020-01-01"), here real timestamps.
  DataValueRow row;
  row.data_element = T("de123456789");
  row.period = T("2020");
  row.org_unit = T("ou123456789");
  row.category_option_combo = T("coc23456789");
  row.attribute_option_combo = T("aoc23456789");
  row.value = T("value");
  row.comment = T("comment");
  row.followup = true;
  row.stored_by = T("storedBy");
  row.created.usual_text = "2020-01-01 00:00:00";
  row.last_updated.usual_text = "2026-01-01 00:00:00";
  row.deleted = true;
  EXPECT_EQ(EncodeDocument({}, {row}),
            Document(R"({"dataElement":"de123456789","period":"2020","orgUnit":"ou123456789",)"
                     R"("categoryOptionCombo":"coc23456789","attributeOptionCombo":"aoc23456789",)"
                     R"("value":"value","storedBy":"storedBy",)"
                     R"("created":"2020-01-01T00:00:00.000+0000",)"
                     R"("lastUpdated":"2026-01-01T00:00:00.000+0000","comment":"comment",)"
                     R"("followup":true,"deleted":true})"));
}

TEST(Json243DataValueEncoderTest, WritesValueWithoutHeaderInDhis2Order) {
  EXPECT_EQ(EncodeDocument({}, {ExampleRow()}), Document(kExampleValue));
}

TEST(Json243DataValueEncoderTest, SeparatesValuesWithCommas) {
  const std::string value(kExampleValue);
  EXPECT_EQ(EncodeDocument({}, {ExampleRow(), ExampleRow(), ExampleRow()}),
            Document(value + "," + value + "," + value));
}

TEST(Json243DataValueEncoderTest, LeavesOutNullMembers) {
  DataValueRow row = ExampleRow();
  row.period = row.org_unit = kNullText;
  row.category_option_combo = row.attribute_option_combo = kNullText;
  row.value = row.stored_by = row.comment = kNullText;
  row.stored_by.bytes = "ignored";
  EXPECT_EQ(EncodeDocument({}, {row}),
            Document(R"({"dataElement":"fbfJHSPpUQD","created":"2024-01-05T10:11:12.123+0000",)"
                     R"("lastUpdated":"2024-01-05T10:11:12.123+0000","followup":false})"));
}

TEST(Json243DataValueEncoderTest, LeavesOutLeftOutOptionCombos) {
  // excludeDefaultCoc / excludeDefaultAoc: the caller passes null combos.
  DataValueRow row = ExampleRow();
  row.category_option_combo = kNullText;
  row.attribute_option_combo = kNullText;
  EXPECT_EQ(EncodeDocument({}, {row}),
            Document(R"({"dataElement":"fbfJHSPpUQD","period":"202401","orgUnit":"DiszpKrYNg8",)"
                     R"("value":"12","storedBy":"admin","created":"2024-01-05T10:11:12.123+0000",)"
                     R"("lastUpdated":"2024-01-05T10:11:12.123+0000","followup":false})"));
}

TEST(Json243DataValueEncoderTest, LeavesOutEmptyStoredByAndCommentButKeepsEmptyValue) {
  DataValueRow row = ExampleRow();
  row.value = T("");
  row.stored_by = T("");
  row.comment = T("");
  EXPECT_EQ(EncodeDocument({}, {row}),
            Document(R"({"dataElement":"fbfJHSPpUQD","period":"202401","orgUnit":"DiszpKrYNg8",)"
                     R"("categoryOptionCombo":"PT59n8BQbqM","attributeOptionCombo":"HllvX50cXC0",)"
                     R"("value":"","created":"2024-01-05T10:11:12.123+0000",)"
                     R"("lastUpdated":"2024-01-05T10:11:12.123+0000","followup":false})"));
}

TEST(Json243DataValueEncoderTest, KeepsStoredByAndCommentOfWhiteSpace) {
  DataValueRow row = ExampleRow();
  row.stored_by = T(" ");
  row.comment = T(" ");
  const std::string document = EncodeDocument({}, {row});
  EXPECT_NE(document.find(R"("storedBy":" ","created")"), std::string::npos) << document;
  EXPECT_NE(document.find(R"("comment":" ","followup")"), std::string::npos) << document;
}

TEST(Json243DataValueEncoderTest, WritesFollowupOnlyWhenNotNull) {
  DataValueRow followup = ExampleRow();
  followup.followup = true;
  DataValueRow null_followup = ExampleRow();
  null_followup.followup_null = true;
  const std::string value(kExampleValue);
  const std::string without_followup = value.substr(0, value.find(R"(,"followup")")) + "}";
  EXPECT_EQ(EncodeDocument({}, {followup}), Document(value.substr(0, value.size() - 6) + "true}"));
  EXPECT_EQ(EncodeDocument({}, {null_followup}), Document(without_followup));
}

TEST(Json243DataValueEncoderTest, WritesDeletedOnlyWhenDeleted) {
  DataValueRow deleted = ExampleRow();
  deleted.deleted = true;
  deleted.followup_null = true;
  const std::string value(kExampleValue);
  EXPECT_EQ(EncodeDocument({}, {deleted}),
            Document(value.substr(0, value.find(R"(,"followup")")) + R"(,"deleted":true})"));
}

TEST(Json243DataValueEncoderTest, MovesHeaderMembersOutOfTheValues) {
  // DHIS2 2.43 reference §7.1.1-7.1.2: one data set, period, org unit and AOC requested.
  EXPECT_EQ(EncodeDocument(FullGroupHeader(), {ExampleRow(), ExampleRow()}),
            R"({"dataSet":"pBOMPrpg1QX","period":"202407","orgUnit":"DiszpKrYNg8",)"
            R"("attributeOptionCombo":"HllvX50cXC0","dataValues":[)"
            R"({"dataElement":"fbfJHSPpUQD","categoryOptionCombo":"PT59n8BQbqM","value":"12",)"
            R"("storedBy":"admin","created":"2024-01-05T10:11:12.123+0000",)"
            R"("lastUpdated":"2024-01-05T10:11:12.123+0000","followup":false},)"
            R"({"dataElement":"fbfJHSPpUQD","categoryOptionCombo":"PT59n8BQbqM","value":"12",)"
            R"("storedBy":"admin","created":"2024-01-05T10:11:12.123+0000",)"
            R"("lastUpdated":"2024-01-05T10:11:12.123+0000","followup":false}]})");
}

TEST(Json243DataValueEncoderTest, WritesEmptyDocumentWithHeaderOfTheReference) {
  // DHIS2 2.43 reference §7.1.1: "2.43 empty result, single DS/PE/OU".
  DataValueGroupHeader header = FullGroupHeader();
  header.attribute_option_combo.reset();
  EXPECT_EQ(EncodeDocument(header, {}),
            R"({"dataSet":"pBOMPrpg1QX","period":"202407","orgUnit":"DiszpKrYNg8",)"
            R"("dataValues":[]})");
}

TEST(Json243DataValueEncoderTest, WritesHeaderThenIdSchemes) {
  DataValueGroupHeader header = FullGroupHeader();
  header.id_schemes = {{"dataElementIdScheme", "NAME"},
                       {"orgUnitIdScheme", "ATTRIBUTE:kY2Ujgq3WXS"}};
  EXPECT_EQ(EncodeDocument(header, {}),
            R"({"dataSet":"pBOMPrpg1QX","period":"202407","orgUnit":"DiszpKrYNg8",)"
            R"("attributeOptionCombo":"HllvX50cXC0","dataElementIdScheme":"NAME",)"
            R"("orgUnitIdScheme":"ATTRIBUTE:kY2Ujgq3WXS","dataValues":[]})");
}

TEST(Json243DataValueEncoderTest, TreatsNullHeaderMembersAsAbsent) {
  DataValueGroupHeader header;
  header.data_set = kNullText;
  header.period = kNullText;
  header.org_unit = kNullText;
  header.attribute_option_combo = kNullText;
  EXPECT_EQ(EncodeDocument(header, {ExampleRow()}), Document(kExampleValue));
}

// Each subset of the header's members {dataSet, period, orgUnit, attributeOptionCombo}: the
// header has exactly those, in order, and the values have exactly the others.
class Json243HeaderCombinationTest : public testing::TestWithParam<int> {};

TEST_P(Json243HeaderCombinationTest, WritesEachMemberEitherAtTheTopOrInTheValues) {
  const int mask = GetParam();
  const DataValueGroupHeader full = FullGroupHeader();
  DataValueGroupHeader header;
  std::string top = "{";
  std::string value = R"({"dataElement":"fbfJHSPpUQD")";
  if (mask & 1) {
    header.data_set = full.data_set;
    top += R"("dataSet":"pBOMPrpg1QX",)";
  }
  if (mask & 2) {
    header.period = full.period;
    header.period_adx = full.period_adx;
    top += R"("period":"202407",)";
  } else {
    value += R"(,"period":"202401")";
  }
  if (mask & 4) {
    header.org_unit = T("OrgUnitUid7");
    top += R"("orgUnit":"OrgUnitUid7",)";
  } else {
    value += R"(,"orgUnit":"DiszpKrYNg8")";
  }
  value += R"(,"categoryOptionCombo":"PT59n8BQbqM")";
  if (mask & 8) {
    header.attribute_option_combo = T("Aoc45678901");
    top += R"("attributeOptionCombo":"Aoc45678901",)";
  } else {
    value += R"(,"attributeOptionCombo":"HllvX50cXC0")";
  }
  value += R"(,"value":"12","storedBy":"admin","created":"2024-01-05T10:11:12.123+0000",)"
           R"("lastUpdated":"2024-01-05T10:11:12.123+0000","followup":false})";
  const std::string expected = top + R"("dataValues":[)" + value + "]}";
  EXPECT_EQ(EncodeDocument(header, {ExampleRow()}), expected);
  EXPECT_EQ(EncodeByParts243<Json243DataValueEncoder>(header, {ExampleRow()}), expected);
  EXPECT_TRUE(ParseJsonStrictly(expected).ok());
}

INSTANTIATE_TEST_SUITE_P(AllSubsets, Json243HeaderCombinationTest, testing::Range(0, 16));

TEST(Json243DataValueEncoderTest, WritesTheSameDocumentByParts) {
  DataValueRow other = ExampleRow();
  other.followup_null = true;
  other.comment = T("c");
  const std::vector<DataValueRow> rows = {ExampleRow(), other, ExampleRow()};
  for (const DataValueGroupHeader& header : {DataValueGroupHeader{}, FullGroupHeader()}) {
    EXPECT_EQ(EncodeByParts243<Json243DataValueEncoder>(header, rows),
              EncodeDocument(header, rows));
    EXPECT_EQ(EncodeByParts243<Json243DataValueEncoder>(header, {}), EncodeDocument(header, {}));
  }
}

TEST(Json243DataValueEncoderTest, WritesEveryMemberUntilUseHeader) {
  ChunkBuffer buffer(0);
  Json243DataValueEncoder encoder(&buffer);
  encoder.Add(ExampleRow());
  EXPECT_EQ(buffer.view(), kExampleValue);
}

TEST(Json243DataValueEncoderTest, StartsAFreshDocumentAfterEnd) {
  ChunkBuffer buffer(16);
  Json243DataValueEncoder encoder(&buffer);
  encoder.Begin(FullGroupHeader());
  encoder.Add(ExampleRow());
  encoder.End();
  buffer.Clear();
  encoder.Begin({});
  encoder.Add(ExampleRow());
  encoder.End();
  EXPECT_EQ(buffer.view(), Document(kExampleValue));
}

TEST(PrettyJson243DataValueEncoderTest, IndentsTheSameDocument) {
  DataValueGroupHeader header = FullGroupHeader();
  header.data_set.reset();
  header.attribute_option_combo.reset();
  header.id_schemes = {{"dataElementIdScheme", "CODE"}};
  DataValueRow row = ExampleRow();
  row.followup_null = true;
  row.deleted = true;
  const std::string document = Encode243<PrettyJson243DataValueEncoder>(header, {row, row});
  const std::string value =
      "\n    {\n      \"dataElement\": \"fbfJHSPpUQD\","
      "\n      \"categoryOptionCombo\": \"PT59n8BQbqM\","
      "\n      \"attributeOptionCombo\": \"HllvX50cXC0\","
      "\n      \"value\": \"12\","
      "\n      \"storedBy\": \"admin\","
      "\n      \"created\": \"2024-01-05T10:11:12.123+0000\","
      "\n      \"lastUpdated\": \"2024-01-05T10:11:12.123+0000\","
      "\n      \"deleted\": true"
      "\n    }";
  EXPECT_EQ(document,
            "{\n  \"period\": \"202407\",\n  \"orgUnit\": \"DiszpKrYNg8\","
            "\n  \"dataElementIdScheme\": \"CODE\",\n  \"dataValues\": [" +
                value + "," + value + "\n  ]\n}\n");
  absl::StatusOr<test_support::JsonValue> pretty = ParseJsonStrictly(document);
  ASSERT_TRUE(pretty.ok()) << pretty.status();
  EXPECT_EQ(pretty->members.size(), 4u);
  EXPECT_EQ(EncodeByParts243<PrettyJson243DataValueEncoder>(header, {row, row}), document);
}

TEST(PrettyJson243DataValueEncoderTest, WritesEmptyDocument) {
  EXPECT_EQ(Encode243<PrettyJson243DataValueEncoder>({}, {}), "{\n  \"dataValues\": []\n}\n");
}

}  // namespace
}  // namespace dvexport::encode
