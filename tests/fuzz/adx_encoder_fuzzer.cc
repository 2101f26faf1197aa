// libFuzzer target: arbitrary bytes as every text of an ADX document (group and value
// attributes, category option values, the annotation of a non-numeric value, where "]]>" must
// be escaped too). expat must accept each document and give back the input with ill-formed
// UTF-8 and the characters XML 1.0 cannot carry replaced by U+FFFD (unicode_reference.h).

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "service/encode/adx_data_value_encoder.h"
#include "service/encode/chunk_buffer.h"
#include "tests/encode/unicode_reference.h"
#include "tests/support/strict_xml_parser.h"

namespace {

using dvexport::encode::AdxAttribute;
using dvexport::encode::Text;
namespace ts = dvexport::encode::test_support;

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const bool numeric = in.ConsumeBool();
  const std::string text = in.ConsumeRemainingBytesAsString();
  const std::string expected = ts::ReplaceNonXmlCharacters(text);

  const std::vector<AdxAttribute> categories = {{"SEX", text}, {"AGE", text}};
  const Text t{text, false};
  dvexport::encode::ChunkBuffer buffer(0);
  dvexport::encode::AdxDataValueEncoder encoder(&buffer);
  encoder.Begin();
  encoder.StartGroup(dvexport::encode::AdxGroup{t, t, t, &categories});
  encoder.Add(dvexport::encode::AdxValue{t, &categories, t, numeric});
  encoder.EndGroup();
  encoder.End();
  auto document = dvexport::test_support::ParseXmlStrictly(buffer.view());
  Check(document.ok());
  Check(document->root.children.size() == 1);
  const auto& group = document->root.children[0];
  for (const char* name : {"dataSet", "period", "orgUnit", "SEX", "AGE"}) {
    Check(group.Attribute(name) != nullptr && *group.Attribute(name) == expected);
  }
  Check(group.children.size() == 1);
  const auto& value = group.children[0];
  for (const char* name : {"dataElement", "SEX", "AGE"}) {
    Check(value.Attribute(name) != nullptr && *value.Attribute(name) == expected);
  }
  if (numeric) {
    Check(*value.Attribute("value") == expected && value.children.empty());
  } else {
    Check(*value.Attribute("value") == "0" && value.children.size() == 1);
    Check(value.children[0].text == expected);
  }
  return 0;
}
