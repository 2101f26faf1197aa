#include "service/encode/csv_243_data_value_encoder.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/encode/data_value_encoder_243_testing.h"
#include "tests/encode/rfc4180_parser.h"

namespace dvexport::encode {
namespace {

using test_support::CsvRecord;
using test_support::ParseCsvStrictly;

// DataExportOutput.CSV_HEADER_ROW (dhis2-core 2.43.1), as 2.42 wrote it.
constexpr std::string_view kHeaderLine =
    "dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,"
    "lastupdated,comment,followup,deleted\n";

// ExampleRow() as 2.43 writes it: deleted is false (2.42: null).
constexpr std::string_view kExampleLine =
    "fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
    "2024-01-05T10:11:12.123+0000,,false,false\n";

std::string EncodeDocument(const DataValueGroupHeader& header,
                           const std::vector<DataValueRow>& rows, size_t initial_capacity = 1024) {
  return Encode243<Csv243DataValueEncoder>(header, rows, initial_capacity);
}

std::string Document(std::string_view lines) {
  return std::string(kHeaderLine) + std::string(lines);
}

TEST(Csv243DataValueEncoderTest, WritesOnlyTheHeaderLineForNoValues) {
  EXPECT_EQ(EncodeDocument({}, {}), kHeaderLine);
  EXPECT_EQ(EncodeDocument(FullGroupHeader(), {}), kHeaderLine);
}

TEST(Csv243DataValueEncoderTest, WritesDeletedAsFalseOrTrue) {
  DataValueRow deleted = ExampleRow();
  deleted.deleted = true;
  EXPECT_EQ(EncodeDocument({}, {ExampleRow(), deleted}),
            Document(std::string(kExampleLine) +
                     "fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,false,true\n"));
}

TEST(Csv243DataValueEncoderTest, WritesFollowupTrueFalseOrEmptyWhenNull) {
  DataValueRow followup = ExampleRow();
  followup.followup = true;
  DataValueRow null_followup = ExampleRow();
  null_followup.followup_null = true;
  EXPECT_EQ(EncodeDocument({}, {followup, null_followup}),
            Document("fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,true,false\n"
                     "fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,,false\n"));
}

TEST(Csv243DataValueEncoderTest, WritesLeftOutOptionCombosAndNullsAsEmptyFields) {
  DataValueRow row = ExampleRow();
  row.category_option_combo = kNullText;
  row.attribute_option_combo = kNullText;
  row.value = row.stored_by = kNullText;
  row.comment = T("");
  EXPECT_EQ(EncodeDocument({}, {row}), Document("fbfJHSPpUQD,202401,DiszpKrYNg8,,,,,"
                                                "2024-01-05T10:11:12.123+0000,,false,false\n"));
}

TEST(Csv243DataValueEncoderTest, FillsTheHeadersPeriodOrgUnitAndAocIntoEveryLine) {
  // DataExportOutput.toCsv (2.43.1 lines 172-183): a value's null period, org unit or AOC is the
  // group's. The data set is not written.
  DataValueRow row = ExampleRow();
  row.period = row.org_unit = row.attribute_option_combo = kNullText;
  EXPECT_EQ(EncodeDocument(FullGroupHeader(), {row, row}),
            Document("fbfJHSPpUQD,202407,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,false,false\n"
                     "fbfJHSPpUQD,202407,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,false,false\n"));
}

TEST(Csv243DataValueEncoderTest, FillsEachHeaderMemberOnItsOwn) {
  DataValueRow row = ExampleRow();
  DataValueGroupHeader period;
  period.period = T("2024Q3");
  period.period_adx = T("2024-07-01/P3M");
  DataValueGroupHeader org_unit;
  org_unit.org_unit = T("OU_CODE");
  DataValueGroupHeader aoc;
  aoc.attribute_option_combo = T("AOC_CODE");
  EXPECT_EQ(EncodeDocument(period, {row}),
            Document("fbfJHSPpUQD,2024Q3,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,false,false\n"));
  EXPECT_EQ(EncodeDocument(org_unit, {row}),
            Document("fbfJHSPpUQD,202401,OU_CODE,PT59n8BQbqM,HllvX50cXC0,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,false,false\n"));
  EXPECT_EQ(EncodeDocument(aoc, {row}),
            Document("fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,AOC_CODE,12,admin,"
                     "2024-01-05T10:11:12.123+0000,,false,false\n"));
}

TEST(Csv243DataValueEncoderTest, WritesHeaderFieldsAsJavacsvDoes) {
  // Names as ids (idScheme=NAME) may need quoting or trimming, as any field.
  DataValueGroupHeader header;
  header.org_unit = T(" Ngelehun, CHC ");
  header.attribute_option_combo = T("say \"hi\"");
  DataValueRow row = ExampleRow();
  EXPECT_EQ(EncodeDocument(header, {row}),
            Document("fbfJHSPpUQD,202401,\"Ngelehun, CHC\",PT59n8BQbqM,\"say \"\"hi\"\"\",12,admin,"
                     "2024-01-05T10:11:12.123+0000,,false,false\n"));
}

TEST(Csv243DataValueEncoderTest, QuotesAndTrimsAs242Does) {
  DataValueRow row = ExampleRow();
  row.data_element = T("#de");
  row.value = T("a,b");
  row.stored_by = T("  admin\t");
  row.comment = T("line\nbreak \"q\"");
  EXPECT_EQ(EncodeDocument({}, {row}),
            Document("\"#de\",202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,\"a,b\",admin,"
                     "2024-01-05T10:11:12.123+0000,\"line\nbreak \"\"q\"\"\",false,false\n"));
  row.data_element = T("");
  EXPECT_EQ(EncodeDocument({}, {row}).substr(kHeaderLine.size(), 3), "\"\",");
  row.comment = T("\xFF");
  EXPECT_NE(EncodeDocument({}, {row}).find(",\xEF\xBF\xBD,false,false\n"), std::string::npos);
}

TEST(Csv243DataValueEncoderTest, WritesTheSameDocumentByParts) {
  DataValueRow other = ExampleRow();
  other.followup_null = true;
  other.deleted = true;
  const std::vector<DataValueRow> rows = {ExampleRow(), other};
  for (const DataValueGroupHeader& header : {DataValueGroupHeader{}, FullGroupHeader()}) {
    EXPECT_EQ(EncodeByParts243<Csv243DataValueEncoder>(header, rows), EncodeDocument(header, rows));
  }
}

TEST(Csv243DataValueEncoderTest, EveryLineHasElevenFieldsForAStrictParser) {
  DataValueRow row = ExampleRow();
  row.comment = T("a\r\nb,\"c\"");
  row.followup_null = true;
  DataValueGroupHeader header = FullGroupHeader();
  header.org_unit = T("x,y");
  const std::string document = EncodeDocument(header, {row, ExampleRow()});
  absl::StatusOr<std::vector<CsvRecord>> records = ParseCsvStrictly(document);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  for (const CsvRecord& record : *records) EXPECT_EQ(record.size(), 11u);
  EXPECT_EQ((*records)[1][2].value, "x,y");
  EXPECT_EQ((*records)[1][8].value, "a\r\nb,\"c\"");
  EXPECT_EQ((*records)[1][9].value, "");
}

TEST(Csv243DataValueEncoderTest, WorstCaseRowsFitAfterGrowingFromTinyBuffer) {
  const std::string quotes(200, '"');
  const std::string ill_formed(200, '\xFF');
  DataValueRow row;
  row.data_element = row.period = row.org_unit = T(quotes);
  row.category_option_combo = row.attribute_option_combo = T(ill_formed);
  row.value = row.stored_by = row.comment = T(ill_formed);
  row.last_updated.micros = std::numeric_limits<int64_t>::min();
  DataValueGroupHeader header;
  header.period = header.org_unit = header.attribute_option_combo = T(ill_formed);
  EXPECT_EQ(EncodeDocument(header, {row, row}, /*initial_capacity=*/1),
            EncodeDocument(header, {row, row}, /*initial_capacity=*/1 << 20));
}

}  // namespace
}  // namespace dvexport::encode
