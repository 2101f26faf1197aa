#include "common/json_string.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "common/utf8_sequence.h"

namespace dvexport::common {
namespace {

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

char* WriteUnicodeEscape(char* p, unsigned code_unit) {
  p[0] = '\\';
  p[1] = 'u';
  p[2] = kUpperHexDigits[(code_unit >> 12) & 15];
  p[3] = kUpperHexDigits[(code_unit >> 8) & 15];
  p[4] = kUpperHexDigits[(code_unit >> 4) & 15];
  p[5] = kUpperHexDigits[code_unit & 15];
  return p + 6;
}

}  // namespace

char* WriteJsonEscapedSlowly(char* p, const unsigned char* s, size_t n) {
  size_t i = 0;
  for (;;) {
    while (n - i >= 16) {
      const ByteVector v = LoadByteVector(s + i);
      if (AnyLane(JsonAttentionMask(v))) break;
      StoreByteVector(v, p);
      p += 16;
      i += 16;
    }
    while (i < n && !kNeedsAttention[s[i]]) *p++ = static_cast<char>(s[i++]);
    if (i == n) return p;

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
      std::memcpy(p, kUtf8ReplacementCharacter, kUtf8ReplacementCharacterLength);
      p += kUtf8ReplacementCharacterLength;
    } else if (sequence.length < 4) {
      p[0] = static_cast<char>(s[i]);
      p[1] = static_cast<char>(s[i + 1]);
      if (sequence.length == 3) p[2] = static_cast<char>(s[i + 2]);
      p += sequence.length;
    } else {
      const uint32_t offset = DecodeUtf8FourByteSequence(s + i) - 0x10000;
      p = WriteUnicodeEscape(p, 0xD800 + (offset >> 10));
      p = WriteUnicodeEscape(p, 0xDC00 + (offset & 0x3FF));
    }
    i += sequence.length;
  }
}

void AppendJsonString(std::string_view text, std::string* out) {
  const size_t start = out->size();
  out->resize(start + 2 + kMaxJsonEscapedBytesPerInputByte * text.size());
  char* const begin = out->data() + start;
  char* p = begin;
  *p++ = '"';
  p = WriteJsonEscaped(p, text);
  *p++ = '"';
  out->resize(start + static_cast<size_t>(p - begin));
}

std::string JsonString(std::string_view text) {
  std::string out;
  AppendJsonString(text, &out);
  return out;
}

}  // namespace dvexport::common
