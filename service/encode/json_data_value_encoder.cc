#include "service/encode/json_data_value_encoder.h"

#include <cassert>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "common/json_string.h"
#include "common/plain_copy.h"
#include "service/encode/json_layout.h"
#include "service/encode/long_gmt_date.h"
#include "service/encode/pretty_json_data_value_encoder.h"

namespace dvexport::encode {

namespace {

constexpr std::string_view kNull = "null";

// A string is written as `null` or between two quotes.
constexpr size_t kMaxStringOverhead = 4;

constexpr size_t kTextFieldsPerRow = 8;

using common::kMaxJsonEscapedBytesPerInputByte;
using common::WriteJsonEscaped;

// What the encoder writes between the strings and dates, in "Layout".
template <typename Layout>
struct JsonLiterals {
  // A member of the document or of a value: `"key":`, indented, after "before" (`{` or `,`).
  template <FixedString before, FixedString key>
  static constexpr auto kDocumentMember =
      Concat<before, Layout::kDocumentMemberIndent, "\"", key, "\"", Layout::kColon>();
  template <FixedString before, FixedString key>
  static constexpr auto kValueMember =
      Concat<before, Layout::kValueMemberIndent, "\"", key, "\"", Layout::kColon>();

  static constexpr auto kDocumentStart = Concat<kDocumentMember<"{", "dataValues">, "[">();
  static constexpr auto kHeaderDataSet = kDocumentMember<"{", "dataSet">;
  static constexpr auto kHeaderCompleteDate = kDocumentMember<",", "completeDate">;
  static constexpr auto kHeaderPeriod = kDocumentMember<",", "period">;
  static constexpr auto kHeaderOrgUnit = kDocumentMember<",", "orgUnit">;
  static constexpr auto kHeaderDataValues = Concat<kDocumentMember<",", "dataValues">, "[">();
  static constexpr auto kEmptyDocumentEnd = Concat<"]", Layout::kLineEnd, "}", Layout::kLineEnd>();
  static constexpr auto kDocumentEnd =
      Concat<Layout::kDocumentMemberIndent, "]", Layout::kLineEnd, "}", Layout::kLineEnd>();

  static constexpr auto kDataElement =
      Concat<Layout::kValueIndent, kValueMember<"{", "dataElement">>();
  static constexpr auto kPeriod = kValueMember<",", "period">;
  static constexpr auto kOrgUnit = kValueMember<",", "orgUnit">;
  static constexpr auto kCategoryOptionCombo = kValueMember<",", "categoryOptionCombo">;
  static constexpr auto kAttributeOptionCombo = kValueMember<",", "attributeOptionCombo">;
  static constexpr auto kValue = kValueMember<",", "value">;
  static constexpr auto kStoredBy = kValueMember<",", "storedBy">;
  // The dates are written between the quotes these open and close.
  static constexpr auto kCreated = Concat<kValueMember<",", "created">, "\"">();
  static constexpr auto kLastUpdated = Concat<"\"", kValueMember<",", "lastUpdated">, "\"">();
  static constexpr auto kComment = Concat<"\"", kValueMember<",", "comment">>();
  static constexpr auto kFollowupTrue = Concat<kValueMember<",", "followup">, "true">();
  static constexpr auto kFollowupFalse = Concat<kValueMember<",", "followup">, "false">();
  static constexpr auto kDeleted = Concat<kValueMember<",", "deleted">, "true">();
  static constexpr auto kValueEnd = Concat<Layout::kValueIndent, "}">();

  // Everything in a row but the string contents, at its longest.
  static constexpr size_t kMaxRowOverhead =
      1 /* comma */ + kDataElement.size() + kPeriod.size() + kOrgUnit.size() +
      kCategoryOptionCombo.size() + kAttributeOptionCombo.size() + kValue.size() +
      kStoredBy.size() + kCreated.size() + kLastUpdated.size() + kComment.size() +
      kFollowupFalse.size() + kDeleted.size() + kValueEnd.size() + 2 * kMaxLongGmtDateLength +
      kTextFieldsPerRow * kMaxStringOverhead;

  static constexpr size_t kMaxHeaderOverhead = kHeaderDataSet.size() + kHeaderCompleteDate.size() +
                                               kMaxLongGmtDateLength + 2 + kHeaderPeriod.size() +
                                               kHeaderOrgUnit.size() + kHeaderDataValues.size() +
                                               3 * kMaxStringOverhead;
};

static_assert(std::string_view(JsonLiterals<CompactJsonLayout>::kLastUpdated) ==
              "\",\"lastUpdated\":\"");
static_assert(std::string_view(JsonLiterals<PrettyJsonLayout>::kDataElement) ==
              "\n    {\n      \"dataElement\": ");

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

// Writes `null` or the quoted, escaped string.
// REQUIRES: kMaxStringOverhead + kMaxJsonEscapedBytesPerInputByte * text.bytes.size() bytes
// writable at "p".
inline char* WriteString(char* p, const Text& text) {
  if (text.is_null) return WriteLiteral(p, kNull);
  *p++ = '"';
  p = text.plain ? common::CopyPlain(text.bytes, p) : WriteJsonEscaped(p, text.bytes);
  *p++ = '"';
  return p;
}

inline size_t StringBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

}  // namespace

template <typename Layout>
void JsonDataValueEncoderWithLayout<Layout>::Begin(const DataValueSetHeader* header) {
  using Literals = JsonLiterals<Layout>;
  first_value_ = true;
  if (header == nullptr) {
    out_->Append(Literals::kDocumentStart);
    return;
  }
  const size_t string_bytes =
      StringBytes(header->data_set) + StringBytes(header->period) + StringBytes(header->org_unit);
  const size_t max_size =
      Literals::kMaxHeaderOverhead + kMaxJsonEscapedBytesPerInputByte * string_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = WriteLiteral(start, Literals::kHeaderDataSet);
  p = WriteString(p, header->data_set);
  p = WriteLiteral(p, Literals::kHeaderCompleteDate);
  if (header->complete_date_micros.has_value()) {
    *p++ = '"';
    p += dates_.Format(*header->complete_date_micros, p);
    *p++ = '"';
  } else {
    p = WriteLiteral(p, kNull);
  }
  p = WriteLiteral(p, Literals::kHeaderPeriod);
  p = WriteString(p, header->period);
  p = WriteLiteral(p, Literals::kHeaderOrgUnit);
  p = WriteString(p, header->org_unit);
  p = WriteLiteral(p, Literals::kHeaderDataValues);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

template <typename Layout>
void JsonDataValueEncoderWithLayout<Layout>::Add(const DataValueRow& row) {
  using Literals = JsonLiterals<Layout>;
  const size_t string_bytes = StringBytes(row.data_element) + StringBytes(row.period) +
                              StringBytes(row.org_unit) + StringBytes(row.category_option_combo) +
                              StringBytes(row.attribute_option_combo) + StringBytes(row.value) +
                              StringBytes(row.stored_by) + StringBytes(row.comment);
  const size_t max_size =
      Literals::kMaxRowOverhead + kMaxJsonEscapedBytesPerInputByte * string_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = start;
  *p = ',';
  p += first_value_ ? 0 : 1;
  first_value_ = false;

  p = WriteLiteral(p, Literals::kDataElement);
  p = WriteString(p, row.data_element);
  p = WriteLiteral(p, Literals::kPeriod);
  p = WriteString(p, row.period);
  p = WriteLiteral(p, Literals::kOrgUnit);
  p = WriteString(p, row.org_unit);
  p = WriteLiteral(p, Literals::kCategoryOptionCombo);
  p = WriteString(p, row.category_option_combo);
  p = WriteLiteral(p, Literals::kAttributeOptionCombo);
  p = WriteString(p, row.attribute_option_combo);
  p = WriteLiteral(p, Literals::kValue);
  p = WriteString(p, row.value);
  p = WriteLiteral(p, Literals::kStoredBy);
  p = WriteString(p, row.stored_by);
  p = WriteLiteral(p, Literals::kCreated);
  p += dates_.Format(row.created, p);
  p = WriteLiteral(p, Literals::kLastUpdated);
  p += dates_.Format(row.last_updated, p);
  p = WriteLiteral(p, Literals::kComment);
  p = WriteString(p, row.comment);
  if (row.followup) {
    p = WriteLiteral(p, Literals::kFollowupTrue);
  } else {
    p = WriteLiteral(p, Literals::kFollowupFalse);
  }
  if (row.deleted) p = WriteLiteral(p, Literals::kDeleted);
  p = WriteLiteral(p, Literals::kValueEnd);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

template <typename Layout>
void JsonDataValueEncoderWithLayout<Layout>::End() {
  using Literals = JsonLiterals<Layout>;
  out_->Append(first_value_ ? std::string_view(Literals::kEmptyDocumentEnd)
                            : std::string_view(Literals::kDocumentEnd));
}

template class JsonDataValueEncoderWithLayout<CompactJsonLayout>;
template class JsonDataValueEncoderWithLayout<PrettyJsonLayout>;

}  // namespace dvexport::encode
