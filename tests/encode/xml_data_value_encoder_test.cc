#include "service/encode/xml_data_value_encoder.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "service/encode/xml_attribute.h"
#include "tests/encode/data_value_encoder_testing.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport::encode {
namespace {

using dvexport::test_support::ParseXmlStrictly;

constexpr std::string_view kStart =
    R"(<?xml version='1.0' encoding='UTF-8'?><dataValueSet xmlns="http://dhis2.org/schema/dxf/2.0")";

constexpr std::string_view kExampleValue =
    R"(<dataValue dataElement="fbfJHSPpUQD" period="202401" orgUnit="DiszpKrYNg8" )"
    R"(categoryOptionCombo="PT59n8BQbqM" attributeOptionCombo="HllvX50cXC0" value="12" )"
    R"(storedBy="admin" created="2024-01-05T10:11:12.123+0000" )"
    R"(lastUpdated="2024-01-05T10:11:12.123+0000" followUp="false"/>)";

std::string EncodeDocument(const DataValueSetHeader* header, const std::vector<DataValueRow>& rows,
                           size_t initial_capacity = 1024) {
  return Encode<XmlDataValueEncoder>(header, rows, initial_capacity);
}

// The comment attribute's raw bytes as the encoder writes "bytes".
std::string EncodedAttribute(std::string_view bytes) {
  std::string out(kMaxXmlEscapedBytesPerInputByte * bytes.size(), '\0');
  char* end = WriteXmlAttributeEscaped(out.data(), bytes);
  out.resize(static_cast<size_t>(end - out.data()));
  return out;
}

TEST(XmlDataValueEncoderTest, WritesEmptyDocumentAsEmptyRootElement) {
  const std::string document = EncodeDocument(nullptr, {});
  EXPECT_EQ(document, std::string(kStart) + "/>");
  auto parsed = ParseXmlStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->version, "1.0");
  EXPECT_EQ(parsed->encoding, "UTF-8");
  EXPECT_EQ(parsed->root.name, "http://dhis2.org/schema/dxf/2.0|dataValueSet");
  EXPECT_TRUE(parsed->root.children.empty());
}

TEST(XmlDataValueEncoderTest, WritesValueWithDhis2AttributesInDhis2Order) {
  EXPECT_EQ(EncodeDocument(nullptr, {ExampleRow()}),
            std::string(kStart) + ">" + std::string(kExampleValue) + "</dataValueSet>");
}

TEST(XmlDataValueEncoderTest, WritesValuesOneAfterTheOther) {
  const std::string value(kExampleValue);
  const std::string document = EncodeDocument(nullptr, {ExampleRow(), ExampleRow(), ExampleRow()});
  EXPECT_EQ(document, std::string(kStart) + ">" + value + value + value + "</dataValueSet>");
  auto parsed = ParseXmlStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->root.children.size(), 3u);
  EXPECT_EQ(parsed->root.children[2].name, "http://dhis2.org/schema/dxf/2.0|dataValue");
}

TEST(XmlDataValueEncoderTest, OmitsNullTextFields) {
  DataValueRow row;
  row.data_element = row.period = row.org_unit = kNullText;
  row.category_option_combo = row.attribute_option_combo = kNullText;
  row.value = row.stored_by = row.comment = kNullText;
  row.stored_by.bytes = "ignored";
  EXPECT_EQ(EncodeDocument(nullptr, {row}),
            std::string(kStart) +
                R"(><dataValue created="1970-01-01T00:00:00.000+0000" )"
                R"(lastUpdated="1970-01-01T00:00:00.000+0000" followUp="false"/></dataValueSet>)");
}

TEST(XmlDataValueEncoderTest, WritesEmptyStringsAsEmptyAttributes) {
  DataValueRow row = ExampleRow();
  row.value = T("");
  row.comment = T("");
  const std::string document = EncodeDocument(nullptr, {row});
  EXPECT_NE(document.find(R"( value="" storedBy="admin")"), std::string::npos) << document;
  EXPECT_NE(document.find(R"( comment="" followUp="false"/>)"), std::string::npos) << document;
}

TEST(XmlDataValueEncoderTest, WritesFollowUpAndDeletedAsDhis2Does) {
  DataValueRow row = ExampleRow();
  row.followup = true;
  row.deleted = true;
  row.comment = T("c");
  const std::string document = EncodeDocument(nullptr, {row});
  EXPECT_NE(document.find(R"( comment="c" followUp="true" deleted="true"/></dataValueSet>)"),
            std::string::npos)
      << document;
}

TEST(XmlDataValueEncoderTest, WritesHeaderAttributesOnTheRoot) {
  DataValueSetHeader header{T("pBOMPrpg1QX"), 1704449472123000, T("202401"), T("DiszpKrYNg8")};
  EXPECT_EQ(EncodeDocument(&header, {}),
            std::string(kStart) +
                R"( dataSet="pBOMPrpg1QX" completeDate="2024-01-05T10:11:12.123+0000" )"
                R"(period="202401" orgUnit="DiszpKrYNg8"/>)");
  header.complete_date_micros.reset();
  header.data_set = kNullText;
  header.org_unit = kNullText;
  EXPECT_EQ(EncodeDocument(&header, {ExampleRow()}), std::string(kStart) + R"( period="202401">)" +
                                                         std::string(kExampleValue) +
                                                         "</dataValueSet>");
}

TEST(XmlDataValueEncoderTest, EscapesAsWoodstoxDoes) {
  EXPECT_EQ(EncodedAttribute("a&b<c>d\"e'f"), "a&amp;b&lt;c>d&quot;e'f");
  EXPECT_EQ(EncodedAttribute("\t\n\r"), "&#x9;&#xa;&#xd;");
  EXPECT_EQ(EncodedAttribute("\x7F"), "\x7F");
  EXPECT_EQ(EncodedAttribute("\xC3\xA9\xE2\x80\xA8\xF0\x9F\x98\x80"),
            "\xC3\xA9\xE2\x80\xA8\xF0\x9F\x98\x80");  // é, U+2028, U+1F600 raw
  EXPECT_EQ(EncodedAttribute("]]>"), "]]>");
}

TEST(XmlDataValueEncoderTest, ReplacesWhatXml10CannotCarryWithReplacementCharacter) {
  EXPECT_EQ(EncodedAttribute(std::string_view("a\0b", 3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(EncodedAttribute("\x01\x08\x0B\x0C\x1F"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(EncodedAttribute("\xEF\xBF\xBE\xEF\xBF\xBF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(EncodedAttribute("\xEF\xBF\xBD"), "\xEF\xBF\xBD");  // U+FFFD itself is kept
  EXPECT_EQ(EncodedAttribute("\xEF\xBF\xBC"), "\xEF\xBF\xBC");  // U+FFFC is a character
  EXPECT_EQ(EncodedAttribute("x\xC3"), "x\xEF\xBF\xBD");
  EXPECT_EQ(EncodedAttribute("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(XmlDataValueEncoderTest, EscapesLongValuesAcrossVectorBoundaries) {
  std::string input(100, 'x');
  input[17] = '&';
  input[40] = '\x02';
  input[99] = '"';
  std::string expected(100, 'x');
  expected.replace(99, 1, "&quot;");
  expected.replace(40, 1, "\xEF\xBF\xBD");
  expected.replace(17, 1, "&amp;");
  EXPECT_EQ(EncodedAttribute(input), expected);
}

TEST(XmlDataValueEncoderTest, DocumentWithHostileTextParsesBackToTheRepairedText) {
  DataValueRow row = ExampleRow();
  const std::string hostile = std::string("<&\"'>\t\n\r \x01\x1F") + "\xEF\xBF\xBF\xFF" + "]]>";
  row.comment = T(hostile);
  row.value = T("\xF0\x9F\x98\x80");
  const std::string document = EncodeDocument(nullptr, {row});
  auto parsed = ParseXmlStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << document;
  ASSERT_EQ(parsed->root.children.size(), 1u);
  const auto& value = parsed->root.children[0];
  ASSERT_NE(value.Attribute("comment"), nullptr);
  EXPECT_EQ(*value.Attribute("comment"),
            "<&\"'>\t\n\r \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD]]>");
  EXPECT_EQ(*value.Attribute("value"), "\xF0\x9F\x98\x80");
}

TEST(XmlDataValueEncoderTest, ReservesTheWorstCaseOnceAndNeverOverruns) {
  // Every text byte a '"' (6 output bytes): the reservation must hold it exactly.
  DataValueRow row = ExampleRow();
  const std::string quotes(1000, '"');
  row.data_element = row.period = row.org_unit = row.category_option_combo = T(quotes);
  row.attribute_option_combo = row.value = row.stored_by = row.comment = T(quotes);
  const std::string document = EncodeDocument(nullptr, {row}, 0);
  auto parsed = ParseXmlStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed->root.children[0].Attribute("comment"), quotes);
}

TEST(XmlDataValueEncoderTest, SeveralEncodersWriteOneDocument) {
  // As the server does: one encoder writes the frame, others the values.
  ChunkBuffer frame_buffer(64);
  XmlDataValueEncoder frame(&frame_buffer);
  frame.Begin(nullptr);
  std::string document(frame_buffer.view());
  for (int reader = 0; reader < 2; ++reader) {
    ChunkBuffer buffer(64);
    XmlDataValueEncoder encoder(&buffer);
    encoder.SetValuesWritten(true);
    encoder.Add(ExampleRow());
    document += buffer.view();
  }
  frame_buffer.Clear();
  frame.SetValuesWritten(true);
  frame.End();
  document += frame_buffer.view();
  EXPECT_EQ(document, EncodeDocument(nullptr, {ExampleRow(), ExampleRow()}));
}

}  // namespace
}  // namespace dvexport::encode
