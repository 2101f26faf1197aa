#include "service/encode/csv_field.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "common/utf8_sequence.h"

namespace dvexport::encode {
namespace {

// 1 for the bytes CsvAttentionMask selects.
constexpr std::array<uint8_t, 256> kNeedsAttention = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = (c == '"' || c == ',' || c == '\n' || c == '\r' || c >= 0x80);
  }
  return table;
}();

}  // namespace

// The content is copied optimistically without quotes; the first byte that requires quoting
// moves what was written one byte right to make room for the opening quote (at most once per
// field).
char* WriteCsvFieldSlowly(char* p, const unsigned char* s, size_t n, bool quoted) {
  char* const field_start = p;
  if (quoted) *p++ = '"';
  size_t i = 0;
  for (;;) {
    while (n - i >= 16) {
      const common::ByteVector v = common::LoadByteVector(s + i);
      if (common::AnyLane(CsvAttentionMask(v))) break;
      common::StoreByteVector(v, p);
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
    const common::Utf8Sequence sequence = common::ScanUtf8Sequence(s + i, n - i);
    p = common::WriteRepairedUtf8Sequence(p, s + i, sequence);
    i += sequence.length;
  }
  if (quoted) *p++ = '"';
  return p;
}

}  // namespace dvexport::encode
