#include "service/encode/xml_data_value_encoder.h"

#include <cassert>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "common/plain_copy.h"
#include "service/encode/long_gmt_date.h"
#include "service/encode/xml_attribute.h"

namespace dvexport::encode {

namespace {

constexpr std::string_view kDocumentStart =
    "<?xml version='1.0' encoding='UTF-8'?>"
    "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\"";
constexpr std::string_view kEmptyDocumentEnd = "/>";
constexpr std::string_view kDocumentEnd = "></dataValueSet>";

constexpr std::string_view kHeaderDataSet = " dataSet=\"";
constexpr std::string_view kHeaderCompleteDate = " completeDate=\"";
constexpr std::string_view kHeaderPeriod = " period=\"";
constexpr std::string_view kHeaderOrgUnit = " orgUnit=\"";

constexpr std::string_view kDataElement = "><dataValue dataElement=\"";
constexpr std::string_view kPeriod = " period=\"";
constexpr std::string_view kOrgUnit = " orgUnit=\"";
constexpr std::string_view kCategoryOptionCombo = " categoryOptionCombo=\"";
constexpr std::string_view kAttributeOptionCombo = " attributeOptionCombo=\"";
constexpr std::string_view kValue = " value=\"";
constexpr std::string_view kStoredBy = " storedBy=\"";
constexpr std::string_view kCreated = " created=\"";
constexpr std::string_view kLastUpdated = " lastUpdated=\"";
constexpr std::string_view kComment = " comment=\"";
constexpr std::string_view kFollowUpTrue = " followUp=\"true\"";
constexpr std::string_view kFollowUpFalse = " followUp=\"false\"";
constexpr std::string_view kDeleted = " deleted=\"true\"";
// A value without data element starts here instead (its element name, then the next attribute).
constexpr std::string_view kValueStart = "><dataValue";
constexpr std::string_view kValueEnd = "/";

// Everything in a row but the attribute values, at its longest.
constexpr size_t kMaxRowOverhead =
    kDataElement.size() + 1 + kPeriod.size() + 1 + kOrgUnit.size() + 1 +
    kCategoryOptionCombo.size() + 1 + kAttributeOptionCombo.size() + 1 + kValue.size() + 1 +
    kStoredBy.size() + 1 + kCreated.size() + 1 + kLastUpdated.size() + 1 + kComment.size() + 1 +
    kFollowUpFalse.size() + kDeleted.size() + kValueEnd.size() + 2 * kMaxLongGmtDateLength;

constexpr size_t kMaxHeaderOverhead = kHeaderDataSet.size() + 1 + kHeaderCompleteDate.size() + 1 +
                                      kMaxLongGmtDateLength + kHeaderPeriod.size() + 1 +
                                      kHeaderOrgUnit.size() + 1;

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

// Writes `<name>"<escaped>"` ("name" is ` key="`), or nothing for a null "text".
// REQUIRES: name.size() + 1 + kMaxXmlEscapedBytesPerInputByte * text.bytes.size() writable.
inline char* WriteAttribute(char* p, std::string_view name, const Text& text) {
  if (text.is_null) return p;
  p = WriteLiteral(p, name);
  p = text.plain ? common::CopyPlain(text.bytes, p) : WriteXmlAttributeEscaped(p, text.bytes);
  *p++ = '"';
  return p;
}

inline size_t TextBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

}  // namespace

void XmlDataValueEncoder::Begin(const DataValueSetHeader* header) {
  values_written_ = false;
  out_->Append(kDocumentStart);
  if (header == nullptr) return;
  const size_t max_size =
      kMaxHeaderOverhead +
      kMaxXmlEscapedBytesPerInputByte *
          (TextBytes(header->data_set) + TextBytes(header->period) + TextBytes(header->org_unit));
  char* const start = out_->Reserve(max_size);
  char* p = WriteAttribute(start, kHeaderDataSet, header->data_set);
  if (header->complete_date_micros.has_value()) {
    p = WriteLiteral(p, kHeaderCompleteDate);
    p += dates_.Format(*header->complete_date_micros, p);
    *p++ = '"';
  }
  p = WriteAttribute(p, kHeaderPeriod, header->period);
  p = WriteAttribute(p, kHeaderOrgUnit, header->org_unit);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void XmlDataValueEncoder::Add(const DataValueRow& row) {
  const size_t text_bytes = TextBytes(row.data_element) + TextBytes(row.period) +
                            TextBytes(row.org_unit) + TextBytes(row.category_option_combo) +
                            TextBytes(row.attribute_option_combo) + TextBytes(row.value) +
                            TextBytes(row.stored_by) + TextBytes(row.comment);
  const size_t max_size = kMaxRowOverhead + kMaxXmlEscapedBytesPerInputByte * text_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = start;
  values_written_ = true;
  if (row.data_element.is_null) {
    p = WriteLiteral(p, kValueStart);
  } else {
    p = WriteAttribute(p, kDataElement, row.data_element);
  }
  p = WriteAttribute(p, kPeriod, row.period);
  p = WriteAttribute(p, kOrgUnit, row.org_unit);
  p = WriteAttribute(p, kCategoryOptionCombo, row.category_option_combo);
  p = WriteAttribute(p, kAttributeOptionCombo, row.attribute_option_combo);
  p = WriteAttribute(p, kValue, row.value);
  p = WriteAttribute(p, kStoredBy, row.stored_by);
  p = WriteLiteral(p, kCreated);
  p += dates_.Format(row.created, p);
  *p++ = '"';
  p = WriteLiteral(p, kLastUpdated);
  p += dates_.Format(row.last_updated, p);
  *p++ = '"';
  p = WriteAttribute(p, kComment, row.comment);
  // Two calls, not one with a chosen literal: each copies a constant number of bytes.
  if (row.followup) {
    p = WriteLiteral(p, kFollowUpTrue);
  } else {
    p = WriteLiteral(p, kFollowUpFalse);
  }
  if (row.deleted) p = WriteLiteral(p, kDeleted);
  p = WriteLiteral(p, kValueEnd);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void XmlDataValueEncoder::End() {
  out_->Append(values_written_ ? kDocumentEnd : kEmptyDocumentEnd);
}

}  // namespace dvexport::encode
