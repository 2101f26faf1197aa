// DHIS2 2.43's JSON string escaping (json-tree 1.8.1 JsonAppender.appendEscaped, DHIS2 2.43
// reference §7.1.3), through Json243DataValueEncoder.

#include "service/encode/json_243_string.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "service/encode/json_243_data_value_encoder.h"
#include "tests/encode/data_value_encoder_243_testing.h"
#include "tests/encode/strict_json_parser.h"

namespace dvexport::encode {
namespace {

using test_support::JsonValue;
using test_support::ParseJsonStrictly;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

std::string EncodeDocument(const DataValueGroupHeader& header,
                           const std::vector<DataValueRow>& rows, size_t initial_capacity = 1024) {
  return Encode243<Json243DataValueEncoder>(header, rows, initial_capacity);
}

// The JSON token the encoder writes for "bytes" (as the comment, the last string member).
std::string EncodedString(std::string_view bytes) {
  DataValueRow row = ExampleRow();
  row.comment = T(bytes);
  const std::string document = EncodeDocument({}, {row});
  const size_t begin = document.find("\"comment\":") + 10;
  const size_t end = document.rfind(",\"followup\":");
  return document.substr(begin, end - begin);
}

// The one value's comment after a strict parse of the document that carries "comment".
std::string ParsedBack(std::string_view comment) {
  DataValueRow row = ExampleRow();
  row.comment = T(comment);
  const std::string document = EncodeDocument({}, {row});
  absl::StatusOr<JsonValue> parsed = ParseJsonStrictly(document);
  if (!parsed.ok()) return "parse error: " + std::string(parsed.status().message());
  const JsonValue& value = parsed->members[0].second.elements[0];
  return value.members[9].first == "comment" ? value.members[9].second.text : "no comment";
}

TEST(Json243StringTest, EscapesJsonTreesFiveControlsQuoteAndBackslash) {
  EXPECT_EQ(EncodedString("\b"), R"("\b")");
  EXPECT_EQ(EncodedString("\f"), R"("\f")");
  EXPECT_EQ(EncodedString("\n"), R"("\n")");
  EXPECT_EQ(EncodedString("\r"), R"("\r")");
  EXPECT_EQ(EncodedString("\t"), R"("\t")");
  EXPECT_EQ(EncodedString("\""), R"("\"")");
  EXPECT_EQ(EncodedString("\\"), R"("\\")");
  EXPECT_EQ(EncodedString("a\"b\\c"), R"("a\"b\\c")");
}

TEST(Json243StringTest, EscapesOtherControlsAsUpperCaseUnicodeEscapesUnlike243) {
  // Deviation: 2.43 writes these raw, which no strict parser accepts (reference §7.1.3).
  EXPECT_EQ(EncodedString(std::string_view("\0", 1)), R"("\u0000")");
  EXPECT_EQ(EncodedString("\x01"), R"("\u0001")");
  EXPECT_EQ(EncodedString("\x0B"), R"("\u000B")");
  EXPECT_EQ(EncodedString("\x1B[0m"), R"("\u001B[0m")");
  EXPECT_EQ(EncodedString("\x1F"), R"("\u001F")");
}

TEST(Json243StringTest, EscapesEveryAsciiByteExactlyAsSpecified) {
  for (int c = 0; c < 0x80; ++c) {
    const std::string input(1, static_cast<char>(c));
    std::string expected;
    switch (c) {
      case '\b':
        expected = "\\b";
        break;
      case '\f':
        expected = "\\f";
        break;
      case '\n':
        expected = "\\n";
        break;
      case '\r':
        expected = "\\r";
        break;
      case '\t':
        expected = "\\t";
        break;
      case '"':
        expected = "\\\"";
        break;
      case '\\':
        expected = "\\\\";
        break;
      default: {
        if (c < 0x20) {
          constexpr char kHex[] = "0123456789ABCDEF";
          expected = std::string("\\u00") + kHex[c >> 4] + kHex[c & 15];
        } else {
          expected = input;
        }
      }
    }
    EXPECT_EQ(EncodedString(input), "\"" + expected + "\"") << "byte " << c;
    EXPECT_EQ(ParsedBack(input), input) << "byte " << c;
  }
}

TEST(Json243StringTest, WritesSlashAndDeleteRaw) {
  EXPECT_EQ(EncodedString("a/b\x7F"), "\"a/b\x7F\"");
}

TEST(Json243StringTest, EscapesLineAndParagraphSeparators) {
  // JsonAppender: case 0x2028 -> "\\u2028"; case 0x2029 -> "\\u2029" (2.42's Jackson wrote raw).
  EXPECT_EQ(EncodedString("\xE2\x80\xA8"), R"("\u2028")");
  EXPECT_EQ(EncodedString("\xE2\x80\xA9"), R"("\u2029")");
  EXPECT_EQ(EncodedString("a\xE2\x80\xA8z\xE2\x80\xA9"), R"("a\u2028z\u2029")");
  EXPECT_EQ(ParsedBack("a\xE2\x80\xA8z\xE2\x80\xA9"), "a\xE2\x80\xA8z\xE2\x80\xA9");
  // Their neighbours stay raw.
  EXPECT_EQ(EncodedString("\xE2\x80\xA7\xE2\x80\xAA"), "\"\xE2\x80\xA7\xE2\x80\xAA\"");
}

TEST(Json243StringTest, WritesTwoThreeAndFourByteUtf8Raw) {
  EXPECT_EQ(EncodedString("\xC3\xA9"), "\"\xC3\xA9\"");          // é
  EXPECT_EQ(EncodedString("\xE4\xB8\xAD"), "\"\xE4\xB8\xAD\"");  // 中
  // Reference §7.1.3, verified on OpenJDK 17: A😀B is 41 f0 9f 98 80 42 (2.42: \uD83D\uDE00).
  EXPECT_EQ(EncodedString("A\xF0\x9F\x98\x80"
                          "B"),
            "\"A\xF0\x9F\x98\x80"
            "B\"");
  EXPECT_EQ(EncodedString("\xF4\x8F\xBF\xBF"), "\"\xF4\x8F\xBF\xBF\"");  // U+10FFFF
  EXPECT_EQ(ParsedBack("A\xF0\x9F\x98\x80"
                       "B"),
            "A\xF0\x9F\x98\x80"
            "B");
}

TEST(Json243StringTest, ReplacesEachIllFormedSubpartWithReplacementCharacter) {
  const std::string r(kReplacement);
  EXPECT_EQ(EncodedString("\xC3"), "\"" + r + "\"");
  EXPECT_EQ(EncodedString("\xC0\xAF"), "\"" + r + r + "\"");
  EXPECT_EQ(EncodedString("\xED\xA0\x80"), "\"" + r + r + r + "\"");
  EXPECT_EQ(EncodedString("\xE2\x80"), "\"" + r + "\"");  // a cut U+2028
  EXPECT_EQ(EncodedString("\xE2\x80\x41"), "\"" + r + "A\"");
  EXPECT_EQ(EncodedString("\xF0\x9F\x98"), "\"" + r + "\"");
  EXPECT_EQ(EncodedString("\xFF"), "\"" + r + "\"");
}

TEST(Json243StringTest, EscapesInsideLongRunsOfPlainText) {
  const std::string run(37, 'x');
  EXPECT_EQ(EncodedString(run + "\n" + run + "\xE2\x80\xA8" + run + "\x01"),
            "\"" + run + "\\n" + run + "\\u2028" + run + "\\u0001\"");
  EXPECT_EQ(EncodedString(run + "\xF0\x9F\x98\x80" + run),
            "\"" + run + "\xF0\x9F\x98\x80" + run + "\"");
}

TEST(Json243StringTest, EscapesEveryStringOfValueAndHeader) {
  DataValueGroupHeader header;
  header.data_set = T("d\"s");
  header.period = T("p\n");
  header.org_unit = T("o\\u");
  header.attribute_option_combo = T("a\xE2\x80\xA8");
  header.id_schemes = {{"orgUnitIdScheme", "ATTRIBUTE:\t"}};
  DataValueRow row;
  row.data_element = T("\x01");
  row.category_option_combo = T("\x02");
  row.value = T("\x03");
  row.stored_by = T("\x04");
  row.comment = T("\x05");
  EXPECT_EQ(
      EncodeDocument(header, {row}),
      R"({"dataSet":"d\"s","period":"p\n","orgUnit":"o\\u","attributeOptionCombo":"a\u2028",)"
      R"("orgUnitIdScheme":"ATTRIBUTE:\t","dataValues":[{"dataElement":"\u0001",)"
      R"("categoryOptionCombo":"\u0002","value":"\u0003","storedBy":"\u0004",)"
      R"("created":"1970-01-01T00:00:00.000+0000",)"
      R"("lastUpdated":"1970-01-01T00:00:00.000+0000","comment":"\u0005","followup":false}]})");
}

TEST(Json243StringTest, CopiesPlainTextAsItIs) {
  DataValueRow row = ExampleRow();
  row.data_element.plain = true;
  row.org_unit.plain = true;
  DataValueGroupHeader plain_header;
  plain_header.data_set = Text{"pBOMPrpg1QX", false, true};
  DataValueGroupHeader header;
  header.data_set = T("pBOMPrpg1QX");
  EXPECT_EQ(EncodeDocument(plain_header, {row}), EncodeDocument(header, {ExampleRow()}));
}

TEST(Json243StringTest, WorstCaseRowsFitAfterGrowingFromTinyBuffer) {
  // Every text field all controls (6 bytes each): the reservation must cover them.
  const std::string controls(300, '\x01');
  DataValueRow row;
  row.data_element = row.period = row.org_unit = T(controls);
  row.category_option_combo = row.attribute_option_combo = T(controls);
  row.value = row.stored_by = row.comment = T(controls);
  row.created.micros = row.last_updated.micros = std::numeric_limits<int64_t>::min();
  row.followup = true;
  row.deleted = true;
  DataValueGroupHeader header;
  header.data_set = header.org_unit = header.attribute_option_combo = T(controls);
  header.id_schemes = {{"categoryIdScheme", controls}};
  const std::string small = EncodeDocument(header, {row, row}, /*initial_capacity=*/1);
  EXPECT_EQ(small, EncodeDocument(header, {row, row}, /*initial_capacity=*/1 << 20));
  absl::StatusOr<JsonValue> parsed = ParseJsonStrictly(small);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->members[0].second.text, controls);
}

TEST(Json243StringTest, StrictParserAcceptsEveryByteSequenceEncoded) {
  // Every byte value, in runs and mixed, as every text field: the document is always valid JSON.
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  DataValueRow row;
  row.data_element = row.period = row.org_unit = T(all);
  row.category_option_combo = row.attribute_option_combo = T(all);
  const std::string longer = all + all.substr(0, 100);
  row.value = row.stored_by = row.comment = T(longer);
  DataValueGroupHeader header = FullGroupHeader();
  header.data_set = T(all);
  const std::string document = EncodeDocument(header, {row, row});
  absl::StatusOr<JsonValue> parsed = ParseJsonStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(
      parsed->members[0].second.text, all.substr(0, 0x80) + [] {
        std::string replaced;
        for (int c = 0x80; c < 0x100; ++c) replaced += kReplacement;
        return replaced;
      }());
}

TEST(Json243StringTest, WritesAtMostTheDocumentedBytesPerInputByte) {
  for (const std::string_view input :
       {std::string_view("\x01"), std::string_view("\xE2\x80\xA8"), std::string_view("\xFF"),
        std::string_view("\""), std::string_view("\xF0\x9F\x98\x80")}) {
    char out[64];
    const char* end = WriteJson243Escaped(out, input);
    EXPECT_LE(static_cast<size_t>(end - out), kMaxJson243EscapedBytesPerInputByte * input.size());
  }
}

}  // namespace
}  // namespace dvexport::encode
