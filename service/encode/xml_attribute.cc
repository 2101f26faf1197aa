#include "service/encode/xml_attribute.h"

#include <cstring>

#include "common/escaped_copy.h"
#include "common/utf8_sequence.h"

namespace dvexport::encode {
namespace {

using common::AsciiEscape;
using common::AsciiEscapeTable;
using common::ByteVector;
using common::Utf8Sequence;

// U+FFFE and U+FFFF: well-formed UTF-8, but not XML characters.
inline bool IsXmlNonCharacter(const unsigned char* s, size_t length) {
  return length == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] >= 0xBE;
}

struct XmlAttributeEscaping {
  static ByteVector AttentionMask(ByteVector v) { return XmlAttentionMask(v); }

  // What each ASCII byte that needs attention becomes.
  static constexpr AsciiEscapeTable kAsciiEscapes = [] {
    AsciiEscapeTable table{};
    for (int c = 0; c < 0x20; ++c) {
      table[c] = AsciiEscape{{'\xEF', '\xBF', '\xBD'}, 3};  // U+FFFD
    }
    table['\t'] = AsciiEscape{{'&', '#', 'x', '9', ';'}, 5};
    table['\n'] = AsciiEscape{{'&', '#', 'x', 'a', ';'}, 5};
    table['\r'] = AsciiEscape{{'&', '#', 'x', 'd', ';'}, 5};
    table['&'] = AsciiEscape{{'&', 'a', 'm', 'p', ';'}, 5};
    table['<'] = AsciiEscape{{'&', 'l', 't', ';'}, 4};
    table['"'] = AsciiEscape{{'&', 'q', 'u', 'o', 't', ';'}, 6};
    return table;
  }();

  // Well-formed XML characters as they are; U+FFFD for the rest.
  static char* WriteNonAscii(char* p, const unsigned char* s, Utf8Sequence sequence) {
    if (sequence.well_formed && !IsXmlNonCharacter(s, sequence.length)) {
      std::memcpy(p, s, sequence.length);
      return p + sequence.length;
    }
    std::memcpy(p, common::kUtf8ReplacementCharacter, common::kUtf8ReplacementCharacterLength);
    return p + common::kUtf8ReplacementCharacterLength;
  }
};

}  // namespace

char* WriteXmlAttributeEscapedSlowly(char* p, const unsigned char* s, size_t n) {
  return common::WriteEscapedCopy<XmlAttributeEscaping>(p, s, n);
}

}  // namespace dvexport::encode
