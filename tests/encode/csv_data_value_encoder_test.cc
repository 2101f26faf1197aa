#include "service/encode/csv_data_value_encoder.h"

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/encode/data_value_encoder_testing.h"

namespace dvexport::encode {
namespace {

constexpr std::string_view kHeaderLine =
    "dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,"
    "lastupdated,comment,followup,deleted\n";

// ExampleRow() with no created time (CSV does not write it) and a last update 456 microseconds past
// its millisecond.
DataValueRow CsvExampleRow() {
  DataValueRow row = ExampleRow();
  row.created.micros = 0;
  row.last_updated.micros = 1704449472123456;
  return row;
}

constexpr std::string_view kExampleLine =
    "fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
    "2024-01-05T10:11:12.123+0000,,false,null\n";

std::string EncodeDocument(const std::vector<DataValueRow>& rows, size_t initial_capacity = 1024) {
  return Encode<CsvDataValueEncoder>(nullptr, rows, initial_capacity);
}

// The line written for CsvExampleRow() with "bytes" in the first column.
std::string LineWithFirstColumn(std::string_view bytes) {
  DataValueRow row = CsvExampleRow();
  row.data_element = T(bytes);
  const std::string document = EncodeDocument({row});
  return document.substr(kHeaderLine.size());
}

// What is written for "bytes" in the value column (not first).
std::string ValueField(std::string_view bytes) {
  DataValueRow row = CsvExampleRow();
  row.value = T(bytes);
  const std::string line = EncodeDocument({row}).substr(kHeaderLine.size());
  const std::string_view before = "HllvX50cXC0,";
  const std::string_view after = ",admin,2024-01-05T10:11:12.123+0000,,false,null\n";
  const size_t begin = line.find(before) + before.size();
  EXPECT_EQ(line.substr(line.size() - after.size()), after) << line;
  return line.substr(begin, line.size() - after.size() - begin);
}

TEST(CsvDataValueEncoderTest, WritesOnlyTheHeaderLineForNoValues) {
  EXPECT_EQ(EncodeDocument({}), kHeaderLine);
}

TEST(CsvDataValueEncoderTest, IgnoresDataValueSetHeader) {
  ChunkBuffer buffer(64);
  CsvDataValueEncoder encoder(&buffer);
  const DataValueSetHeader header{T("lyLU2wR22tC"), 0, T("202401"), T("DiszpKrYNg8")};
  encoder.Begin(&header);
  encoder.End();
  EXPECT_EQ(buffer.view(), kHeaderLine);
}

TEST(CsvDataValueEncoderTest, WritesColumnsInDhis2OrderWithoutCreated) {
  EXPECT_EQ(EncodeDocument({CsvExampleRow()}),
            std::string(kHeaderLine) + std::string(kExampleLine));
}

TEST(CsvDataValueEncoderTest, WritesFollowupAndDeletedLikeDhis2) {
  DataValueRow row = CsvExampleRow();
  row.followup = true;
  row.deleted = true;
  DataValueRow deleted_only = CsvExampleRow();
  deleted_only.deleted = true;
  const std::string document = EncodeDocument({row, deleted_only, CsvExampleRow()});
  EXPECT_EQ(document.substr(kHeaderLine.size()),
            "fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
            "2024-01-05T10:11:12.123+0000,,true,true\n"
            "fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
            "2024-01-05T10:11:12.123+0000,,false,true\n" +
                std::string(kExampleLine));
}

TEST(CsvDataValueEncoderTest, WritesNullTextFieldsAsEmptyFields) {
  DataValueRow row;
  row.data_element = row.period = row.org_unit = kNullText;
  row.category_option_combo = row.attribute_option_combo = kNullText;
  row.value = row.stored_by = row.comment = kNullText;
  row.value.bytes = "ignored";
  EXPECT_EQ(EncodeDocument({row}).substr(kHeaderLine.size()),
            "\"\",,,,,,,1970-01-01T00:00:00.000+0000,,false,null\n");
}

TEST(CsvDataValueEncoderTest, TrimsBytesUpToSpaceAtBothEndsLikeJavaTrim) {
  EXPECT_EQ(ValueField("  12 "), "12");
  EXPECT_EQ(ValueField(std::string_view("\t\x01\x00 1 2\x1F\x20\x00", 9)), "1 2");
  EXPECT_EQ(ValueField(" \t\n\r "), "");
  EXPECT_EQ(ValueField("\x7F"
                       "a\x7F"),
            "\x7F"
            "a\x7F");  // DEL is above U+0020.
  EXPECT_EQ(ValueField("\xC2\xA0"
                       "a"),
            "\xC2\xA0"
            "a");  // So is U+00A0.
}

TEST(CsvDataValueEncoderTest, TrimsBeforeDecidingToQuote) {
  EXPECT_EQ(ValueField("12\n"), "12");
  EXPECT_EQ(ValueField("\r\n12\r\n"), "12");
  EXPECT_EQ(ValueField("1\n2"), "\"1\n2\"");
}

TEST(CsvDataValueEncoderTest, QuotesFieldsContainingQuoteCommaNewlineOrCarriageReturn) {
  EXPECT_EQ(ValueField("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(ValueField("1,5"), "\"1,5\"");
  EXPECT_EQ(ValueField("a\nb"), "\"a\nb\"");
  EXPECT_EQ(ValueField("a\rb"), "\"a\rb\"");
}

TEST(CsvDataValueEncoderTest, DoublesEveryEmbeddedQuote) {
  EXPECT_EQ(ValueField("\"\""), "\"\"\"\"\"\"");
  EXPECT_EQ(ValueField("say \"hi\", \"bye\""), "\"say \"\"hi\"\", \"\"bye\"\"\"");
}

TEST(CsvDataValueEncoderTest, EscapesNothingElse) {
  EXPECT_EQ(ValueField("a\\b\tc;d'e#f/\x01g\x7F"), "a\\b\tc;d'e#f/\x01g\x7F");
}

TEST(CsvDataValueEncoderTest, QuotesFirstColumnStartingWithHash) {
  EXPECT_EQ(LineWithFirstColumn("#abc").substr(0, 7), "\"#abc\",");
  EXPECT_EQ(LineWithFirstColumn("  #abc").substr(0, 7), "\"#abc\",");
  EXPECT_EQ(LineWithFirstColumn("a#bc").substr(0, 5), "a#bc,");
  EXPECT_EQ(ValueField("#abc"), "#abc");  // Only the first column.
}

TEST(CsvDataValueEncoderTest, QuotesEmptyFirstColumn) {
  EXPECT_EQ(LineWithFirstColumn("").substr(0, 3), "\"\",");
  EXPECT_EQ(LineWithFirstColumn(" \t ").substr(0, 3), "\"\",");
  EXPECT_EQ(ValueField(""), "");  // Only the first column.
}

TEST(CsvDataValueEncoderTest, QuotesFirstColumnForOtherReasonsToo) {
  EXPECT_EQ(LineWithFirstColumn("a,b").substr(0, 6), "\"a,b\",");
  EXPECT_EQ(LineWithFirstColumn("#a\"b").substr(0, 8), "\"#a\"\"b\",");
}

TEST(CsvDataValueEncoderTest, QuotesEveryTextColumnWhenNeeded) {
  DataValueRow row;
  row.data_element = T("a,");
  row.period = T("b\"");
  row.org_unit = T("c\nc");
  row.category_option_combo = T("d\rd");
  row.attribute_option_combo = T(",e");
  row.value = T("\"f");
  row.stored_by = T("g,g");
  row.comment = T("h\"h");
  EXPECT_EQ(EncodeDocument({row}).substr(kHeaderLine.size()),
            "\"a,\",\"b\"\"\",\"c\nc\",\"d\rd\",\",e\",\"\"\"f\",\"g,g\","
            "1970-01-01T00:00:00.000+0000,\"h\"\"h\",false,null\n");
}

TEST(CsvDataValueEncoderTest, QuotesWhenTheReasonComesAfterLongPlainText) {
  for (size_t prefix = 0; prefix < 20; ++prefix) {
    const std::string plain(prefix, 'a');
    EXPECT_EQ(ValueField(plain + "," + plain), "\"" + plain + "," + plain + "\"");
    EXPECT_EQ(ValueField(plain + "\xC3\xA9\"" + plain),
              "\"" + plain + "\xC3\xA9\"\"" + plain + "\"");
  }
}

TEST(CsvDataValueEncoderTest, KeepsWellFormedUtf8AndReplacesIllFormedBytes) {
  EXPECT_EQ(ValueField("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(ValueField("a\xFF"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ValueField("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ValueField("\xE2\x82,"), "\"\xEF\xBF\xBD,\"");
  EXPECT_EQ(ValueField("x\xF0\x9F\x98"), "x\xEF\xBF\xBD");
}

// Ill-formed bytes grow three-fold, the worst case the encoder reserves for (quotes double).
// Starting from a one-byte buffer, the first growth is exactly the reservation, so an overrun
// would write past the allocation (caught by AddressSanitizer builds; debug builds also assert).
TEST(CsvDataValueEncoderTest, WorstCaseRowsFitAfterGrowingFromTinyBuffer) {
  DataValueRow row = CsvExampleRow();
  const std::string quotes(4000, '"');
  const std::string invalid(4000, '\x80');
  row.data_element = T(quotes);
  row.comment = T(invalid);
  row.last_updated.micros = std::numeric_limits<int64_t>::min();
  const std::string document = EncodeDocument({row, row}, /*initial_capacity=*/1);
  const std::string line = "\"" + std::string(8000, '"') + "\"" +
                           ",202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                           "-290308-12-21T19:59:05.224+0000,";
  std::string replaced;
  for (int i = 0; i < 4000; ++i) replaced += "\xEF\xBF\xBD";
  EXPECT_EQ(document, std::string(kHeaderLine) + line + replaced + ",false,null\n" + line +
                          replaced + ",false,null\n");
}

}  // namespace
}  // namespace dvexport::encode
