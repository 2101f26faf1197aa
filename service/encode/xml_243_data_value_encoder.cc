#include "service/encode/xml_243_data_value_encoder.h"

#include <cassert>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string_view>

#include "common/plain_copy.h"
#include "service/encode/group_header.h"
#include "service/encode/long_gmt_date.h"
#include "service/encode/xml_attribute.h"

namespace dvexport::encode {
namespace {

constexpr std::string_view kDocumentStart =
    "<?xml version='1.0' encoding='UTF-8'?>"
    "<dataValueSet xmlns=\"http://dhis2.org/schema/dxf/2.0\"";
constexpr std::string_view kEmptyDocumentEnd = "/>";
constexpr std::string_view kDocumentEnd = "></dataValueSet>";

constexpr std::string_view kDataSet = " dataSet=\"";
constexpr std::string_view kPeriod = " period=\"";
constexpr std::string_view kOrgUnit = " orgUnit=\"";
constexpr std::string_view kAttributeOptionCombo = " attributeOptionCombo=\"";

constexpr std::string_view kValueStart = "><dataValue";
constexpr std::string_view kDataElement = " dataElement=\"";
constexpr std::string_view kCategoryOptionCombo = " categoryOptionCombo=\"";
constexpr std::string_view kValue = " value=\"";
constexpr std::string_view kStoredBy = " storedBy=\"";
constexpr std::string_view kCreated = " created=\"";
constexpr std::string_view kLastUpdated = " lastUpdated=\"";
constexpr std::string_view kComment = " comment=\"";
constexpr std::string_view kFollowUpTrue = " followUp=\"true\"";
constexpr std::string_view kDeleted = " deleted=\"true\"";
constexpr std::string_view kValueEnd = "/";

// Everything in a row but the attribute values, at its longest.
constexpr size_t kMaxRowOverhead =
    kValueStart.size() + kDataElement.size() + 1 + kPeriod.size() + 1 + kOrgUnit.size() + 1 +
    kCategoryOptionCombo.size() + 1 + kAttributeOptionCombo.size() + 1 + kValue.size() + 1 +
    kStoredBy.size() + 1 + kCreated.size() + 1 + kLastUpdated.size() + 1 + kComment.size() + 1 +
    kFollowUpTrue.size() + kDeleted.size() + kValueEnd.size() + 2 * kMaxLongGmtDateLength;

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

// WriteAttribute, also nothing for an empty "text" (DHIS2's emptyAsNull).
inline char* WriteNonEmptyAttribute(char* p, std::string_view name, const Text& text) {
  return text.bytes.empty() ? p : WriteAttribute(p, name, text);
}

inline size_t TextBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

// The root's attribute "name" (` key="`) for "member", or nothing when the header lacks it.
char* WriteHeaderAttribute(char* p, std::string_view name, const std::optional<Text>& member) {
  const Text* text = GroupHeaderMember(member);
  return text == nullptr ? p : WriteAttribute(p, name, *text);
}

size_t HeaderAttributeBytes(const std::optional<Text>& member) {
  const Text* text = GroupHeaderMember(member);
  return text == nullptr ? 0 : kMaxXmlEscapedBytesPerInputByte * text->bytes.size();
}

}  // namespace

void Xml243DataValueEncoder::UseHeader(const DataValueGroupHeader& header) {
  period_in_values_ = !GroupHeaderHasPeriod(header);
  org_unit_in_values_ = GroupHeaderMember(header.org_unit) == nullptr;
  attribute_option_combo_in_values_ = GroupHeaderMember(header.attribute_option_combo) == nullptr;
}

void Xml243DataValueEncoder::Begin(const DataValueGroupHeader& header) {
  UseHeader(header);
  values_written_ = false;
  size_t max_size = kDocumentStart.size() + kDataSet.size() + kPeriod.size() + kOrgUnit.size() +
                    kAttributeOptionCombo.size() + 4 + HeaderAttributeBytes(header.data_set) +
                    HeaderAttributeBytes(header.period_adx) +
                    HeaderAttributeBytes(header.org_unit) +
                    HeaderAttributeBytes(header.attribute_option_combo);
  for (const auto& [name, value] : header.id_schemes) {
    max_size += 4 + name.size() + kMaxXmlEscapedBytesPerInputByte * value.size();
  }
  char* const start = out_->Reserve(max_size);
  char* p = WriteLiteral(start, kDocumentStart);
  p = WriteHeaderAttribute(p, kDataSet, header.data_set);
  p = WriteHeaderAttribute(p, kPeriod, header.period_adx);
  p = WriteHeaderAttribute(p, kOrgUnit, header.org_unit);
  p = WriteHeaderAttribute(p, kAttributeOptionCombo, header.attribute_option_combo);
  for (const auto& [name, value] : header.id_schemes) {
    *p++ = ' ';
    p = WriteLiteral(p, name);
    *p++ = '=';
    *p++ = '"';
    p = WriteXmlAttributeEscaped(p, value);
    *p++ = '"';
  }
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void Xml243DataValueEncoder::Add(const DataValueRow& row) {
  const size_t text_bytes = TextBytes(row.data_element) + TextBytes(row.period) +
                            TextBytes(row.org_unit) + TextBytes(row.category_option_combo) +
                            TextBytes(row.attribute_option_combo) + TextBytes(row.value) +
                            TextBytes(row.stored_by) + TextBytes(row.comment);
  const size_t max_size = kMaxRowOverhead + kMaxXmlEscapedBytesPerInputByte * text_bytes;
  char* const start = out_->Reserve(max_size);
  values_written_ = true;
  char* p = WriteLiteral(start, kValueStart);
  p = WriteAttribute(p, kDataElement, row.data_element);
  if (period_in_values_) p = WriteAttribute(p, kPeriod, row.period);
  if (org_unit_in_values_) p = WriteAttribute(p, kOrgUnit, row.org_unit);
  p = WriteAttribute(p, kCategoryOptionCombo, row.category_option_combo);
  if (attribute_option_combo_in_values_) {
    p = WriteAttribute(p, kAttributeOptionCombo, row.attribute_option_combo);
  }
  p = WriteAttribute(p, kValue, row.value);
  p = WriteNonEmptyAttribute(p, kStoredBy, row.stored_by);
  p = WriteLiteral(p, kCreated);
  p += dates_.Format(row.created, p);
  *p++ = '"';
  p = WriteLiteral(p, kLastUpdated);
  p += dates_.Format(row.last_updated, p);
  *p++ = '"';
  p = WriteNonEmptyAttribute(p, kComment, row.comment);
  if (row.followup && !row.followup_null) p = WriteLiteral(p, kFollowUpTrue);
  if (row.deleted) p = WriteLiteral(p, kDeleted);
  p = WriteLiteral(p, kValueEnd);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void Xml243DataValueEncoder::End() {
  out_->Append(values_written_ ? kDocumentEnd : kEmptyDocumentEnd);
}

}  // namespace dvexport::encode
