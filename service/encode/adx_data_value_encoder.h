#ifndef DVEXPORT_SERVICE_ENCODE_ADX_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_ADX_DATA_VALUE_ENCODER_H_

#include <string>
#include <string_view>
#include <vector>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"

namespace dvexport::encode {

// One disaggregation of an option combo: the category's identifier (an attribute name, which
// the caller has checked is an XML Name, dhis2::IsXmlName) and its option's identifier.
struct AdxAttribute {
  std::string name;
  std::string value;
};

// A group's attributes: data set, period in ADX form (2024-01-01/P1M), org unit and the
// attribute option combo's categories (none for the default combo). A null text has no
// attribute. "*attributes" is only read during the call.
struct AdxGroup {
  Text data_set, period, org_unit;
  const std::vector<AdxAttribute>* attributes = nullptr;
};

// One value of a group: data element, the category option combo's categories, the value, and
// whether the data element's value type is numeric.
struct AdxValue {
  Text data_element;
  const std::vector<AdxAttribute>* categories = nullptr;
  Text value;
  bool numeric = true;
};

// Writes an ADX document as DHIS2 2.42's ADX export does (DefaultAdxDataService on staxwax and
// Woodstox), in one line, without an XML declaration:
//
//   <adx xmlns="urn:ihe:qrph:adx:2015"><group dataSet="DS_RH" period="2024-01-01/P1M"
//   orgUnit="OU_525" FUNDING_PARTNER="CO_PARTNER_A"><dataValue dataElement="DE_1" SEX="CO_MALE"
//   value="12"/><dataValue dataElement="DE_2" value="0"><annotation>text</annotation>
//   </dataValue></group></adx>
//
// Group attributes: dataSet, period, orgUnit, then the attribute option combo's categories in
// the combo's order. Value attributes: dataElement, the categories, value. A numeric value is
// the value attribute itself (none when null); any other is value="0" and the text as the
// element's annotation (empty when null, as DHIS2's staxwax writes null). Attribute values are
// escaped by WriteXmlAttributeEscaped (xml_attribute.h), the annotation by WriteXmlTextEscaped
// (xml_text.h), both as Woodstox escapes them, so the output always parses. A document without
// groups is <adx xmlns="urn:ihe:qrph:adx:2015"/>.
//
// A start tag is closed by what follows it, as in XmlDataValueEncoder.
//
// The encoder appends to "*out" and never reads or clears it. Each call makes one capacity
// check; it does not allocate otherwise.
//
// Usage: Begin(), then for each group StartGroup() and at least one Add(), EndGroup(); End().
class AdxDataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit AdxDataValueEncoder(ChunkBuffer* out) : out_(out) {}

  AdxDataValueEncoder(const AdxDataValueEncoder&) = delete;
  AdxDataValueEncoder& operator=(const AdxDataValueEncoder&) = delete;

  void Begin();
  void StartGroup(const AdxGroup& group);
  void Add(const AdxValue& value);
  void EndGroup();
  void End();

 private:
  ChunkBuffer* const out_;
  bool groups_written_ = false;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_ADX_DATA_VALUE_ENCODER_H_
