#include "service/db/data_value_line_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>

#include "tests/support/postgres_timestamp.h"

namespace dvexport::db {
namespace {

// A scope that knows ids 1..3 of every dimension.
ExportScope SmallScope() {
  ExportScope scope;
  for (int64_t id = 1; id <= 3; ++id) {
    scope.data_elements[id] = "de" + std::to_string(id);
    scope.periods[id] = "20240" + std::to_string(id);
    scope.org_units[id] = "ou" + std::to_string(id);
    scope.category_option_combos[id] = "coc" + std::to_string(id);
    scope.attribute_option_combos[id] = "aoc" + std::to_string(id);
  }
  scope.org_units[3] = std::nullopt;  // no identifier in the output scheme
  return scope;
}

// A COPY text line of the data value query: the ids, then the given fields.
std::string Line(std::string_view value, std::string_view stored_by = "admin",
                 std::string_view created = "2024-01-12 10:00:00",
                 std::string_view last_updated = "2024-01-12 10:00:00",
                 std::string_view comment = "\\N", std::string_view followup = "f",
                 std::string_view deleted = "f") {
  std::string line = "1\t2\t3\t1\t2\t";
  for (std::string_view field :
       {value, stored_by, created, last_updated, comment, followup, deleted}) {
    line.append(field);
    line += '\t';
  }
  line.back() = '\n';
  return line;
}

class DataValueLineParserTest : public ::testing::Test {
 protected:
  // The row points into the line: it is kept until the next call.
  absl::Status Parse(std::string line) {
    line_ = std::move(line);
    return parser_.Parse(line_, &row_);
  }

  ExportScope scope_ = SmallScope();
  IdentifierTables tables_{scope_};
  DataValueLineParser parser_{&tables_};
  std::string line_;
  encode::DataValueRow row_;
};

TEST_F(DataValueLineParserTest, MapsIdsAndReadsEveryColumn) {
  ASSERT_TRUE(Parse(Line("42", "admin", "2024-01-12 10:00:00", "2024-01-12 10:00:00.5", "a comment",
                         "t", "f"))
                  .ok());
  EXPECT_EQ(row_.data_element.bytes, "de1");
  EXPECT_EQ(row_.period.bytes, "202402");
  EXPECT_TRUE(row_.org_unit.is_null) << "ou 3 has no identifier in the output scheme";
  EXPECT_EQ(row_.category_option_combo.bytes, "coc1");
  EXPECT_EQ(row_.attribute_option_combo.bytes, "aoc2");
  EXPECT_EQ(row_.value.bytes, "42");
  EXPECT_FALSE(row_.value.is_null);
  EXPECT_EQ(row_.stored_by.bytes, "admin");
  EXPECT_EQ(test_support::MicrosOf(row_.created), 1705053600000000);
  EXPECT_EQ(test_support::MicrosOf(row_.last_updated), 1705053600500000);
  EXPECT_EQ(row_.comment.bytes, "a comment");
  EXPECT_TRUE(row_.followup);
  EXPECT_FALSE(row_.deleted);
}

// Consecutive rows share dates, and a value never updated has lastupdated == created: each
// timestamp must still be its own, whichever shortcut reads it.
TEST_F(DataValueLineParserTest, TimestampsOfConsecutiveRowsAreEachTheirOwn) {
  ASSERT_TRUE(Parse(Line("1", "a", "2024-01-12 10:00:00.25", "2024-01-12 10:00:00.25")).ok());
  EXPECT_EQ(test_support::MicrosOf(row_.created), 1705053600250000);
  EXPECT_EQ(test_support::MicrosOf(row_.last_updated), 1705053600250000);
  ASSERT_TRUE(Parse(Line("2", "a", "2024-01-12 23:59:59", "2024-01-13 00:00:00.000001")).ok());
  EXPECT_EQ(test_support::MicrosOf(row_.created), 1705103999000000);
  EXPECT_EQ(test_support::MicrosOf(row_.last_updated), 1705104000000001);
  ASSERT_TRUE(Parse(Line("3", "a", "1999-12-31 00:00:01", "1999-12-31 00:00:01")).ok());
  EXPECT_EQ(test_support::MicrosOf(row_.created), 946598401000000);
  EXPECT_EQ(test_support::MicrosOf(row_.last_updated), 946598401000000);
}

TEST_F(DataValueLineParserTest, TheFinalNewlineIsOptional) {
  std::string line = Line("7");
  line.pop_back();
  ASSERT_TRUE(Parse(line).ok());
  EXPECT_EQ(row_.deleted, false);
  EXPECT_EQ(row_.value.bytes, "7");
}

// The query sends lastupdated empty when it equals created (BuildDataValueSelectSql): the row's
// lastupdated is then created's, on the one-pass parser (with an escaped value before it, too) and
// on the general one (a created past year 9999 sends the line there).
TEST_F(DataValueLineParserTest, AnEmptyLastUpdatedIsCreated) {
  for (const char* value : {"7", "a\\tb"}) {
    for (const char* created : {"2024-01-12 10:00:00.25", "12024-01-12 10:00:00"}) {
      SCOPED_TRACE(std::string(value) + " " + created);
      const int64_t general_before = parser_.general_lines();
      ASSERT_TRUE(Parse(Line(value, "admin", created, "")).ok());
      EXPECT_EQ(row_.created.usual_text, row_.last_updated.usual_text);
      EXPECT_EQ(row_.created.micros, row_.last_updated.micros);
      if (std::string_view(created).size() == 22) {
        EXPECT_EQ(row_.last_updated.usual_text, created);
      } else {
        EXPECT_TRUE(row_.last_updated.usual_text.empty());
        EXPECT_NE(row_.last_updated.micros, 0);
      }
      EXPECT_EQ(parser_.general_lines() - general_before,
                std::string_view(created).size() == 22 ? 0 : 1);
      EXPECT_EQ(row_.comment.is_null, true);
      EXPECT_FALSE(row_.followup);
    }
  }
  // A NULL lastupdated is still malformed, not "the same".
  EXPECT_EQ(Parse(Line("7", "admin", "2024-01-12 10:00:00", "\\N")).code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(DataValueLineParserTest, UndoesEveryBackslashEscape) {
  ASSERT_TRUE(Parse(Line("a\\\\b\\bc\\fd\\ne\\rf\\tg\\vh")).ok());
  EXPECT_EQ(row_.value.bytes, "a\\b\bc\fd\ne\rf\tg\vh");
}

TEST_F(DataValueLineParserTest, SeveralEscapedFieldsInOneLineStayIntact) {
  ASSERT_TRUE(Parse(Line("one\\ttwo", "by\\\\me", "2024-01-12 10:00:00", "2024-01-12 10:00:00",
                         "line\\nbreak"))
                  .ok());
  EXPECT_EQ(row_.value.bytes, "one\ttwo");
  EXPECT_EQ(row_.stored_by.bytes, "by\\me");
  EXPECT_EQ(row_.comment.bytes, "line\nbreak");
}

TEST_F(DataValueLineParserTest, BackslashNIsNullButAnEscapedBackslashNIsText) {
  ASSERT_TRUE(
      Parse(Line("\\N", "\\N", "2024-01-12 10:00:00", "2024-01-12 10:00:00", "\\\\N", "\\N")).ok());
  EXPECT_TRUE(row_.value.is_null);
  EXPECT_TRUE(row_.stored_by.is_null);
  EXPECT_FALSE(row_.comment.is_null);
  EXPECT_EQ(row_.comment.bytes, "\\N");
  EXPECT_FALSE(row_.followup) << "a NULL followup is false";
}

TEST_F(DataValueLineParserTest, ReadsUnusualTimestampsToo) {
  ASSERT_TRUE(
      Parse(Line("1", "admin", "0001-12-31 23:59:59 BC", "10000-01-01 00:00:00", "\\N", "\\N"))
          .ok());
  EXPECT_EQ(test_support::MicrosOf(row_.created), -62135596800000000 - 1000000);
  EXPECT_EQ(test_support::MicrosOf(row_.last_updated), 253402300800000000);
  // And the usual ones again after them, with dates the parser has seen or not.
  ASSERT_TRUE(Parse(Line("1", "admin", "1969-12-31 23:59:59.999999", "2024-01-12 10:00:00")).ok());
  EXPECT_EQ(test_support::MicrosOf(row_.created), -1);
  EXPECT_EQ(test_support::MicrosOf(row_.last_updated), 1705053600000000);
  ASSERT_TRUE(Parse(Line("1", "admin", "1969-12-31 00:00:00.5", "2024-01-12 10:00:01")).ok());
  EXPECT_EQ(test_support::MicrosOf(row_.created), -86400000000 + 500000);
  EXPECT_EQ(test_support::MicrosOf(row_.last_updated), 1705053601000000);
}

// The usual timestamps reach the encoders as the COPY's text (no parsing); the others as
// microseconds, and a row's text form never outlives the line it came from.
TEST_F(DataValueLineParserTest, PassesUsualTimestampsOnAsTextAndOthersAsMicros) {
  ASSERT_TRUE(Parse(Line("1", "a", "2024-01-12 10:00:00.25", "2024-02-29 23:59:59")).ok());
  EXPECT_EQ(row_.created.usual_text, "2024-01-12 10:00:00.25");
  EXPECT_EQ(row_.last_updated.usual_text, "2024-02-29 23:59:59");
  // Equal texts (a value never updated) are handed on as one.
  ASSERT_TRUE(Parse(Line("1", "a", "2024-01-12 10:00:00.25", "2024-01-12 10:00:00.25")).ok());
  EXPECT_EQ(row_.last_updated.usual_text.data(), row_.created.usual_text.data());
  ASSERT_TRUE(Parse(Line("1", "a", "2024-01-12 10:00:00.25", "2024-01-12 10:00:00.26")).ok());
  EXPECT_EQ(row_.last_updated.usual_text, "2024-01-12 10:00:00.26");
  ASSERT_TRUE(Parse(Line("1", "a", "2024-01-12 10:00:00", "0044-03-15 12:00:00 BC")).ok());
  EXPECT_EQ(row_.created.usual_text, "2024-01-12 10:00:00");
  EXPECT_TRUE(row_.last_updated.usual_text.empty());
  EXPECT_EQ(row_.last_updated.micros, -63517780800000000);
  // An escaped line takes the general path: the same forms.
  ASSERT_TRUE(Parse(Line("a\\b", "a", "12345-01-01 00:00:00", "2024-01-12 10:00:00.123456")).ok());
  EXPECT_TRUE(row_.created.usual_text.empty());
  EXPECT_EQ(row_.created.micros, 327403382400000000);
  EXPECT_EQ(row_.last_updated.usual_text, "2024-01-12 10:00:00.123456");
  // Not quite usual: a trailing '.', a 27th byte, a letter.
  for (const char* text :
       {"2024-01-12 10:00:00.", "2024-01-12 10:00:00.1234567", "2024-01-12 10:00:0x"}) {
    EXPECT_FALSE(Parse(Line("1", "a", text, "2024-01-12 10:00:00")).ok()) << text;
  }
}

TEST_F(DataValueLineParserTest, KeepsNonAsciiBytesAsTheyAre) {
  ASSERT_TRUE(Parse(Line("caf\xc3\xa9 \xff")).ok());
  EXPECT_EQ(row_.value.bytes, "caf\xc3\xa9 \xff");
}

TEST_F(DataValueLineParserTest, RejectsMalformedLines) {
  for (const std::string& line : {
           std::string(),
           std::string("\n"),
           std::string("1\t2\t3\n"),
           Line("1").substr(0, 20),
           Line("1", "admin", "2024-01-12 10:00:00", "2024-01-12 10:00:00", "\\N", "f", "f\textra"),
           "x" + Line("1"),
           Line("bad \\x escape"),
           Line("lone backslash\\"),
           Line("1", "admin", "2024-13-01 10:00:00"),
           Line("1", "admin", "2024-01-12"),
           Line("1", "admin", "2024-01-12 10:00:00.1234567"),
           Line("1", "admin", "2024-01-12 10:00:00."),
           Line("1", "admin", "2024-01-12T10:00:00"),
           Line("1", "admin", "\\N"),
           Line("1", "admin", "2024-01-12 10:00:00", "2024-01-12 10:00:00", "\\N", "yes"),
           Line("1", "admin", "2024-01-12 10:00:00", "2024-01-12 10:00:00", "\\N", "f", "\\N"),
       }) {
    absl::Status status = Parse(line);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << line << ": " << status;
  }
}

// Ids of every length from 1 to 18 digits, in every column, with 8 or more bytes after them or
// (a short line's last id) fewer: each maps to its own identifier, the line to the same row.
TEST(DataValueLineParserIdTest, IdsOfEveryLengthInEveryColumn) {
  for (int digits = 1; digits <= 18; ++digits) {
    const int64_t id = digits == 1
                           ? 7
                           : static_cast<int64_t>(std::stoll(
                                 "9" + std::string(static_cast<size_t>(digits - 2), '0') + "1"));
    for (int column = 0; column < 5; ++column) {
      ExportScope scope = SmallScope();
      IdentifierMap* maps[5] = {&scope.data_elements, &scope.periods, &scope.org_units,
                                &scope.category_option_combos, &scope.attribute_option_combos};
      (*maps[column])[id] = "the" + std::to_string(digits);
      std::string line = Line("1");
      const std::string ids[5] = {"1", "2", "1", "1", "2"};
      std::string head;
      for (int c = 0; c < 5; ++c) head += (c == column ? std::to_string(id) : ids[c]) + '\t';
      line.replace(0, line.find("\t1\tadmin") + 1, head);
      // A digit, then bytes that carry when 6 is added to them, right after the id.
      line.replace(line.find("\t1\tadmin") + 1, 1, "1\xfa\xff");
      const IdentifierTables tables(scope);
      DataValueLineParser parser(&tables);
      encode::DataValueRow row;
      ASSERT_TRUE(parser.Parse(line, &row).ok()) << line;
      const encode::Text* texts[5] = {&row.data_element, &row.period, &row.org_unit,
                                      &row.category_option_combo, &row.attribute_option_combo};
      EXPECT_EQ(texts[column]->bytes, "the" + std::to_string(digits)) << line;
      EXPECT_EQ(row.value.bytes, "1\xfa\xff");
      EXPECT_EQ(parser.general_lines(), 0) << "the one-pass parser gave up on " << line;
    }
  }
}

// Consecutive lines whose ids share prefixes, lengths or nothing with the line before, in every
// column: each line maps its own ids (the parser remembers the last id text of each column), and
// each is read by the one-pass parser (a remembered id taken for a longer one that starts like
// it would leave the parser off its tab, and send the line to the general parser).
TEST(DataValueLineParserIdTest, ConsecutiveLinesEachMapTheirOwnIds) {
  const int64_t ids[] = {1,
                         12,
                         123,
                         21,
                         1234567,
                         12345678,
                         2,
                         1000000,
                         7654321,
                         123456789,
                         12345678901,
                         123456789012345,
                         12345678902,
                         1234567890123456,
                         923456789012345,
                         100000000};
  ExportScope scope;
  IdentifierMap* maps[5] = {&scope.data_elements, &scope.periods, &scope.org_units,
                            &scope.category_option_combos, &scope.attribute_option_combos};
  for (int column = 0; column < 5; ++column) {
    for (int64_t id : ids) (*maps[column])[id] = std::to_string(column) + ":" + std::to_string(id);
  }
  const IdentifierTables tables(scope);
  DataValueLineParser parser(&tables);
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    int64_t line_ids[5];
    std::string line;
    for (int64_t& id : line_ids) {
      id = ids[rng() % std::size(ids)];
      line += std::to_string(id) + '\t';
    }
    line += "1\tadmin\t2024-01-12 10:00:00\t2024-01-12 10:00:00\t\\N\tf\tf\n";
    encode::DataValueRow row;
    ASSERT_TRUE(parser.Parse(line, &row).ok()) << line;
    const encode::Text* texts[5] = {&row.data_element, &row.period, &row.org_unit,
                                    &row.category_option_combo, &row.attribute_option_combo};
    for (int column = 0; column < 5; ++column) {
      ASSERT_EQ(texts[column]->bytes,
                std::to_string(column) + ":" + std::to_string(line_ids[column]))
          << line;
    }
  }
  EXPECT_EQ(parser.general_lines(), 0);
}

TEST_F(DataValueLineParserTest, AnIdOutsideTheScopeIsInternal) {
  std::string line = Line("1");
  line[0] = '9';
  EXPECT_EQ(Parse(line).code(), absl::StatusCode::kInternal);
}

TEST(ParseCopyTimestampTest, FractionalDigitsZeroToSix) {
  const std::pair<const char*, int64_t> cases[] = {
      {"1970-01-01 00:00:00", 0},
      {"1970-01-01 00:00:00.5", 500000},
      {"1970-01-01 00:00:00.05", 50000},
      {"1970-01-01 00:00:00.123", 123000},
      {"1970-01-01 00:00:00.1234", 123400},
      {"1970-01-01 00:00:00.12345", 123450},
      {"1970-01-01 00:00:00.123456", 123456},
  };
  for (const auto& [text, micros] : cases) {
    int64_t parsed = -1;
    ASSERT_TRUE(ParseCopyTimestamp(text, &parsed).ok()) << text;
    EXPECT_EQ(parsed, micros) << text;
  }
}

TEST(ParseCopyTimestampTest, BeforeNineteenSeventyAndBeforeChrist) {
  int64_t micros = 0;
  ASSERT_TRUE(ParseCopyTimestamp("1969-12-31 23:59:59.999999", &micros).ok());
  EXPECT_EQ(micros, -1);
  ASSERT_TRUE(ParseCopyTimestamp("0001-01-01 00:00:00", &micros).ok());
  EXPECT_EQ(micros, -62135596800000000);
  // 1 BC is the year before AD 1, and a leap year.
  ASSERT_TRUE(ParseCopyTimestamp("0001-12-31 23:59:59 BC", &micros).ok());
  EXPECT_EQ(micros, -62135596800000000 - 1000000);
  ASSERT_TRUE(ParseCopyTimestamp("0001-01-01 00:00:00 BC", &micros).ok());
  EXPECT_EQ(micros, -62135596800000000 - int64_t{366} * 86400 * 1000000);
  ASSERT_TRUE(ParseCopyTimestamp("4713-11-24 00:00:00 BC", &micros).ok());
}

TEST(ParseCopyTimestampTest, YearsAfterNineThousandNineHundredNinetyNine) {
  int64_t micros = 0;
  ASSERT_TRUE(ParseCopyTimestamp("9999-12-31 23:59:59.999999", &micros).ok());
  EXPECT_EQ(micros, 253402300799999999);
  ASSERT_TRUE(ParseCopyTimestamp("10000-01-01 00:00:00", &micros).ok());
  EXPECT_EQ(micros, 253402300800000000);
  ASSERT_TRUE(ParseCopyTimestamp("292277-01-01 00:00:00", &micros).ok());
  // PostgreSQL's last timestamp is past what microseconds since 1970 hold in 64 bits.
  EXPECT_EQ(ParseCopyTimestamp("294276-12-31 23:59:59.999999", &micros).code(),
            absl::StatusCode::kDataLoss);
}

TEST(ParseCopyTimestampTest, InfinityIsAClearError) {
  int64_t micros = 0;
  for (const char* text : {"infinity", "-infinity"}) {
    absl::Status status = ParseCopyTimestamp(text, &micros);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(status.message().find(text), std::string_view::npos) << status;
  }
}

TEST(SplitCopyTextLineTest, FieldsWithoutBackslashPointIntoTheLine) {
  const std::string line = "a\tb\\tc\t\\N\n";
  CopyTextField fields[3];
  std::string scratch;
  ASSERT_TRUE(SplitCopyTextLine(line, 3, fields, &scratch).ok());
  EXPECT_EQ(fields[0].text.data(), line.data());
  EXPECT_EQ(fields[1].text, "b\tc");
  EXPECT_EQ(fields[1].text.data(), scratch.data());
  EXPECT_TRUE(fields[2].is_null);
}

}  // namespace
}  // namespace dvexport::db

namespace dvexport::db {
namespace {

// Every id of the map is found, pointing at its own identifier, and no other id is: for ids
// that collide in the table (multiples of a power of two), random and negative ones, 0, and
// maps of every size up to a few thousand. Each identifier is the map's text, plain if it is.
TEST(IdentifierTableTest, FindsEveryIdOfTheMapAndNoOther) {
  std::mt19937_64 rng(3);
  for (size_t size : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{100},
                      size_t{4096}, size_t{5000}}) {
    IdentifierMap map;
    for (size_t i = 0; map.size() < size; ++i) {
      int64_t id;
      switch (i % 4) {
        case 0:
          id = static_cast<int64_t>(i) << 20;
          break;
        case 1:
          id = -static_cast<int64_t>(rng() >> 1);
          break;
        default:
          id = static_cast<int64_t>(rng() % 1000000);
      }
      if (i % 5 == 0) {
        map[id] = std::nullopt;
      } else {
        map[id] = (i % 3 == 0 ? "id," : "id") + std::to_string(id);  // plain or not
      }
    }
    const IdentifierTable table(map);
    for (const auto& [id, identifier] : map) {
      const encode::Text* found = table.Find(id);
      ASSERT_NE(found, nullptr) << id << " in a map of " << size;
      ASSERT_EQ(found->is_null, !identifier.has_value()) << id;
      if (identifier) {
        ASSERT_EQ(found->bytes.data(), identifier->data()) << id << ": a view of the map's text";
        ASSERT_EQ(found->bytes.size(), identifier->size());
      }
      ASSERT_EQ(found->plain, identifier && encode::IsPlainText(*identifier));
    }
    for (int i = 0; i < 20000; ++i) {
      const int64_t id =
          i % 2 == 0 ? static_cast<int64_t>(rng()) : static_cast<int64_t>(rng() % 2000000);
      if (map.contains(id)) continue;
      ASSERT_EQ(table.Find(id), nullptr) << id << " in a map of " << size;
    }
  }
}

}  // namespace
}  // namespace dvexport::db
