#include "service/encode/adx_data_value_encoder.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport::encode {
namespace {

using dvexport::test_support::ParseXmlStrictly;

Text T(std::string_view bytes) { return Text{bytes, false}; }
const Text kNullText{{}, true};

TEST(AdxDataValueEncoderTest, WritesDhisDocumentWithGroupsAndDisaggregations) {
  const std::vector<AdxAttribute> partner = {{"FUNDING_PARTNER", "CO_PARTNER_A"}};
  const std::vector<AdxAttribute> sex_age = {{"SEX", "CO_MALE"}, {"AGE", "CO_UNDER_5"}};
  const std::vector<AdxAttribute> none;
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.StartGroup(AdxGroup{T("DS_RH"), T("2024-01-01/P1M"), T("OU_525"), &partner});
  encoder.Add(AdxValue{T("DE_1"), &sex_age, T("12"), true});
  encoder.Add(AdxValue{T("DE_2"), &none, T("Stock out"), false});
  encoder.EndGroup();
  encoder.StartGroup(AdxGroup{T("DS_RH"), T("2024-02-01/P1M"), kNullText, &none});
  encoder.Add(AdxValue{kNullText, &none, kNullText, true});
  encoder.Add(AdxValue{T("DE_3"), &none, kNullText, false});
  encoder.EndGroup();
  encoder.End();
  EXPECT_EQ(buffer.view(),
            R"(<adx xmlns="urn:ihe:qrph:adx:2015">)"
            R"(<group dataSet="DS_RH" period="2024-01-01/P1M" orgUnit="OU_525" )"
            R"(FUNDING_PARTNER="CO_PARTNER_A">)"
            R"(<dataValue dataElement="DE_1" SEX="CO_MALE" AGE="CO_UNDER_5" value="12"/>)"
            R"(<dataValue dataElement="DE_2" value="0"><annotation>Stock out</annotation>)"
            R"(</dataValue></group>)"
            R"(<group dataSet="DS_RH" period="2024-02-01/P1M"><dataValue/>)"
            R"(<dataValue dataElement="DE_3" value="0"><annotation></annotation></dataValue>)"
            R"(</group></adx>)");
  EXPECT_TRUE(ParseXmlStrictly(buffer.view()).ok());
}

TEST(AdxDataValueEncoderTest, DocumentWithoutGroupsIsEmptyRoot) {
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.End();
  EXPECT_EQ(buffer.view(), R"(<adx xmlns="urn:ihe:qrph:adx:2015"/>)");
}

TEST(AdxDataValueEncoderTest, EscapesAttributesAndAnnotationSoThatTheyParseBack) {
  const std::vector<AdxAttribute> category = {{"LOCATION", "a\"b&c<d>e\tf"}};
  const std::string text = "x ]]> y ]]]> <&> \r\n\t \x01 end";
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.StartGroup(AdxGroup{T("D\"S"), T("2024-01-01/P1D"), T("<ou>"), &category});
  encoder.Add(AdxValue{T("de&"), &category, T(text), false});
  encoder.EndGroup();
  encoder.End();
  EXPECT_NE(buffer.view().find("x ]]&gt; y ]]]&gt; &lt;&amp;> &#xd;\n\t \xEF\xBF\xBD end"),
            std::string_view::npos)
      << buffer.view();
  auto parsed = ParseXmlStrictly(buffer.view());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& group = parsed->root.children.at(0);
  EXPECT_EQ(*group.Attribute("dataSet"), "D\"S");
  EXPECT_EQ(*group.Attribute("orgUnit"), "<ou>");
  EXPECT_EQ(*group.Attribute("LOCATION"), "a\"b&c<d>e\tf");
  const auto& value = group.children.at(0);
  EXPECT_EQ(*value.Attribute("dataElement"), "de&");
  EXPECT_EQ(*value.Attribute("value"), "0");
  EXPECT_EQ(value.children.at(0).text, "x ]]> y ]]]> <&> \r\n\t \xEF\xBF\xBD end");
}

// The annotation as Woodstox's BufferingXmlWriter.writeCharacters writes it (DHIS2 2.42's
// writeCharacters(dv.getValue())): CR as &#xd; (P_OUTPUT_ESCAPE_CR, on by default), '>' escaped
// first in the text and after ']', DEL and U+0080..U+009F as character references, tab, LF and
// quotes raw.
TEST(AdxDataValueEncoderTest, EscapesTheAnnotationAsWoodstoxDoes) {
  const std::pair<std::string, std::string> kCases[] = {
      {"a\r\nb\rc", "a&#xd;\nb&#xd;c"},
      {">a>b]>c]]>d", "&gt;a>b]&gt;c]]&gt;d"},
      {"\"q\" 'a' \t", "\"q\" 'a' \t"},
      {"del\x7f c1\xc2\x80\xc2\x85\xc2\x9f nbsp\xc2\xa0",
       "del&#x7f; c1&#x80;&#x85;&#x9f; nbsp\xc2\xa0"},
      {"\xef\xbf\xbe \x01 \xff \xf0\x9f\x98\x80",
       "\xEF\xBF\xBD \xEF\xBF\xBD \xEF\xBF\xBD \xf0\x9f\x98\x80"},
      {"plain text of more than sixteen bytes", "plain text of more than sixteen bytes"},
  };
  for (const auto& [text, escaped] : kCases) {
    ChunkBuffer buffer(16);
    AdxDataValueEncoder encoder(&buffer);
    encoder.Begin();
    encoder.StartGroup(AdxGroup{T("DS"), T("2024-01-01/P1D"), T("OU"), nullptr});
    encoder.Add(AdxValue{T("DE"), nullptr, T(text), false});
    encoder.EndGroup();
    encoder.End();
    EXPECT_NE(buffer.view().find("<annotation>" + escaped + "</annotation>"),
              std::string_view::npos)
        << buffer.view();
    auto parsed = ParseXmlStrictly(buffer.view());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    if (text.find('\r') != std::string::npos) {
      EXPECT_EQ(parsed->root.children.at(0).children.at(0).children.at(0).text, text)
          << "a CR reads back as a CR";
    }
  }
}

}  // namespace
}  // namespace dvexport::encode
