#ifndef DVEXPORT_COMMON_ESCAPED_COPY_H_
#define DVEXPORT_COMMON_ESCAPED_COPY_H_

// The slow path the text escapers share (common/json_string.h, service/encode/xml_attribute.h):
// plain runs are copied sixteen bytes at a time, each ASCII byte that needs attention is replaced
// from a table, each non-ASCII sequence is classified by ScanUtf8Sequence and written by the
// escaping's own rule. Only the escaping (a policy type) differs between JSON and XML.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/plain_copy.h"
#include "common/utf8_sequence.h"

namespace dvexport::common {

// What an ASCII byte becomes: "length" bytes of "bytes"; length 0 for the bytes copied as they
// are. Six bytes, so that one fixed-size copy writes any escape.
struct AsciiEscape {
  char bytes[6];
  uint8_t length;
};
using AsciiEscapeTable = std::array<AsciiEscape, 128>;

// 1 for the bytes that "escapes" replaces and for every non-ASCII byte.
constexpr std::array<uint8_t, 256> NeedsAttentionTable(const AsciiEscapeTable& escapes) {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = c >= 0x80 || escapes[c].length != 0;
  return table;
}

// Writes the "n" bytes at "s" escaped by "Escaping" and returns the end of what it wrote. Makes
// no capacity check and does not allocate. "Escaping" provides:
//   static ByteVector AttentionMask(ByteVector v);  // exactly the lanes NeedsAttentionTable(
//                                                   // kAsciiEscapes) selects
//   static constexpr AsciiEscapeTable kAsciiEscapes;
//   // Writes the sequence at "s" that ScanUtf8Sequence classified; returns the end.
//   static char* WriteNonAscii(char* p, const unsigned char* s, Utf8Sequence sequence);
// Meant for values known to need attention (the plain ones take CopyIfPlain): it is large, and
// each escaper instantiates it once, in a function that is not inlined.
template <typename Escaping>
char* WriteEscapedCopy(char* p, const unsigned char* s, size_t n) {
  static constexpr std::array<uint8_t, 256> kNeedsAttention =
      NeedsAttentionTable(Escaping::kAsciiEscapes);
  size_t i = 0;
  for (;;) {
    while (n - i >= 16) {
      const ByteVector v = LoadByteVector(s + i);
      if (AnyLane(Escaping::AttentionMask(v))) break;
      StoreByteVector(v, p);
      p += 16;
      i += 16;
    }
    while (i < n && !kNeedsAttention[s[i]]) *p++ = static_cast<char>(s[i++]);
    if (i == n) return p;

    const unsigned char c = s[i];
    if (c < 0x80) {
      const AsciiEscape& escape = Escaping::kAsciiEscapes[c];
      std::memcpy(p, escape.bytes, sizeof(escape.bytes));
      p += escape.length;
      ++i;
      continue;
    }
    const Utf8Sequence sequence = ScanUtf8Sequence(s + i, n - i);
    p = Escaping::WriteNonAscii(p, s + i, sequence);
    i += sequence.length;
  }
}

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_ESCAPED_COPY_H_
