// The checkers used by the randomized tests must themselves reject what they are meant to catch.

#include "gtest/gtest.h"
#include "tests/encode/rfc4180_parser.h"
#include "tests/encode/strict_json_parser.h"
#include "tests/encode/unicode_reference.h"

namespace dvexport::encode::test_support {
namespace {

TEST(EncodeTestSupportTest, StrictJsonParserAcceptsValidDocuments) {
  auto parsed = ParseJsonStrictly(R"( {"a":[null,true,false,-1.5e3,"x\u00e9\uD83D\uDE00\/"]} )");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const JsonValue& array = parsed->members[0].second;
  ASSERT_EQ(array.elements.size(), 5u);
  EXPECT_TRUE(array.elements[1].boolean);
  EXPECT_FALSE(array.elements[2].boolean);
  EXPECT_EQ(array.elements[3].text, "-1.5e3");
  EXPECT_EQ(array.elements[4].text, "x\xC3\xA9\xF0\x9F\x98\x80/");
}

TEST(EncodeTestSupportTest, StrictJsonParserRejectsInvalidDocuments) {
  for (std::string_view bad :
       {std::string_view("\"raw\x01control\""), std::string_view("\"raw\nnewline\""),
        std::string_view("\"bad\xFFutf8\""), std::string_view("\"\xED\xA0\x80\""),
        std::string_view(R"("\uD83D")"), std::string_view(R"("\uDE00\uD83D")"),
        std::string_view(R"("\x")"), std::string_view(R"({"a":1,"a":2})"),
        std::string_view(R"([1,])"), std::string_view(R"({"a":1} x)"), std::string_view(R"(01)"),
        std::string_view(R"("unterminated)"), std::string_view(""),
        std::string_view(R"({"a" 1})")}) {
    EXPECT_FALSE(ParseJsonStrictly(bad).ok()) << bad;
  }
}

TEST(EncodeTestSupportTest, Rfc4180ParserParsesQuotedAndUnquotedFields) {
  auto records = ParseCsvStrictly("a,\"b\"\"c\",,\"d,\ne\"\n\"\",x\n");
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  ASSERT_EQ((*records)[0].size(), 4u);
  EXPECT_EQ((*records)[0][1].value, "b\"c");
  EXPECT_TRUE((*records)[0][1].quoted);
  EXPECT_EQ((*records)[0][2].value, "");
  EXPECT_FALSE((*records)[0][2].quoted);
  EXPECT_EQ((*records)[0][3].value, "d,\ne");
  EXPECT_TRUE((*records)[1][0].quoted);
  EXPECT_EQ((*records)[1][0].value, "");
}

TEST(EncodeTestSupportTest, Rfc4180ParserRejectsMalformedCsv) {
  for (std::string_view bad : {"a\"b\n", "\"a\"b\n", "\"a\n", "a,b", "a\rb\n", "\"a\"\"\n"}) {
    EXPECT_FALSE(ParseCsvStrictly(bad).ok()) << bad;
  }
}

TEST(EncodeTestSupportTest, ReferenceReplacementFollowsUnicodeTable3_8) {
  EXPECT_EQ(ReplaceIllFormedUtf8("a\xF1\x80\x80\xE1\x80\xC2"
                                 "b\x80"
                                 "c\x80\xBF"
                                 "d"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD"
            "d");
  EXPECT_EQ(ReplaceIllFormedUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ReplaceIllFormedUtf8("\xF0\x9F\x98\x80\xF0\x9F\x98"), "\xF0\x9F\x98\x80\xEF\xBF\xBD");
  EXPECT_FALSE(IsWellFormedUtf8("\xC0\x80"));
  EXPECT_FALSE(IsWellFormedUtf8("\xF4\x90\x80\x80"));
  EXPECT_TRUE(IsWellFormedUtf8("\xF4\x8F\xBF\xBF"));
}

}  // namespace
}  // namespace dvexport::encode::test_support
