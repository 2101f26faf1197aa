#ifndef DVEXPORT_SERVICE_ENCODE_JSON_STRING_H_
#define DVEXPORT_SERVICE_ENCODE_JSON_STRING_H_

// JSON string escaping exactly as Jackson (DHIS2 2.42) writes it, shared by
// the compact and the pretty JSON encoders. Internal to service/encode.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "service/encode/data_value_row.h"
#include "service/encode/plain_copy.h"

namespace dvexport::encode::json_string {

// Worst-case output bytes per input byte of a string. A byte below 0x20 becomes \u00XX: 6.
// Everything else is smaller: '"' and '\' become 2 bytes; an ill-formed byte at most 3 (U+FFFD);
// a four-byte sequence 12 (\uD83D\uDE00), i.e. 3 per input byte; two- and three-byte sequences
// are copied.
constexpr size_t kMaxOutputBytesPerInputByte = 6;

// A string is written as `null` or between two quotes.
constexpr size_t kMaxStringOverhead = 4;

constexpr std::string_view kNull = "null";

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

// The lanes of "v" that need attention, exactly as kNeedsAttention (signed lanes: < 0x20 also
// selects non-ASCII bytes).
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

// WriteEscaped() for strings with at least one byte that needs attention. Not inlined: it is
// rare and large.
[[gnu::noinline]] char* WriteEscapedSlowly(char* p, const unsigned char* s, size_t n);

// Writes the escaped contents of a string (without quotes).
// REQUIRES: kMaxOutputBytesPerInputByte * bytes.size() bytes writable at "p".
inline char* WriteEscaped(char* p, std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  if (CopyIfPlain(s, n, p, AttentionMask)) return p + n;
  return WriteEscapedSlowly(p, s, n);
}

// Writes `null` or the quoted, escaped string.
// REQUIRES: kMaxStringOverhead + kMaxOutputBytesPerInputByte * text.bytes.size() bytes writable.
inline char* WriteString(char* p, const Text& text) {
  if (text.is_null) return WriteLiteral(p, kNull);
  *p++ = '"';
  p = WriteEscaped(p, text.bytes);
  *p++ = '"';
  return p;
}

inline size_t StringBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

}  // namespace dvexport::encode::json_string

#endif  // DVEXPORT_SERVICE_ENCODE_JSON_STRING_H_
