#include "service/encode/xml_text.h"

#include <cstring>

#include "common/plain_copy.h"
#include "common/utf8_sequence.h"

namespace dvexport::encode {
namespace {

using common::ByteVector;

// The lanes WriteXmlTextEscaped does not copy as they are: below 0x20 (and, signed, every
// non-ASCII byte), '&', '<', '>' and DEL.
ByteVector XmlTextAttentionMask(ByteVector v) {
  return (v < 0x20) | (v == '&') | (v == '<') | (v == '>') | (v == 0x7F);
}

char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

// &#x<two lowercase hex digits>; for "c" in 0x7F..0x9F, as Woodstox's writeAsEntity spells it.
char* WriteHexReference(char* p, unsigned c) {
  static constexpr char kHex[] = "0123456789abcdef";
  p = WriteLiteral(p, "&#x");
  *p++ = kHex[c >> 4];
  *p++ = kHex[c & 0xF];
  *p++ = ';';
  return p;
}

char* WriteReplacement(char* p) {
  std::memcpy(p, common::kUtf8ReplacementCharacter, common::kUtf8ReplacementCharacterLength);
  return p + common::kUtf8ReplacementCharacterLength;
}

}  // namespace

char* WriteXmlTextEscaped(char* p, std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  if (common::CopyIfPlain(s, n, p, XmlTextAttentionMask)) return p + n;
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      const common::Utf8Sequence sequence = common::ScanUtf8Sequence(s + i, n - i);
      const bool non_character =
          sequence.length == 3 && c == 0xEF && s[i + 1] == 0xBF && s[i + 2] >= 0xBE;
      if (!sequence.well_formed || non_character) {
        p = WriteReplacement(p);
      } else if (sequence.length == 2 && c == 0xC2 && s[i + 1] <= 0x9F) {
        p = WriteHexReference(p, s[i + 1]);  // U+0080..U+009F
      } else {
        std::memcpy(p, s + i, sequence.length);
        p += sequence.length;
      }
      i += sequence.length;
      continue;
    }
    switch (c) {
      case '&':
        p = WriteLiteral(p, "&amp;");
        break;
      case '<':
        p = WriteLiteral(p, "&lt;");
        break;
      case '>':
        if (i == 0 || s[i - 1] == ']') {
          p = WriteLiteral(p, "&gt;");
        } else {
          *p++ = '>';
        }
        break;
      case '\r':
        p = WriteLiteral(p, "&#xd;");
        break;
      case 0x7F:
        p = WriteHexReference(p, c);
        break;
      case '\t':
      case '\n':
        *p++ = static_cast<char>(c);
        break;
      default:
        if (c < 0x20) {
          p = WriteReplacement(p);
        } else {
          *p++ = static_cast<char>(c);
        }
    }
    ++i;
  }
  return p;
}

}  // namespace dvexport::encode
