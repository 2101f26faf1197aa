#include "service/encode/pretty_json_data_value_encoder.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "service/encode/json_string.h"
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

constexpr std::string_view kDocumentStart = "{\n  \"dataValues\": [";
constexpr std::string_view kHeaderDataSet = "{\n  \"dataSet\": ";
constexpr std::string_view kHeaderCompleteDate = ",\n  \"completeDate\": ";
constexpr std::string_view kHeaderPeriod = ",\n  \"period\": ";
constexpr std::string_view kHeaderOrgUnit = ",\n  \"orgUnit\": ";
constexpr std::string_view kHeaderDataValues = ",\n  \"dataValues\": [";
constexpr std::string_view kEmptyDocumentEnd = "]\n}\n";
constexpr std::string_view kDocumentEnd = "\n  ]\n}\n";

constexpr std::string_view kDataElement = "\n    {\n      \"dataElement\": ";
constexpr std::string_view kPeriod = ",\n      \"period\": ";
constexpr std::string_view kOrgUnit = ",\n      \"orgUnit\": ";
constexpr std::string_view kCategoryOptionCombo = ",\n      \"categoryOptionCombo\": ";
constexpr std::string_view kAttributeOptionCombo = ",\n      \"attributeOptionCombo\": ";
constexpr std::string_view kValue = ",\n      \"value\": ";
constexpr std::string_view kStoredBy = ",\n      \"storedBy\": ";
constexpr std::string_view kCreated = ",\n      \"created\": \"";
constexpr std::string_view kLastUpdated = "\",\n      \"lastUpdated\": \"";
constexpr std::string_view kComment = "\",\n      \"comment\": ";
constexpr std::string_view kFollowupTrue = ",\n      \"followup\": true";
constexpr std::string_view kFollowupFalse = ",\n      \"followup\": false";
constexpr std::string_view kDeleted = ",\n      \"deleted\": true";
constexpr std::string_view kValueEnd = "\n    }";

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

PrettyJsonDataValueEncoder::PrettyJsonDataValueEncoder(ChunkBuffer* out) : out_(out) {}

void PrettyJsonDataValueEncoder::Begin(const DataValueSetHeader* header) {
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

void PrettyJsonDataValueEncoder::Add(const DataValueRow& row) {
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
  p = WriteLiteral(p, row.followup ? kFollowupTrue : kFollowupFalse);
  if (row.deleted) p = WriteLiteral(p, kDeleted);
  p = WriteLiteral(p, kValueEnd);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void PrettyJsonDataValueEncoder::End() {
  out_->Append(first_value_ ? kEmptyDocumentEnd : kDocumentEnd);
}

}  // namespace dvexport::encode
