#include "service/encode/json_string.h"

#include "service/encode/utf8_sequence.h"

namespace dvexport::encode::json_string {

char* WriteEscapedSlowly(char* p, const unsigned char* s, size_t n) {
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
      p = WriteLiteral(
          p, std::string_view(kUtf8ReplacementCharacter, kUtf8ReplacementCharacterLength));
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

}  // namespace dvexport::encode::json_string
