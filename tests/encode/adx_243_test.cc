// DHIS2 2.43's ADX bytes (DataExportOutput.toXml(Stream<DataExportGroup.Output>, ...), reference
// §7.4) are those AdxDataValueEncoder writes: the same staxwax and Woodstox, no XML declaration,
// the same <group> and <dataValue> shapes. What changed in 2.43 is which groups there are (a new
// group whenever period, org unit or attribute option combo changes) and which attributes they
// carry, both the caller's: these tests drive the encoder the way a 2.43 export does.

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "service/encode/adx_data_value_encoder.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport::encode {
namespace {

using dvexport::test_support::ParseXmlStrictly;

Text T(std::string_view bytes) { return Text{bytes, false}; }
const Text kNullText{{}, true};

TEST(Adx243Test, WritesExportBOfDhis2sAdxIntegrationTest) {
  // dhis2-core 2.43.1 dhis-test-integration src/test/resources/adx/exportB.adx.xml, each line
  // trimmed and joined as AdxDataServiceIntegrationTest.testExport reads it
  // (testWriteDataValueSetB). The last two groups differ only in their attribute option combo
  // (mechanism): 2.43 splits groups on it.
  const std::vector<AdxAttribute> none;
  const std::vector<AdxAttribute> female_under5 = {{"sex", "F"}, {"age", "under5"}};
  const std::vector<AdxAttribute> male_over5 = {{"sex", "M"}, {"age", "over5"}};
  const std::vector<AdxAttribute> female_over5 = {{"sex", "F"}, {"age", "over5"}};
  const std::vector<AdxAttribute> mcdonalds = {{"mechanism", "McDonalds"}};
  const std::vector<AdxAttribute> pepfar = {{"mechanism", "PEPFAR"}};
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.StartGroup({T("Malaria DS"), T("2020-01-01/P1M"), T("P1233333333"), &none});
  encoder.Add({T("MalNummmmmm"), &female_under5, T("1"), true});
  encoder.EndGroup();
  encoder.StartGroup({T("Malaria DS"), T("2020-02-01/P1M"), T("P1233333333"), &none});
  encoder.Add({T("MalTexttttt"), &none, T("Some text"), false});
  encoder.EndGroup();
  encoder.StartGroup(
      {T("Malaria Mechanism DS"), T("2020-01-01/P1M"), T("D4566666666"), &mcdonalds});
  encoder.Add({T("MalNummmmmm"), &male_over5, T("2"), true});
  encoder.EndGroup();
  encoder.StartGroup({T("Malaria Mechanism DS"), T("2020-01-01/P1M"), T("D4566666666"), &pepfar});
  encoder.Add({T("MalNummmmmm"), &female_over5, T("3"), true});
  encoder.EndGroup();
  encoder.End();
  EXPECT_EQ(buffer.view(),
            R"(<adx xmlns="urn:ihe:qrph:adx:2015">)"
            R"(<group dataSet="Malaria DS" period="2020-01-01/P1M" orgUnit="P1233333333">)"
            R"(<dataValue dataElement="MalNummmmmm" sex="F" age="under5" value="1"/>)"
            R"(</group>)"
            R"(<group dataSet="Malaria DS" period="2020-02-01/P1M" orgUnit="P1233333333">)"
            R"(<dataValue dataElement="MalTexttttt" value="0">)"
            R"(<annotation>Some text</annotation>)"
            R"(</dataValue>)"
            R"(</group>)"
            R"(<group dataSet="Malaria Mechanism DS" period="2020-01-01/P1M" orgUnit="D4566666666")"
            R"( mechanism="McDonalds">)"
            R"(<dataValue dataElement="MalNummmmmm" sex="M" age="over5" value="2"/>)"
            R"(</group>)"
            R"(<group dataSet="Malaria Mechanism DS" period="2020-01-01/P1M" orgUnit="D4566666666")"
            R"( mechanism="PEPFAR">)"
            R"(<dataValue dataElement="MalNummmmmm" sex="F" age="over5" value="3"/>)"
            R"(</group>)"
            R"(</adx>)");
  EXPECT_TRUE(ParseXmlStrictly(buffer.view()).ok());
}

TEST(Adx243Test, WritesEmptyRootWithoutDeclarationForNoDataSet) {
  // Reference §7.4: no data set (or no values) gives <adx xmlns="urn:ihe:qrph:adx:2015"/>.
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.End();
  EXPECT_EQ(buffer.view(), R"(<adx xmlns="urn:ihe:qrph:adx:2015"/>)");
}

TEST(Adx243Test, WritesFoldedOptionCombosAsPlainAttributes) {
  // unfoldOptionCombos=false: DataExportOutput writes attributeOptionCombo on the group (after
  // orgUnit) and categoryOptionCombo on the value (after dataElement), in the places the
  // unfolded categories take, so they are passed as attributes with those names.
  const std::vector<AdxAttribute> aoc = {{"attributeOptionCombo", "MECH_A"}};
  const std::vector<AdxAttribute> coc = {{"categoryOptionCombo", "F_UNDER5"}};
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.StartGroup({T("DS"), T("2024-07-01/P1M"), T("OU"), &aoc});
  encoder.Add({T("DE"), &coc, T("7"), true});
  encoder.EndGroup();
  encoder.End();
  EXPECT_EQ(buffer.view(),
            R"(<adx xmlns="urn:ihe:qrph:adx:2015"><group dataSet="DS" period="2024-07-01/P1M")"
            R"( orgUnit="OU" attributeOptionCombo="MECH_A"><dataValue dataElement="DE")"
            R"( categoryOptionCombo="F_UNDER5" value="7"/></group></adx>)");
}

TEST(Adx243Test, WritesNullValuesAsStaxwaxDoes) {
  // A numeric null: writeAttribute(name, null) writes nothing. A text null: writeCharacters(null)
  // writes "", which closes the annotation's start tag.
  const std::vector<AdxAttribute> none;
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.StartGroup({T("DS"), T("2024-07-01/P1M"), T("OU"), &none});
  encoder.Add({T("NUM"), &none, kNullText, true});
  encoder.Add({T("TXT"), &none, kNullText, false});
  encoder.EndGroup();
  encoder.End();
  EXPECT_EQ(buffer.view(),
            R"(<adx xmlns="urn:ihe:qrph:adx:2015"><group dataSet="DS" period="2024-07-01/P1M")"
            R"( orgUnit="OU"><dataValue dataElement="NUM"/><dataValue dataElement="TXT")"
            R"( value="0"><annotation></annotation></dataValue></group></adx>)");
}

}  // namespace
}  // namespace dvexport::encode
