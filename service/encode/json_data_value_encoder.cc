#include "service/encode/json_data_value_encoder.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "service/encode/json_string.h"
#include "service/encode/long_gmt_date.h"
#include "service/encode/plain_copy.h"
#include "service/encode/utf8_sequence.h"

namespace dvexport::encode {

namespace {

using json_string::kMaxOutputBytesPerInputByte;
using json_string::kMaxStringOverhead;
using json_string::kNull;
using json_string::StringBytes;
using json_string::WriteLiteral;
using json_string::WriteString;

constexpr std::string_view kDocumentStart = "{\"dataValues\":[";
constexpr std::string_view kHeaderDataSet = "{\"dataSet\":";
constexpr std::string_view kHeaderCompleteDate = ",\"completeDate\":";
constexpr std::string_view kHeaderPeriod = ",\"period\":";
constexpr std::string_view kHeaderOrgUnit = ",\"orgUnit\":";
constexpr std::string_view kHeaderDataValues = ",\"dataValues\":[";
constexpr std::string_view kDocumentEnd = "]}";

constexpr std::string_view kDataElement = "{\"dataElement\":";
constexpr std::string_view kPeriod = ",\"period\":";
constexpr std::string_view kOrgUnit = ",\"orgUnit\":";
constexpr std::string_view kCategoryOptionCombo = ",\"categoryOptionCombo\":";
constexpr std::string_view kAttributeOptionCombo = ",\"attributeOptionCombo\":";
constexpr std::string_view kValue = ",\"value\":";
constexpr std::string_view kStoredBy = ",\"storedBy\":";
constexpr std::string_view kCreated = ",\"created\":\"";
constexpr std::string_view kLastUpdated = "\",\"lastUpdated\":\"";
constexpr std::string_view kComment = "\",\"comment\":";
constexpr std::string_view kFollowupTrue = ",\"followup\":true";
constexpr std::string_view kFollowupFalse = ",\"followup\":false";
constexpr std::string_view kDeleted = ",\"deleted\":true";
constexpr std::string_view kValueEnd = "}";

constexpr size_t kTextFieldsPerRow = 8;

// Everything in a row but the string contents, at its longest.
constexpr size_t kMaxRowOverhead =
    1 /* comma */ + kDataElement.size() + kPeriod.size() + kOrgUnit.size() +
    kCategoryOptionCombo.size() + kAttributeOptionCombo.size() + kValue.size() + kStoredBy.size() +
    kCreated.size() + kLastUpdated.size() + kComment.size() + kFollowupFalse.size() +
    kDeleted.size() + kValueEnd.size() + 2 * kMaxLongGmtDateLength +
    kTextFieldsPerRow * kMaxStringOverhead;

constexpr size_t kMaxHeaderOverhead = kHeaderDataSet.size() + kHeaderCompleteDate.size() +
                                      kMaxLongGmtDateLength + 2 + kHeaderPeriod.size() +
                                      kHeaderOrgUnit.size() + kHeaderDataValues.size() +
                                      3 * kMaxStringOverhead;

}  // namespace

JsonDataValueEncoder::JsonDataValueEncoder(ChunkBuffer* out) : out_(out) {}

void JsonDataValueEncoder::Begin(const DataValueSetHeader* header) {
  first_value_ = true;
  if (header == nullptr) {
    out_->Append(kDocumentStart);
    return;
  }
  const size_t string_bytes =
      StringBytes(header->data_set) + StringBytes(header->period) + StringBytes(header->org_unit);
  const size_t max_size = kMaxHeaderOverhead + kMaxOutputBytesPerInputByte * string_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = WriteLiteral(start, kHeaderDataSet);
  p = WriteString(p, header->data_set);
  p = WriteLiteral(p, kHeaderCompleteDate);
  if (header->complete_date_micros.has_value()) {
    *p++ = '"';
    p += dates_.Format(*header->complete_date_micros, p);
    *p++ = '"';
  } else {
    p = WriteLiteral(p, kNull);
  }
  p = WriteLiteral(p, kHeaderPeriod);
  p = WriteString(p, header->period);
  p = WriteLiteral(p, kHeaderOrgUnit);
  p = WriteString(p, header->org_unit);
  p = WriteLiteral(p, kHeaderDataValues);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void JsonDataValueEncoder::Add(const DataValueRow& row) {
  const size_t string_bytes = StringBytes(row.data_element) + StringBytes(row.period) +
                              StringBytes(row.org_unit) + StringBytes(row.category_option_combo) +
                              StringBytes(row.attribute_option_combo) + StringBytes(row.value) +
                              StringBytes(row.stored_by) + StringBytes(row.comment);
  const size_t max_size = kMaxRowOverhead + kMaxOutputBytesPerInputByte * string_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = start;
  *p = ',';
  p += first_value_ ? 0 : 1;
  first_value_ = false;

  p = WriteLiteral(p, kDataElement);
  p = WriteString(p, row.data_element);
  p = WriteLiteral(p, kPeriod);
  p = WriteString(p, row.period);
  p = WriteLiteral(p, kOrgUnit);
  p = WriteString(p, row.org_unit);
  p = WriteLiteral(p, kCategoryOptionCombo);
  p = WriteString(p, row.category_option_combo);
  p = WriteLiteral(p, kAttributeOptionCombo);
  p = WriteString(p, row.attribute_option_combo);
  p = WriteLiteral(p, kValue);
  p = WriteString(p, row.value);
  p = WriteLiteral(p, kStoredBy);
  p = WriteString(p, row.stored_by);
  p = WriteLiteral(p, kCreated);
  p += dates_.Format(row.created_micros, p);
  p = WriteLiteral(p, kLastUpdated);
  p += dates_.Format(row.last_updated_micros, p);
  p = WriteLiteral(p, kComment);
  p = WriteString(p, row.comment);
  if (row.followup) {
    p = WriteLiteral(p, kFollowupTrue);
  } else {
    p = WriteLiteral(p, kFollowupFalse);
  }
  if (row.deleted) p = WriteLiteral(p, kDeleted);
  p = WriteLiteral(p, kValueEnd);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void JsonDataValueEncoder::End() { out_->Append(kDocumentEnd); }

}  // namespace dvexport::encode
