#include "service/encode/json_243_data_value_encoder.h"

#include <cassert>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string_view>

#include "common/plain_copy.h"
#include "service/encode/group_header.h"
#include "service/encode/json_243_string.h"
#include "service/encode/json_layout.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {
namespace {

// The quotes around a string.
constexpr size_t kStringOverhead = 2;

constexpr size_t kTextFieldsPerRow = 8;

// What the encoder writes between the strings and dates, in "Layout".
template <typename Layout>
struct Json243Literals {
  // `"key":`, indented as a member of the document, without the comma before it.
  template <FixedString key>
  static constexpr auto kDocumentMember =
      Concat<Layout::kDocumentMemberIndent, "\"", key, "\"", Layout::kColon>();
  // `,"key":`, indented as a member of a value.
  template <FixedString key>
  static constexpr auto kValueMember =
      Concat<",", Layout::kValueMemberIndent, "\"", key, "\"", Layout::kColon>();

  static constexpr auto kDataSet = kDocumentMember<"dataSet">;
  static constexpr auto kHeaderPeriod = kDocumentMember<"period">;
  static constexpr auto kHeaderOrgUnit = kDocumentMember<"orgUnit">;
  static constexpr auto kHeaderAttributeOptionCombo = kDocumentMember<"attributeOptionCombo">;
  static constexpr auto kDataValues = Concat<kDocumentMember<"dataValues">, "[">();
  // One member of the document at its longest, but for its name and value: comma, indent, four
  // quotes, colon.
  static constexpr size_t kMaxDocumentMemberOverhead =
      1 + Layout::kDocumentMemberIndent.size() + 4 + Layout::kColon.size();
  static constexpr auto kEmptyDocumentEnd = Concat<"]", Layout::kLineEnd, "}", Layout::kLineEnd>();
  static constexpr auto kDocumentEnd =
      Concat<Layout::kDocumentMemberIndent, "]", Layout::kLineEnd, "}", Layout::kLineEnd>();

  static constexpr auto kDataElement = Concat<Layout::kValueIndent, "{", Layout::kValueMemberIndent,
                                              "\"dataElement\"", Layout::kColon>();
  static constexpr auto kPeriod = kValueMember<"period">;
  static constexpr auto kOrgUnit = kValueMember<"orgUnit">;
  static constexpr auto kCategoryOptionCombo = kValueMember<"categoryOptionCombo">;
  static constexpr auto kAttributeOptionCombo = kValueMember<"attributeOptionCombo">;
  static constexpr auto kValue = kValueMember<"value">;
  static constexpr auto kStoredBy = kValueMember<"storedBy">;
  static constexpr auto kCreated = kValueMember<"created">;
  static constexpr auto kLastUpdated = kValueMember<"lastUpdated">;
  static constexpr auto kComment = kValueMember<"comment">;
  static constexpr auto kFollowupTrue = Concat<kValueMember<"followup">, "true">();
  static constexpr auto kFollowupFalse = Concat<kValueMember<"followup">, "false">();
  static constexpr auto kDeleted = Concat<kValueMember<"deleted">, "true">();
  static constexpr auto kValueEnd = Concat<Layout::kValueIndent, "}">();

  // Everything in a row but the string contents, at its longest.
  static constexpr size_t kMaxRowOverhead =
      1 /* comma */ + kDataElement.size() + kPeriod.size() + kOrgUnit.size() +
      kCategoryOptionCombo.size() + kAttributeOptionCombo.size() + kValue.size() +
      kStoredBy.size() + kCreated.size() + kLastUpdated.size() + kComment.size() +
      kFollowupFalse.size() + kDeleted.size() + kValueEnd.size() +
      2 * (kMaxLongGmtDateLength + kStringOverhead) + kTextFieldsPerRow * kStringOverhead;
};

static_assert(std::string_view(Json243Literals<CompactJsonLayout>::kDataElement) ==
              "{\"dataElement\":");
static_assert(std::string_view(Json243Literals<PrettyJsonLayout>::kComment) ==
              ",\n      \"comment\": ");

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

// Writes the quoted, escaped string.
// REQUIRES: kStringOverhead + kMaxJson243EscapedBytesPerInputByte * bytes.size() writable at "p".
inline char* WriteString(char* p, std::string_view bytes, bool plain) {
  *p++ = '"';
  p = plain ? common::CopyPlain(bytes, p) : WriteJson243Escaped(p, bytes);
  *p++ = '"';
  return p;
}

// Writes "member" (`,"key":`) and the string, or nothing for a null "text".
inline char* WriteMember(char* p, std::string_view member, const Text& text) {
  if (text.is_null) return p;
  p = WriteLiteral(p, member);
  return WriteString(p, text.bytes, text.plain);
}

// WriteMember, also nothing for an empty "text" (DHIS2's emptyAsNull).
inline char* WriteNonEmptyMember(char* p, std::string_view member, const Text& text) {
  if (text.is_null || text.bytes.empty()) return p;
  p = WriteLiteral(p, member);
  return WriteString(p, text.bytes, text.plain);
}

// Writes `"key":` of a member of the document, after a comma unless it is the first.
inline char* WriteDocumentMember(char* p, std::string_view member, bool* first) {
  *p = ',';
  p += *first ? 0 : 1;
  *first = false;
  return WriteLiteral(p, member);
}

inline size_t StringBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

inline size_t MemberBytes(const std::optional<Text>& member) {
  const Text* text = GroupHeaderMember(member);
  return text == nullptr ? 0 : text->bytes.size();
}

}  // namespace

template <typename Layout>
void Json243DataValueEncoderWithLayout<Layout>::UseHeader(const DataValueGroupHeader& header) {
  period_in_values_ = !GroupHeaderHasPeriod(header);
  org_unit_in_values_ = GroupHeaderMember(header.org_unit) == nullptr;
  attribute_option_combo_in_values_ = GroupHeaderMember(header.attribute_option_combo) == nullptr;
}

template <typename Layout>
void Json243DataValueEncoderWithLayout<Layout>::Begin(const DataValueGroupHeader& header) {
  using Literals = Json243Literals<Layout>;
  UseHeader(header);
  first_value_ = true;
  const std::optional<Text>* const members[] = {&header.data_set, &header.period, &header.org_unit,
                                                &header.attribute_option_combo};
  const std::string_view names[] = {Literals::kDataSet, Literals::kHeaderPeriod,
                                    Literals::kHeaderOrgUnit,
                                    Literals::kHeaderAttributeOptionCombo};
  size_t max_size = 1 + Literals::kMaxDocumentMemberOverhead + Literals::kDataValues.size();
  for (size_t i = 0; i < 4; ++i) {
    max_size += Literals::kMaxDocumentMemberOverhead + names[i].size() +
                kMaxJson243EscapedBytesPerInputByte * MemberBytes(*members[i]);
  }
  for (const auto& [name, value] : header.id_schemes) {
    max_size += Literals::kMaxDocumentMemberOverhead + name.size() +
                kMaxJson243EscapedBytesPerInputByte * value.size();
  }
  char* const start = out_->Reserve(max_size);
  char* p = start;
  *p++ = '{';
  bool first = true;
  for (size_t i = 0; i < 4; ++i) {
    const Text* text = GroupHeaderMember(*members[i]);
    if (text == nullptr) continue;
    p = WriteDocumentMember(p, names[i], &first);
    p = WriteString(p, text->bytes, text->plain);
  }
  for (const auto& [name, value] : header.id_schemes) {
    *p = ',';
    p += first ? 0 : 1;
    first = false;
    p = WriteLiteral(p, Layout::kDocumentMemberIndent);
    p = WriteString(p, name, /*plain=*/true);
    p = WriteLiteral(p, Layout::kColon);
    p = WriteString(p, value, /*plain=*/false);
  }
  p = WriteDocumentMember(p, Literals::kDataValues, &first);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

template <typename Layout>
void Json243DataValueEncoderWithLayout<Layout>::Add(const DataValueRow& row) {
  using Literals = Json243Literals<Layout>;
  assert(!row.data_element.is_null);
  const size_t string_bytes = StringBytes(row.data_element) + StringBytes(row.period) +
                              StringBytes(row.org_unit) + StringBytes(row.category_option_combo) +
                              StringBytes(row.attribute_option_combo) + StringBytes(row.value) +
                              StringBytes(row.stored_by) + StringBytes(row.comment);
  const size_t max_size =
      Literals::kMaxRowOverhead + kMaxJson243EscapedBytesPerInputByte * string_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = start;
  *p = ',';
  p += first_value_ ? 0 : 1;
  first_value_ = false;

  p = WriteLiteral(p, Literals::kDataElement);
  p = WriteString(p, row.data_element.bytes, row.data_element.plain);
  if (period_in_values_) p = WriteMember(p, Literals::kPeriod, row.period);
  if (org_unit_in_values_) p = WriteMember(p, Literals::kOrgUnit, row.org_unit);
  p = WriteMember(p, Literals::kCategoryOptionCombo, row.category_option_combo);
  if (attribute_option_combo_in_values_) {
    p = WriteMember(p, Literals::kAttributeOptionCombo, row.attribute_option_combo);
  }
  p = WriteMember(p, Literals::kValue, row.value);
  p = WriteNonEmptyMember(p, Literals::kStoredBy, row.stored_by);
  p = WriteLiteral(p, Literals::kCreated);
  *p++ = '"';
  p += dates_.Format(row.created, p);
  *p++ = '"';
  p = WriteLiteral(p, Literals::kLastUpdated);
  *p++ = '"';
  p += dates_.Format(row.last_updated, p);
  *p++ = '"';
  p = WriteNonEmptyMember(p, Literals::kComment, row.comment);
  if (!row.followup_null) {
    if (row.followup) {
      p = WriteLiteral(p, Literals::kFollowupTrue);
    } else {
      p = WriteLiteral(p, Literals::kFollowupFalse);
    }
  }
  if (row.deleted) p = WriteLiteral(p, Literals::kDeleted);
  p = WriteLiteral(p, Literals::kValueEnd);
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

template <typename Layout>
void Json243DataValueEncoderWithLayout<Layout>::End() {
  using Literals = Json243Literals<Layout>;
  out_->Append(first_value_ ? std::string_view(Literals::kEmptyDocumentEnd)
                            : std::string_view(Literals::kDocumentEnd));
}

template class Json243DataValueEncoderWithLayout<CompactJsonLayout>;
template class Json243DataValueEncoderWithLayout<PrettyJsonLayout>;

}  // namespace dvexport::encode
