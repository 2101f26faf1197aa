#include "service/encode/json_243_string.h"

#include <cstring>

#include "common/escaped_copy.h"
#include "common/utf8_sequence.h"

namespace dvexport::encode {
namespace {

using common::AsciiEscape;
using common::AsciiEscapeTable;
using common::ByteVector;
using common::Utf8Sequence;

constexpr char kUpperHexDigits[] = "0123456789ABCDEF";

struct Json243Escaping {
  static ByteVector AttentionMask(ByteVector v) { return common::JsonAttentionMask(v); }

  // The escape sequence of each ASCII byte that needs one: json-tree's five control escapes,
  // \" and \\, and \u00XX for the other bytes below 0x20 (2.43 writes those raw).
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

  // U+2028 (E2 80 A8) and U+2029 (E2 80 A9) escaped, every other well-formed sequence as it is,
  // U+FFFD for an ill-formed subpart.
  static char* WriteNonAscii(char* p, const unsigned char* s, Utf8Sequence sequence) {
    if (sequence.length == 3 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9)) {
      std::memcpy(p, s[2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
      return p + 6;
    }
    return common::WriteRepairedUtf8Sequence(p, s, sequence);
  }
};

}  // namespace

char* WriteJson243EscapedSlowly(char* p, const unsigned char* s, size_t n) {
  return common::WriteEscapedCopy<Json243Escaping>(p, s, n);
}

}  // namespace dvexport::encode
