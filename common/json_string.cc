#include "common/json_string.h"

#include <cstdint>
#include <cstring>

#include "common/escaped_copy.h"
#include "common/utf8_sequence.h"

namespace dvexport::common {
namespace {

constexpr char kUpperHexDigits[] = "0123456789ABCDEF";

char* WriteUnicodeEscape(char* p, unsigned code_unit) {
  p[0] = '\\';
  p[1] = 'u';
  p[2] = kUpperHexDigits[(code_unit >> 12) & 15];
  p[3] = kUpperHexDigits[(code_unit >> 8) & 15];
  p[4] = kUpperHexDigits[(code_unit >> 4) & 15];
  p[5] = kUpperHexDigits[code_unit & 15];
  return p + 6;
}

struct JsonEscaping {
  static ByteVector AttentionMask(ByteVector v) { return JsonAttentionMask(v); }

  // The escape sequence of each ASCII byte that needs one (Jackson's sOutputEscapes128).
  static constexpr AsciiEscapeTable kAsciiEscapes = [] {
    AsciiEscapeTable table{};
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

  // Two- and three-byte sequences as they are, four-byte ones as an escaped surrogate pair.
  static char* WriteNonAscii(char* p, const unsigned char* s, Utf8Sequence sequence) {
    if (!sequence.well_formed) {
      std::memcpy(p, kUtf8ReplacementCharacter, kUtf8ReplacementCharacterLength);
      return p + kUtf8ReplacementCharacterLength;
    }
    if (sequence.length < 4) {
      p[0] = static_cast<char>(s[0]);
      p[1] = static_cast<char>(s[1]);
      if (sequence.length == 3) p[2] = static_cast<char>(s[2]);
      return p + sequence.length;
    }
    const uint32_t offset = DecodeUtf8FourByteSequence(s) - 0x10000;
    p = WriteUnicodeEscape(p, 0xD800 + (offset >> 10));
    return WriteUnicodeEscape(p, 0xDC00 + (offset & 0x3FF));
  }
};

}  // namespace

char* WriteJsonEscapedSlowly(char* p, const unsigned char* s, size_t n) {
  return WriteEscapedCopy<JsonEscaping>(p, s, n);
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
