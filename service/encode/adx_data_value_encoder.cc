#include "service/encode/adx_data_value_encoder.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "service/encode/xml_attribute.h"
#include "service/encode/xml_text.h"

namespace dvexport::encode {
namespace {

constexpr std::string_view kDocumentStart = "<adx xmlns=\"urn:ihe:qrph:adx:2015\"";
constexpr std::string_view kEmptyDocumentEnd = "/>";
constexpr std::string_view kDocumentEnd = "></adx>";
constexpr std::string_view kGroupStart = "><group";
constexpr std::string_view kGroupEnd = "></group";
constexpr std::string_view kDataSet = " dataSet=\"";
constexpr std::string_view kPeriod = " period=\"";
constexpr std::string_view kOrgUnit = " orgUnit=\"";
constexpr std::string_view kValueStart = "><dataValue";
constexpr std::string_view kDataElement = " dataElement=\"";
constexpr std::string_view kValue = " value=\"";
constexpr std::string_view kEmptyValueEnd = "/";
constexpr std::string_view kAnnotationStart = " value=\"0\"><annotation>";
constexpr std::string_view kAnnotationEnd = "</annotation></dataValue";

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

inline size_t TextBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

// Writes `<name>"<escaped>"` ("name" is ` key="`), or nothing for a null "text".
inline char* WriteAttribute(char* p, std::string_view name, const Text& text) {
  if (text.is_null) return p;
  p = WriteLiteral(p, name);
  p = WriteXmlAttributeEscaped(p, text.bytes);
  *p++ = '"';
  return p;
}

// The bytes WriteAttributes writes at most.
size_t AttributesBytes(const std::vector<AdxAttribute>* attributes) {
  if (attributes == nullptr) return 0;
  size_t bytes = 0;
  for (const AdxAttribute& a : *attributes) {
    bytes += 4 + a.name.size() + kMaxXmlEscapedBytesPerInputByte * a.value.size();
  }
  return bytes;
}

// ` name="value"` for each attribute.
char* WriteAttributes(char* p, const std::vector<AdxAttribute>* attributes) {
  if (attributes == nullptr) return p;
  for (const AdxAttribute& a : *attributes) {
    *p++ = ' ';
    p = WriteLiteral(p, a.name);
    *p++ = '=';
    *p++ = '"';
    p = WriteXmlAttributeEscaped(p, a.value);
    *p++ = '"';
  }
  return p;
}

}  // namespace

void AdxDataValueEncoder::Begin() {
  groups_written_ = false;
  out_->Append(kDocumentStart);
}

void AdxDataValueEncoder::StartGroup(const AdxGroup& group) {
  groups_written_ = true;
  const size_t max_size =
      kGroupStart.size() + kDataSet.size() + kPeriod.size() + kOrgUnit.size() + 3 +
      kMaxXmlEscapedBytesPerInputByte *
          (TextBytes(group.data_set) + TextBytes(group.period) + TextBytes(group.org_unit)) +
      AttributesBytes(group.attributes);
  char* const start = out_->Reserve(max_size);
  char* p = WriteLiteral(start, kGroupStart);
  p = WriteAttribute(p, kDataSet, group.data_set);
  p = WriteAttribute(p, kPeriod, group.period);
  p = WriteAttribute(p, kOrgUnit, group.org_unit);
  p = WriteAttributes(p, group.attributes);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void AdxDataValueEncoder::Add(const AdxValue& value) {
  const size_t max_size =
      kValueStart.size() + kDataElement.size() + 1 + AttributesBytes(value.categories) +
      kAnnotationStart.size() + kAnnotationEnd.size() + kValue.size() + 1 + kEmptyValueEnd.size() +
      kMaxXmlEscapedBytesPerInputByte * TextBytes(value.data_element) +
      std::max(kMaxXmlEscapedBytesPerInputByte, kMaxXmlTextEscapedBytesPerInputByte) *
          TextBytes(value.value);
  char* const start = out_->Reserve(max_size);
  char* p = WriteLiteral(start, kValueStart);
  p = WriteAttribute(p, kDataElement, value.data_element);
  p = WriteAttributes(p, value.categories);
  if (value.numeric) {
    p = WriteAttribute(p, kValue, value.value);
    p = WriteLiteral(p, kEmptyValueEnd);
  } else {
    p = WriteLiteral(p, kAnnotationStart);
    if (!value.value.is_null) p = WriteXmlTextEscaped(p, value.value.bytes);
    p = WriteLiteral(p, kAnnotationEnd);
  }
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void AdxDataValueEncoder::EndGroup() { out_->Append(kGroupEnd); }

void AdxDataValueEncoder::End() {
  out_->Append(groups_written_ ? kDocumentEnd : kEmptyDocumentEnd);
}

}  // namespace dvexport::encode
