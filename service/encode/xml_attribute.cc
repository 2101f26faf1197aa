#include "service/encode/xml_attribute.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "common/utf8_sequence.h"

namespace dvexport::encode {
namespace {

using common::AnyLane;
using common::ByteVector;
using common::LoadByteVector;
using common::ScanUtf8Sequence;
using common::StoreByteVector;
using common::Utf8Sequence;

// 1 for the bytes that are not copied as they are, exactly as XmlAttentionMask.
constexpr std::array<uint8_t, 256> kNeedsAttention = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = (c < 0x20 || c == '&' || c == '<' || c == '"' || c >= 0x80);
  }
  return table;
}();

// What each ASCII byte that needs attention becomes.
struct AsciiEscape {
  char bytes[6];
  uint8_t length;
};

constexpr std::array<AsciiEscape, 128> kAsciiEscapes = [] {
  std::array<AsciiEscape, 128> table{};
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

// U+FFFE and U+FFFF: well-formed UTF-8, but not XML characters.
inline bool IsXmlNonCharacter(const unsigned char* s, size_t length) {
  return length == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] >= 0xBE;
}

}  // namespace

char* WriteXmlAttributeEscapedSlowly(char* p, const unsigned char* s, size_t n) {
  size_t i = 0;
  for (;;) {
    while (n - i >= 16) {
      const ByteVector v = LoadByteVector(s + i);
      if (AnyLane(XmlAttentionMask(v))) break;
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
    if (sequence.well_formed && !IsXmlNonCharacter(s + i, sequence.length)) {
      std::memcpy(p, s + i, sequence.length);
      p += sequence.length;
    } else {
      std::memcpy(p, common::kUtf8ReplacementCharacter, common::kUtf8ReplacementCharacterLength);
      p += common::kUtf8ReplacementCharacterLength;
    }
    i += sequence.length;
  }
}

}  // namespace dvexport::encode
