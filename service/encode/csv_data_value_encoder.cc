#include "service/encode/csv_data_value_encoder.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/plain_copy.h"
#include "common/utf8_sequence.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

namespace {

using common::AnyLane;
using common::ByteVector;
using common::CopyIfPlain;
using common::LoadByteVector;
using common::ScanUtf8Sequence;
using common::StoreByteVector;
using common::Utf8Sequence;
using common::WriteRepairedUtf8Sequence;

// Worst-case output bytes per input byte of a field: an ill-formed byte becomes U+FFFD (3 bytes).
// '"' doubles to 2 bytes; well-formed UTF-8 and other ASCII are copied.
constexpr size_t kMaxOutputBytesPerInputByte = 3;

// The quotes around a field.
constexpr size_t kMaxFieldOverhead = 2;

constexpr std::string_view kHeaderLine =
    "dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,"
    "lastupdated,comment,followup,deleted\n";

constexpr std::string_view kTrue = "true";
constexpr std::string_view kFalse = "false";
constexpr std::string_view kNull = "null";

constexpr size_t kTextFieldsPerRow = 8;
constexpr size_t kColumnsPerRow = 11;

// Everything in a line but the field contents, at its longest.
constexpr size_t kMaxRowOverhead = kTextFieldsPerRow * kMaxFieldOverhead +
                                   (kColumnsPerRow - 1) /* commas */ + kMaxLongGmtDateLength +
                                   kFalse.size() + kNull.size() + 1 /* newline */;

// 1 for the bytes that are not copied as they are: those that make a field quoted ('"', ',',
// '\n', '\r') and non-ASCII bytes, which are validated.
constexpr std::array<uint8_t, 256> kNeedsAttention = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = (c == '"' || c == ',' || c == '\n' || c == '\r' || c >= 0x80);
  }
  return table;
}();

// The lanes of "v" that need attention, exactly as kNeedsAttention (signed lanes: < 0 selects
// non-ASCII bytes).
inline ByteVector AttentionMask(ByteVector v) {
  return (v < 0) | (v == '"') | (v == ',') | (v == '\n') | (v == '\r');
}

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

// Writes the "n" bytes at "s" as a field, quoted from the start if "quoted". The content is
// copied optimistically without quotes; the first byte that requires quoting moves what was
// written one byte right to make room for the opening quote (at most once per field).
// Not inlined: fields that need it are rare.
// REQUIRES: kMaxFieldOverhead + kMaxOutputBytesPerInputByte * n bytes writable at "p".
[[gnu::noinline]] char* WriteFieldSlowly(char* p, const unsigned char* s, size_t n, bool quoted) {
  char* const field_start = p;
  if (quoted) *p++ = '"';
  size_t i = 0;
  for (;;) {
    while (n - i >= 16) {
      const ByteVector v = LoadByteVector(s + i);
      if (AnyLane(AttentionMask(v))) break;
      StoreByteVector(v, p);
      p += 16;
      i += 16;
    }
    while (i < n && !kNeedsAttention[s[i]]) *p++ = static_cast<char>(s[i++]);
    if (i == n) break;

    const unsigned char c = s[i];
    if (c < 0x80) {
      if (!quoted) {
        std::memmove(field_start + 1, field_start, static_cast<size_t>(p - field_start));
        *field_start = '"';
        ++p;
        quoted = true;
      }
      *p++ = static_cast<char>(c);
      if (c == '"') *p++ = '"';
      ++i;
      continue;
    }
    const Utf8Sequence sequence = ScanUtf8Sequence(s + i, n - i);
    p = WriteRepairedUtf8Sequence(p, s + i, sequence);
    i += sequence.length;
  }
  if (quoted) *p++ = '"';
  return p;
}

// Writes one field as javacsv does: trimmed, quoted when needed.
// REQUIRES: kMaxFieldOverhead + kMaxOutputBytesPerInputByte * text.bytes.size() bytes writable.
inline char* WriteField(char* p, const Text& text, bool first_column) {
  if (text.plain) return common::CopyPlain(text.bytes, p);
  const auto* s = reinterpret_cast<const unsigned char*>(text.bytes.data());
  const unsigned char* end = text.is_null ? s : s + text.bytes.size();
  while (s < end && *s <= 0x20) ++s;
  while (end > s && end[-1] <= 0x20) --end;
  const size_t n = static_cast<size_t>(end - s);
  if (first_column && (n == 0 || s[0] == '#')) return WriteFieldSlowly(p, s, n, true);
  if (CopyIfPlain(s, n, p, AttentionMask)) return p + n;
  return WriteFieldSlowly(p, s, n, false);
}

inline size_t FieldBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

}  // namespace

CsvDataValueEncoder::CsvDataValueEncoder(ChunkBuffer* out) : out_(out) {}

void CsvDataValueEncoder::Begin(const DataValueSetHeader* /*header*/) { out_->Append(kHeaderLine); }

void CsvDataValueEncoder::Add(const DataValueRow& row) {
  const size_t field_bytes = FieldBytes(row.data_element) + FieldBytes(row.period) +
                             FieldBytes(row.org_unit) + FieldBytes(row.category_option_combo) +
                             FieldBytes(row.attribute_option_combo) + FieldBytes(row.value) +
                             FieldBytes(row.stored_by) + FieldBytes(row.comment);
  const size_t max_size = kMaxRowOverhead + kMaxOutputBytesPerInputByte * field_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = WriteField(start, row.data_element, /*first_column=*/true);
  *p++ = ',';
  p = WriteField(p, row.period, false);
  *p++ = ',';
  p = WriteField(p, row.org_unit, false);
  *p++ = ',';
  p = WriteField(p, row.category_option_combo, false);
  *p++ = ',';
  p = WriteField(p, row.attribute_option_combo, false);
  *p++ = ',';
  p = WriteField(p, row.value, false);
  *p++ = ',';
  p = WriteField(p, row.stored_by, false);
  *p++ = ',';
  p += dates_.Format(row.last_updated, p);
  *p++ = ',';
  p = WriteField(p, row.comment, false);
  *p++ = ',';
  if (row.followup) {
    p = WriteLiteral(p, kTrue);
  } else {
    p = WriteLiteral(p, kFalse);
  }
  *p++ = ',';
  if (row.deleted) {
    p = WriteLiteral(p, kTrue);
  } else {
    p = WriteLiteral(p, kNull);
  }
  *p++ = '\n';
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void CsvDataValueEncoder::End() {}

}  // namespace dvexport::encode
