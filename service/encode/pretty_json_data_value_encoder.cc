#include "service/encode/pretty_json_data_value_encoder.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "service/encode/plain_copy.h"
#include "service/encode/utf8_sequence.h"

namespace dvexport::encode {

namespace {

// String escaping, the same as JsonDataValueEncoder's (json_data_value_encoder.cc), which keeps
// its copy private to its hot path; the encode tests check that both write every string byte
// for byte alike.

// Worst-case output bytes per input byte of a string: a byte below 0x20 becomes \u00XX.
constexpr size_t kMaxOutputBytesPerInputByte = 6;

// A string is written as `null` or between two quotes.
constexpr size_t kMaxStringOverhead = 4;

constexpr std::string_view kNull = "null";

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

constexpr char kUpperHexDigits[] = "0123456789ABCDEF";

// 1 for the bytes that are not copied as they are: below 0x20, '"', '\' and non-ASCII.
constexpr std::array<uint8_t, 256> kNeedsAttention = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = (c < 0x20 || c == '"' || c == '\\' || c >= 0x80);
  return table;
}();

// The escape sequence of each ASCII byte that needs one (Jackson's sOutputEscapes128).
struct AsciiEscape {
  char bytes[6];
  uint8_t length;
};

constexpr std::array<AsciiEscape, 128> kAsciiEscapes = [] {
  std::array<AsciiEscape, 128> table{};
  for (int c = 0; c < 0x20; ++c) {
    table[c] =
        AsciiEscape{{'\\', 'u', '0', '0', kUpperHexDigits[c >> 4], kUpperHexDigits[c & 15]}, 6};
  }
  table['\b'] = AsciiEscape{{'\\', 'b'}, 2};
  table['\t'] = AsciiEscape{{'\\', 't'}, 2};
  table['\n'] = AsciiEscape{{'\\', 'n'}, 2};
  table['\f'] = AsciiEscape{{'\\', 'f'}, 2};
  table['\r'] = AsciiEscape{{'\\', 'r'}, 2};
  table['"'] = AsciiEscape{{'\\', '"'}, 2};
  table['\\'] = AsciiEscape{{'\\', '\\'}, 2};
  return table;
}();

// The lanes of "v" that need attention, exactly as kNeedsAttention.
inline ByteVector AttentionMask(ByteVector v) { return (v < 0x20) | (v == '"') | (v == '\\'); }

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

inline char* WriteUnicodeEscape(char* p, unsigned code_unit) {
  p[0] = '\\';
  p[1] = 'u';
  p[2] = kUpperHexDigits[(code_unit >> 12) & 15];
  p[3] = kUpperHexDigits[(code_unit >> 8) & 15];
  p[4] = kUpperHexDigits[(code_unit >> 4) & 15];
  p[5] = kUpperHexDigits[code_unit & 15];
  return p + 6;
}

// WriteEscaped() for strings with at least one byte that needs attention.
[[gnu::noinline]] char* WriteEscapedSlowly(char* p, const unsigned char* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    while (i < n && !kNeedsAttention[s[i]]) *p++ = static_cast<char>(s[i++]);
    if (i == n) break;
    const unsigned char c = s[i];
    if (c < 0x80) {
      const AsciiEscape& escape = kAsciiEscapes[c];
      std::memcpy(p, escape.bytes, sizeof(escape.bytes));
      p += escape.length;
      ++i;
      continue;
    }
    const Utf8Sequence sequence = ScanUtf8Sequence(s + i, n - i);
    if (!sequence.well_formed) {
      p = WriteLiteral(
          p, std::string_view(kUtf8ReplacementCharacter, kUtf8ReplacementCharacterLength));
    } else if (sequence.length < 4) {
      std::memcpy(p, s + i, sequence.length);
      p += sequence.length;
    } else {
      const uint32_t offset = DecodeUtf8FourByteSequence(s + i) - 0x10000;
      p = WriteUnicodeEscape(p, 0xD800 + (offset >> 10));
      p = WriteUnicodeEscape(p, 0xDC00 + (offset & 0x3FF));
    }
    i += sequence.length;
  }
  return p;
}

// Writes `null` or the quoted, escaped string.
// REQUIRES: kMaxStringOverhead + kMaxOutputBytesPerInputByte * text.bytes.size() bytes writable.
inline char* WriteString(char* p, const Text& text) {
  if (text.is_null) return WriteLiteral(p, kNull);
  *p++ = '"';
  const auto* s = reinterpret_cast<const unsigned char*>(text.bytes.data());
  const size_t n = text.bytes.size();
  p = CopyIfPlain(s, n, p, AttentionMask) ? p + n : WriteEscapedSlowly(p, s, n);
  *p++ = '"';
  return p;
}

inline size_t StringBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

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
