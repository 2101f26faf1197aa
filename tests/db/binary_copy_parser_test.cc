#include "service/db/binary_copy_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "service/db/export_scope.h"
#include "service/db/pg_connection.h"

namespace dvexport::db {
namespace {

std::string Int16(int16_t v) {
  uint16_t be = __builtin_bswap16(static_cast<uint16_t>(v));
  return std::string(reinterpret_cast<const char*>(&be), 2);
}
std::string Int32(int32_t v) {
  uint32_t be = __builtin_bswap32(static_cast<uint32_t>(v));
  return std::string(reinterpret_cast<const char*>(&be), 4);
}
std::string Header() { return std::string("PGCOPY\n\377\r\n\0", 11) + Int32(0) + Int32(0); }
std::string Field(const std::string& bytes) {
  return Int32(static_cast<int32_t>(bytes.size())) + bytes;
}
std::string NullField() { return Int32(-1); }

using Rows = std::vector<std::vector<std::string>>;

absl::Status ParseAll(BinaryCopyParser<2>& parser, const std::vector<std::string>& messages,
                      Rows* rows) {
  for (const std::string& m : messages) {
    absl::Status status = parser.Parse(m, [&](const CopyField(&f)[2]) {
      std::vector<std::string> row;
      for (const CopyField& field : f) {
        row.push_back(field.is_null() ? "<null>" : std::string(field.data, field.size));
      }
      rows->push_back(row);
      return true;
    });
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

TEST(BinaryCopyParserTest, ParsesHeaderTuplesNullsAndTrailer) {
  BinaryCopyParser<2> parser;
  Rows rows;
  ASSERT_TRUE(ParseAll(parser,
                       {Header() + Int16(2) + Field("a") + NullField(),
                        Int16(2) + Field(std::string("x\0y", 3)) + Field(""), Int16(-1)},
                       &rows)
                  .ok());
  EXPECT_TRUE(parser.done());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "<null>"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{std::string("x\0y", 3), ""}));
}

TEST(BinaryCopyParserTest, SkipsHeaderExtension) {
  BinaryCopyParser<2> parser;
  Rows rows;
  std::string header = std::string("PGCOPY\n\377\r\n\0", 11) + Int32(0) + Int32(3) + "ext";
  ASSERT_TRUE(
      ParseAll(parser, {header + Int16(2) + Field("a") + Field("b"), Int16(-1)}, &rows).ok());
  ASSERT_EQ(rows.size(), 1u);
}

TEST(BinaryCopyParserTest, RejectsMissingSignature) {
  BinaryCopyParser<2> parser;
  Rows rows;
  EXPECT_EQ(ParseAll(parser, {"PGCOPY\n\377\r\n\0 plus junk!!"}, &rows).code(),
            absl::StatusCode::kDataLoss);
}

TEST(BinaryCopyParserTest, RejectsTruncatedTuple) {
  BinaryCopyParser<2> parser;
  Rows rows;
  std::string tuple = Int16(2) + Field("abc") + Field("def");
  absl::Status status = ParseAll(parser, {Header() + tuple.substr(0, tuple.size() - 1)}, &rows);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(rows.empty());
}

TEST(BinaryCopyParserTest, RejectsWrongFieldCount) {
  BinaryCopyParser<2> parser;
  Rows rows;
  EXPECT_EQ(
      ParseAll(parser, {Header() + Int16(3) + Field("a") + Field("b") + Field("c")}, &rows).code(),
      absl::StatusCode::kDataLoss);
}

TEST(BinaryCopyParserTest, RejectsDataAfterTrailer) {
  BinaryCopyParser<2> parser;
  Rows rows;
  EXPECT_EQ(ParseAll(parser, {Header() + Int16(-1) + Int16(2)}, &rows).code(),
            absl::StatusCode::kDataLoss);
}

TEST(BinaryCopyParserTest, StopsWhenTheConsumerSaysSo) {
  BinaryCopyParser<2> parser;
  int seen = 0;
  std::string tuple = Int16(2) + Field("a") + Field("b");
  ASSERT_TRUE(parser
                  .Parse(Header() + tuple + tuple,
                         [&](const CopyField(&)[2]) {
                           ++seen;
                           return false;
                         })
                  .ok());
  EXPECT_EQ(seen, 1);
}

TEST(PgLiteralTest, ArrayLiteralsQuoteEverything) {
  EXPECT_EQ(ToArrayLiteral({}), "{}");
  EXPECT_EQ(ToArrayLiteral({1, -2, 300000000000}), "{1,-2,300000000000}");
  EXPECT_EQ(ToTextArrayLiteral({"a", "b\"c", "d\\e", "NULL", "x,y", "{z}"}),
            "{\"a\",\"b\\\"c\",\"d\\\\e\",\"NULL\",\"x,y\",\"{z}\"}");
}

TEST(DataValueCopySqlTest, HoldsOnlyTheScopesIntegers) {
  ExportScope scope;
  scope.data_element_ids = {3, 1};
  scope.period_ids = {7};
  scope.org_unit_ids = {9, 10};
  std::string sql = BuildDataValueCopySql(scope);
  EXPECT_NE(sql.find("dv.dataelementid = ANY('{3,1}'::bigint[])"), std::string::npos) << sql;
  EXPECT_NE(sql.find("dv.periodid = ANY('{7}'::bigint[])"), std::string::npos);
  EXPECT_NE(sql.find("dv.sourceid = ANY('{9,10}'::bigint[])"), std::string::npos);
  EXPECT_NE(sql.find("dv.deleted IS FALSE"), std::string::npos);
  EXPECT_EQ(sql.find("LIMIT"), std::string::npos);
  EXPECT_EQ(sql.find("ORDER BY"), std::string::npos) << "a sort delays the first byte";
  EXPECT_NE(sql.find("TO STDOUT (FORMAT binary)"), std::string::npos);

  scope.include_deleted = true;
  scope.limit = 5;
  sql = BuildDataValueCopySql(scope);
  EXPECT_EQ(sql.find("deleted IS FALSE"), std::string::npos);
  EXPECT_NE(sql.find("LIMIT 5)"), std::string::npos);
}

TEST(DataValueCopySqlTest, EmptyFilterMatchesNothing) {
  ExportScope scope;
  scope.data_element_ids = {1};
  scope.org_unit_ids = {2};
  EXPECT_TRUE(scope.MatchesNothing());
  scope.period_ids = {3};
  EXPECT_FALSE(scope.MatchesNothing());
  scope.limit = 0;
  EXPECT_TRUE(scope.MatchesNothing());
}

TEST(DataValueCopySqlTest, OptionalFiltersHoldOnlyIntegers) {
  ExportScope scope;
  scope.data_element_ids = {1};
  scope.org_unit_ids = {2};
  scope.filter_periods = false;
  scope.attribute_option_combo_ids = std::vector<int64_t>{21, 22};
  scope.last_updated_min_micros = 1709287200123456;  // 2024-03-01T10:00:00.123456
  EXPECT_FALSE(scope.MatchesNothing()) << "no period filter";
  std::string sql = BuildDataValueWhereSql(scope);
  EXPECT_EQ(sql.find("periodid"), std::string::npos) << sql;
  EXPECT_NE(sql.find("dv.attributeoptioncomboid = ANY('{21,22}'::bigint[])"), std::string::npos);
  EXPECT_NE(sql.find("dv.lastupdated >= (TIMESTAMP '1970-01-01' + (1709287200) * INTERVAL "
                     "'1 second' + 123456 * INTERVAL '1 microsecond')"),
            std::string::npos)
      << sql;

  // Before 1970 the remainder stays non-negative.
  scope.last_updated_min_micros = -1;
  sql = BuildDataValueWhereSql(scope);
  EXPECT_NE(sql.find("+ (-1) * INTERVAL '1 second' + 999999 * INTERVAL '1 microsecond'"),
            std::string::npos)
      << sql;

  scope.attribute_option_combo_ids = std::vector<int64_t>{};
  EXPECT_TRUE(scope.MatchesNothing());
}

}  // namespace
}  // namespace dvexport::db
