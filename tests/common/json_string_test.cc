#include "common/json_string.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace dvexport::common {
namespace {

using std::string_literals::operator""s;

TEST(JsonStringTest, CopiesPlainTextBetweenQuotes) {
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("fbfJHSPpUQD"), "\"fbfJHSPpUQD\"");
  EXPECT_EQ(JsonString("a/b \x7F \xC3\xA9 \xE2\x80\xA8"), "\"a/b \x7F \xC3\xA9 \xE2\x80\xA8\"");
}

TEST(JsonStringTest, EscapesAsJackson) {
  EXPECT_EQ(JsonString("\" \\"), R"("\" \\")");
  EXPECT_EQ(JsonString("\b\t\n\f\r"), R"("\b\t\n\f\r")");
  EXPECT_EQ(JsonString("\x01\x1F"s + '\0'), R"("\u0001\u001F\u0000")");
}

TEST(JsonStringTest, WritesCharactersBeyondTheBmpAsSurrogatePairs) {
  EXPECT_EQ(JsonString("\xF0\x9F\x98\x80"), R"("\uD83D\uDE00")");
}

TEST(JsonStringTest, ReplacesIllFormedUtf8) {
  EXPECT_EQ(JsonString("a\xFF"
                       "b"),
            "\"a\xEF\xBF\xBD"
            "b\"");
  EXPECT_EQ(JsonString("\xE2\x82"
                       "A"),
            "\"\xEF\xBF\xBD"
            "A\"");
  EXPECT_EQ(JsonString("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(JsonStringTest, EscapesInLongStringsAtEveryPosition) {
  // Strings longer than the 16-byte vectors, with the byte to escape at each position.
  for (size_t length : {15u, 16u, 17u, 33u, 64u}) {
    for (size_t at = 0; at < length; ++at) {
      std::string text(length, 'x');
      text[at] = '\n';
      std::string expected =
          "\"" + std::string(at, 'x') + "\\n" + std::string(length - at - 1, 'x') + "\"";
      EXPECT_EQ(JsonString(text), expected) << length << " " << at;
    }
  }
}

TEST(JsonStringTest, AppendsAfterWhatIsThere) {
  std::string out = "{\"key\":";
  AppendJsonString("v\"", &out);
  out.push_back('}');
  EXPECT_EQ(out, R"({"key":"v\""})");
}

TEST(JsonStringTest, WriteJsonEscapedStaysWithinItsBound) {
  const std::string worst(100, '\x01');
  std::string buffer(kMaxJsonEscapedBytesPerInputByte * worst.size(), '#');
  char* end = WriteJsonEscaped(buffer.data(), worst);
  EXPECT_EQ(static_cast<size_t>(end - buffer.data()), buffer.size());
  EXPECT_EQ(buffer.substr(0, 12), R"(\u0001\u0001)");
}

}  // namespace
}  // namespace dvexport::common
