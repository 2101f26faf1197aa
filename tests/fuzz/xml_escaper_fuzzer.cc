// libFuzzer target: arbitrary bytes through the XML attribute escaper, alone and as every text
// field of a data value of the XML encoder, and through the XML text escaper (ADX annotations).
// expat must accept each document, and each attribute and text must give back the input with
// ill-formed UTF-8 and the characters XML 1.0 cannot carry replaced by U+FFFD
// (unicode_reference.h), exactly as randomized_encoder_test checks. The escaped bytes must stay
// within kMaxXmlEscapedBytesPerInputByte (kMaxXmlTextEscapedBytesPerInputByte) per input byte.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "service/encode/chunk_buffer.h"
#include "service/encode/xml_attribute.h"
#include "service/encode/xml_data_value_encoder.h"
#include "service/encode/xml_text.h"
#include "tests/encode/unicode_reference.h"
#include "tests/support/strict_xml_parser.h"

namespace {

using dvexport::encode::DataValueRow;
using dvexport::encode::Text;
namespace ts = dvexport::encode::test_support;

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const bool null_comment = in.ConsumeBool();
  const std::string text = in.ConsumeRemainingBytesAsString();
  const std::string expected = ts::ReplaceNonXmlCharacters(text);

  // The escaper alone, into a buffer of exactly its worst case.
  std::string escaped(dvexport::encode::kMaxXmlEscapedBytesPerInputByte * text.size(), '\0');
  const char* end = dvexport::encode::WriteXmlAttributeEscaped(escaped.data(), text);
  escaped.resize(static_cast<size_t>(end - escaped.data()));
  auto parsed = dvexport::test_support::ParseXmlStrictly("<a v=\"" + escaped + "\"/>");
  Check(parsed.ok());
  Check(*parsed->root.Attribute("v") == expected);

  // The text escaper alone, likewise.
  std::string text_escaped(dvexport::encode::kMaxXmlTextEscapedBytesPerInputByte * text.size(),
                           '\0');
  end = dvexport::encode::WriteXmlTextEscaped(text_escaped.data(), text);
  text_escaped.resize(static_cast<size_t>(end - text_escaped.data()));
  Check(text_escaped.find("]]>") == std::string::npos);
  auto parsed_text = dvexport::test_support::ParseXmlStrictly("<a>" + text_escaped + "</a>");
  Check(parsed_text.ok());
  Check(parsed_text->root.text == expected);

  // The encoder: the text in every field (the comment possibly null).
  DataValueRow row;
  row.data_element = row.period = row.org_unit = row.category_option_combo = Text{text, false};
  row.attribute_option_combo = row.value = row.stored_by = Text{text, false};
  row.comment = Text{text, null_comment};
  dvexport::encode::ChunkBuffer buffer(0);
  dvexport::encode::XmlDataValueEncoder encoder(&buffer);
  encoder.Begin(nullptr);
  encoder.Add(row);
  encoder.End();
  auto document = dvexport::test_support::ParseXmlStrictly(buffer.view());
  Check(document.ok());
  Check(document->root.children.size() == 1);
  const auto& value = document->root.children[0];
  for (const char* name : {"dataElement", "period", "orgUnit", "categoryOptionCombo",
                           "attributeOptionCombo", "value", "storedBy"}) {
    Check(value.Attribute(name) != nullptr && *value.Attribute(name) == expected);
  }
  Check(null_comment ? value.Attribute("comment") == nullptr
                     : *value.Attribute("comment") == expected);
  return 0;
}
