#include "service/encode/json_data_value_encoder.h"

#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/encode/data_value_encoder_testing.h"
#include "tests/encode/strict_json_parser.h"

namespace dvexport::encode {
namespace {

constexpr std::string_view kExampleValue =
    R"({"dataElement":"fbfJHSPpUQD","period":"202401","orgUnit":"DiszpKrYNg8",)"
    R"("categoryOptionCombo":"PT59n8BQbqM","attributeOptionCombo":"HllvX50cXC0","value":"12",)"
    R"("storedBy":"admin","created":"2024-01-05T10:11:12.123+0000",)"
    R"("lastUpdated":"2024-01-05T10:11:12.123+0000","comment":null,"followup":false})";

std::string EncodeDocument(const DataValueSetHeader* header, const std::vector<DataValueRow>& rows,
                           size_t initial_capacity = 1024) {
  return Encode<JsonDataValueEncoder>(header, rows, initial_capacity);
}

// The JSON token the encoder writes for "bytes" (used as the comment, the last string field).
std::string EncodedString(std::string_view bytes) {
  DataValueRow row = ExampleRow();
  row.comment = T(bytes);
  const std::string document = EncodeDocument(nullptr, {row});
  const size_t begin = document.find("\"comment\":") + 10;
  const size_t end = document.rfind(",\"followup\":");
  return document.substr(begin, end - begin);
}

TEST(JsonDataValueEncoderTest, WritesEmptyDocument) {
  EXPECT_EQ(EncodeDocument(nullptr, {}), R"({"dataValues":[]})");
}

TEST(JsonDataValueEncoderTest, WritesValueWithDhis2KeysInDhis2Order) {
  EXPECT_EQ(EncodeDocument(nullptr, {ExampleRow()}),
            std::string(R"({"dataValues":[)") + std::string(kExampleValue) + "]}");
}

TEST(JsonDataValueEncoderTest, SeparatesValuesWithCommas) {
  const std::string value(kExampleValue);
  EXPECT_EQ(EncodeDocument(nullptr, {ExampleRow(), ExampleRow(), ExampleRow()}),
            R"({"dataValues":[)" + value + "," + value + "," + value + "]}");
}

TEST(JsonDataValueEncoderTest, WritesNullTextFieldsAsNull) {
  DataValueRow row;
  row.data_element = row.period = row.org_unit = kNullText;
  row.category_option_combo = row.attribute_option_combo = kNullText;
  row.value = row.stored_by = row.comment = kNullText;
  row.stored_by.bytes = "ignored";
  EXPECT_EQ(EncodeDocument(nullptr, {row}),
            R"({"dataValues":[{"dataElement":null,"period":null,"orgUnit":null,)"
            R"("categoryOptionCombo":null,"attributeOptionCombo":null,"value":null,)"
            R"("storedBy":null,"created":"1970-01-01T00:00:00.000+0000",)"
            R"("lastUpdated":"1970-01-01T00:00:00.000+0000","comment":null,"followup":false}]})");
}

TEST(JsonDataValueEncoderTest, WritesEmptyStringsAsEmptyStringsNotNull) {
  DataValueRow row = ExampleRow();
  row.value = T("");
  row.comment = T("");
  const std::string document = EncodeDocument(nullptr, {row});
  EXPECT_NE(document.find(R"("value":"",)"), std::string::npos) << document;
  EXPECT_NE(document.find(R"("comment":"",)"), std::string::npos) << document;
}

TEST(JsonDataValueEncoderTest, WritesDeletedKeyOnlyWhenDeleted) {
  DataValueRow deleted = ExampleRow();
  deleted.deleted = true;
  const std::string document = EncodeDocument(nullptr, {ExampleRow(), deleted});
  const std::string value(kExampleValue);
  EXPECT_EQ(document, R"({"dataValues":[)" + value + "," + value.substr(0, value.size() - 1) +
                          R"(,"deleted":true}]})");
}

TEST(JsonDataValueEncoderTest, WritesFollowupAsBooleanLiteral) {
  DataValueRow row = ExampleRow();
  row.followup = true;
  row.deleted = true;
  const std::string document = EncodeDocument(nullptr, {row});
  EXPECT_NE(document.find(R"("comment":null,"followup":true,"deleted":true}]})"), std::string::npos)
      << document;
}

TEST(JsonDataValueEncoderTest, WritesSingleDataValueSetHeaderWithCompleteDate) {
  DataValueSetHeader header{T("lyLU2wR22tC"), 1704449472123456, T("202401"), T("DiszpKrYNg8")};
  EXPECT_EQ(EncodeDocument(&header, {ExampleRow()}),
            R"({"dataSet":"lyLU2wR22tC","completeDate":"2024-01-05T10:11:12.123+0000",)"
            R"("period":"202401","orgUnit":"DiszpKrYNg8","dataValues":[)" +
                std::string(kExampleValue) + "]}");
}

TEST(JsonDataValueEncoderTest, WritesNullCompleteDateWhenNotRegistered) {
  DataValueSetHeader header{T("lyLU2wR22tC"), std::nullopt, T("202401"), T("Disz\"pKr")};
  EXPECT_EQ(EncodeDocument(&header, {}),
            R"({"dataSet":"lyLU2wR22tC","completeDate":null,"period":"202401",)"
            R"("orgUnit":"Disz\"pKr","dataValues":[]})");
}

TEST(JsonDataValueEncoderTest, EscapesEveryControlByteExactlyLikeJackson) {
  static constexpr std::string_view kJackson[32] = {
      R"(\u0000)", R"(\u0001)", R"(\u0002)", R"(\u0003)", R"(\u0004)", R"(\u0005)", R"(\u0006)",
      R"(\u0007)", R"(\b)",     R"(\t)",     R"(\n)",     R"(\u000B)", R"(\f)",     R"(\r)",
      R"(\u000E)", R"(\u000F)", R"(\u0010)", R"(\u0011)", R"(\u0012)", R"(\u0013)", R"(\u0014)",
      R"(\u0015)", R"(\u0016)", R"(\u0017)", R"(\u0018)", R"(\u0019)", R"(\u001A)", R"(\u001B)",
      R"(\u001C)", R"(\u001D)", R"(\u001E)", R"(\u001F)"};
  for (int c = 0; c < 32; ++c) {
    const std::string input(1, static_cast<char>(c));
    const std::string escape(kJackson[c]);
    EXPECT_EQ(EncodedString(input), std::string("\"").append(escape).append("\"")) << "byte " << c;
    EXPECT_EQ(EncodedString("ab" + input + "cd"), std::string("\"ab").append(escape).append("cd\""))
        << "byte " << c;
  }
}

TEST(JsonDataValueEncoderTest, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(EncodedString(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(EncodedString(R"(C:\dir\)"), R"("C:\\dir\\")");
  EXPECT_EQ(EncodedString(R"(\")"), R"("\\\"")");
}

TEST(JsonDataValueEncoderTest, WritesSlashAndDeleteRaw) {
  EXPECT_EQ(EncodedString("a/b</script>\x7F"), "\"a/b</script>\x7F\"");
}

TEST(JsonDataValueEncoderTest, WritesTwoAndThreeByteUtf8Raw) {
  // é, Lao ກ, €, U+2028, U+2029, U+FEFF, U+FFFD, U+FFFF, U+0080, U+07FF, U+0800.
  const std::string text =
      "\xC3\xA9\xE0\xBA\x81\xE2\x82\xAC\xE2\x80\xA8\xE2\x80\xA9\xEF\xBB\xBF\xEF\xBF\xBD\xEF\xBF"
      "\xBF\xC2\x80\xDF\xBF\xE0\xA0\x80";
  EXPECT_EQ(EncodedString(text), "\"" + text + "\"");
}

TEST(JsonDataValueEncoderTest, EscapesCharactersBeyondBmpAsUpperCaseSurrogatePairs) {
  EXPECT_EQ(EncodedString("\xF0\x90\x80\x80"), R"("\uD800\uDC00")");  // U+10000
  EXPECT_EQ(EncodedString("\xF0\x9F\x98\x80"), R"("\uD83D\uDE00")");  // U+1F600
  EXPECT_EQ(EncodedString("\xF0\x9D\x84\x9E"), R"("\uD834\uDD1E")");  // U+1D11E
  EXPECT_EQ(EncodedString("\xF0\xAF\xBF\xBF"), R"("\uD87F\uDFFF")");  // U+2FFFF
  EXPECT_EQ(EncodedString("\xF4\x8F\xBF\xBF"), R"("\uDBFF\uDFFF")");  // U+10FFFF
  EXPECT_EQ(EncodedString("x\xF0\x9F\x98\x80y\xF0\x9F\x98\x81"), R"("x\uD83D\uDE00y\uD83D\uDE01")");
}

struct IllFormedCase {
  const char* name;
  std::string_view input;
  std::string_view expected;  // The JSON token.
};

void PrintTo(const IllFormedCase& c, std::ostream* os) { *os << c.name; }

class JsonIllFormedUtf8Test : public ::testing::TestWithParam<IllFormedCase> {};

TEST_P(JsonIllFormedUtf8Test, ReplacesEachMaximalSubpartWithReplacementCharacter) {
  const std::string token = EncodedString(GetParam().input);
  EXPECT_EQ(token, GetParam().expected);
  EXPECT_TRUE(test_support::ParseJsonStrictly(token).ok()) << token;
}

#define R3 "\xEF\xBF\xBD"
INSTANTIATE_TEST_SUITE_P(
    Cases, JsonIllFormedUtf8Test,
    ::testing::Values(IllFormedCase{"LoneContinuation", "a\x80z", "\"a" R3 "z\""},
                      IllFormedCase{"TwoContinuations", "\x80\xBF", "\"" R3 R3 "\""},
                      IllFormedCase{"OverlongTwoByteNul", "\xC0\x80", "\"" R3 R3 "\""},
                      IllFormedCase{"OverlongTwoByteC1", "\xC1\xBF", "\"" R3 R3 "\""},
                      IllFormedCase{"OverlongThreeByte", "\xE0\x80\x80", "\"" R3 R3 R3 "\""},
                      IllFormedCase{"OverlongFourByte", "\xF0\x80\x80\x80", "\"" R3 R3 R3 R3 "\""},
                      IllFormedCase{"EncodedHighSurrogate", "\xED\xA0\x80", "\"" R3 R3 R3 "\""},
                      IllFormedCase{"EncodedLowSurrogate", "\xED\xBF\xBF", "\"" R3 R3 R3 "\""},
                      IllFormedCase{"AboveMaximumCodePoint", "\xF4\x90\x80\x80",
                                    "\"" R3 R3 R3 R3 "\""},
                      IllFormedCase{"ByteF5", "\xF5\x80", "\"" R3 R3 "\""},
                      IllFormedCase{"ByteFF", "\xFF", "\"" R3 "\""},
                      IllFormedCase{"TruncatedAtEnd", "ab\xE2\x82", "\"ab" R3 "\""},
                      IllFormedCase{"TruncatedFourByteAtEnd", "\xF0\x9F\x98", "\"" R3 "\""},
                      IllFormedCase{"TruncatedBeforeAscii",
                                    "\xE2\x82"
                                    "A",
                                    "\"" R3 "A\""},
                      IllFormedCase{"TruncatedBeforeQuote", "\xC3\"", "\"" R3 "\\\"\""},
                      IllFormedCase{"TruncatedBeforeControl", "\xF0\x9F\x01", "\"" R3 "\\u0001\""},
                      IllFormedCase{"LeadFollowedByLead", "\xC3\xC3\xA9", "\"" R3 "\xC3\xA9\""},
                      // The example of Unicode Standard Table 3-8.
                      IllFormedCase{"UnicodeTable3_8",
                                    "a\xF1\x80\x80\xE1\x80\xC2"
                                    "b\x80"
                                    "c\x80\xBF"
                                    "d",
                                    "\"a" R3 R3 R3 "b" R3 "c" R3 R3 "d\""}),
    [](const ::testing::TestParamInfo<IllFormedCase>& info) { return info.param.name; });
#undef R3

TEST(JsonDataValueEncoderTest, EscapesInsideLongRunsOfPlainText) {
  // Offenders at every position relative to the 8-byte blocks of the fast path.
  for (size_t prefix = 0; prefix < 20; ++prefix) {
    const std::string plain(prefix, 'a');
    EXPECT_EQ(EncodedString(plain + "\"" + plain + "\n" + std::string(17, 'z')),
              "\"" + plain + "\\\"" + plain + "\\n" + std::string(17, 'z') + "\"");
    EXPECT_EQ(EncodedString(plain + "\xC3\xA9" + plain), "\"" + plain + "\xC3\xA9" + plain + "\"");
    EXPECT_EQ(EncodedString(plain + "\xF0\x9F\x98\x80"), "\"" + plain + "\\uD83D\\uDE00\"");
  }
}

TEST(JsonDataValueEncoderTest, EscapesEveryTextField) {
  DataValueRow row;
  row.data_element = T("a\"");
  row.period = T("b\\");
  row.org_unit = T("c\n");
  row.category_option_combo = T("d\x01");
  row.attribute_option_combo = T("e\xF0\x9F\x98\x80");
  row.value = T("f\x80");
  row.stored_by = T("g\t");
  row.comment = T("h\r");
  EXPECT_EQ(
      EncodeDocument(nullptr, {row}),
      R"({"dataValues":[{"dataElement":"a\"","period":"b\\","orgUnit":"c\n",)"
      R"("categoryOptionCombo":"d\u0001","attributeOptionCombo":"e\uD83D\uDE00",)"
      "\"value\":\"f\xEF\xBF\xBD\",\"storedBy\":\"g\\t\","
      R"("created":"1970-01-01T00:00:00.000+0000","lastUpdated":"1970-01-01T00:00:00.000+0000",)"
      R"("comment":"h\r","followup":false}]})");
}

// Bytes below 0x20 grow six-fold, the worst case the encoder reserves for. Starting from a
// one-byte buffer, the first growth is exactly the reservation, so an overrun would write past
// the allocation (caught by AddressSanitizer builds; debug builds also assert the bound).
TEST(JsonDataValueEncoderTest, WorstCaseRowsFitAfterGrowingFromTinyBuffer) {
  const std::string controls(5000, '\x01');
  DataValueRow row;
  row.data_element = row.period = row.org_unit = row.category_option_combo = T(controls);
  row.attribute_option_combo = row.value = row.stored_by = row.comment = T(controls);
  row.created.micros = row.last_updated.micros = std::numeric_limits<int64_t>::min();
  row.followup = row.deleted = true;
  const DataValueSetHeader header{T(controls), std::numeric_limits<int64_t>::min(), T(controls),
                                  T(controls)};
  const std::string document = EncodeDocument(&header, {row, row}, /*initial_capacity=*/1);
  auto parsed = test_support::ParseJsonStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->members[0].second.text, controls);
  const auto& values = parsed->members[4].second.elements;
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[1].members[9].second.text, controls);
  EXPECT_EQ(values[1].members[7].second.text, "-290308-12-21T19:59:05.224+0000");
}

TEST(JsonDataValueEncoderTest, LongMixedFieldsSurviveBufferGrowth) {
  const std::string emoji = [] {
    std::string s;
    for (int i = 0; i < 1000; ++i) s += "\xF0\x9F\x98\x80";
    return s;
  }();
  const std::string invalid(3000, '\xFF');
  const std::string plain(7000, 'p');
  DataValueRow row = ExampleRow();
  row.value = T(emoji);
  row.stored_by = T(invalid);
  row.comment = T(plain);
  const std::string document = EncodeDocument(nullptr, {row, row}, /*initial_capacity=*/1);
  auto parsed = test_support::ParseJsonStrictly(document);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& values = parsed->members[0].second.elements;
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[1].members[5].second.text, emoji);
  EXPECT_EQ(values[1].members[6].second.text.size(), 3u * invalid.size());
  EXPECT_EQ(values[1].members[9].second.text, plain);
}

TEST(JsonDataValueEncoderTest, AppendsAcrossBufferClearsSoChunksConcatenateToTheDocument) {
  ChunkBuffer buffer(64);
  JsonDataValueEncoder encoder(&buffer);
  std::string chunks;
  encoder.Begin(nullptr);
  for (int i = 0; i < 3; ++i) {
    encoder.Add(ExampleRow());
    chunks += buffer.view();
    buffer.Clear();
  }
  encoder.End();
  chunks += buffer.view();
  const std::string value(kExampleValue);
  EXPECT_EQ(chunks, R"({"dataValues":[)" + value + "," + value + "," + value + "]}");
}

TEST(JsonDataValueEncoderTest, StartsAFreshDocumentAfterEnd) {
  ChunkBuffer buffer(64);
  JsonDataValueEncoder encoder(&buffer);
  encoder.Begin(nullptr);
  encoder.Add(ExampleRow());
  encoder.End();
  buffer.Clear();
  encoder.Begin(nullptr);
  encoder.Add(ExampleRow());
  encoder.End();
  EXPECT_EQ(buffer.view(), R"({"dataValues":[)" + std::string(kExampleValue) + "]}");
}

}  // namespace
}  // namespace dvexport::encode
