#ifndef DVEXPORT_COMMON_UTF8_SEQUENCE_H_
#define DVEXPORT_COMMON_UTF8_SEQUENCE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dvexport::common {

// U+FFFD REPLACEMENT CHARACTER in UTF-8. The encoders write it in place of ill-formed input.
inline constexpr char kUtf8ReplacementCharacter[] = "\xEF\xBF\xBD";
inline constexpr size_t kUtf8ReplacementCharacterLength = 3;

// What starts at a non-ASCII byte of the input.
struct Utf8Sequence {
  // Bytes covered: the whole sequence (2 to 4) when well formed; otherwise the maximal subpart,
  // i.e. the longest prefix of a well-formed sequence that starts there, but at least 1.
  size_t length;
  bool well_formed;
};

// Classifies the bytes at "s" following the Unicode Standard (Table 3-7, well-formed UTF-8 byte
// sequences). Overlong forms, encoded surrogates (ED A0..BF), values above U+10FFFF, stray
// continuation bytes, C0, C1, F5..FF and truncated sequences are ill formed. Replacing each
// ill-formed maximal subpart with one U+FFFD is the "best practice" of Unicode §3.9 (also what
// the WHATWG Encoding Standard and Python's errors="replace" do): E2 82 41 becomes U+FFFD 'A',
// ED A0 80 becomes three U+FFFD.
//
// REQUIRES: n >= 1 and s[0] >= 0x80.
inline Utf8Sequence ScanUtf8Sequence(const unsigned char* s, size_t n) {
  const unsigned char lead = s[0];
  size_t length;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // Below: overlong.
    if (lead == 0xED) second_max = 0x9F;  // Above: surrogates U+D800..U+DFFF.
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // Below: overlong.
    if (lead == 0xF4) second_max = 0x8F;  // Above: beyond U+10FFFF.
  } else {
    return Utf8Sequence{1, false};
  }
  if (n < 2 || s[1] < second_min || s[1] > second_max) return Utf8Sequence{1, false};
  for (size_t i = 2; i < length; ++i) {
    if (i >= n || (s[i] & 0xC0) != 0x80) return Utf8Sequence{i, false};
  }
  return Utf8Sequence{length, true};
}

// The code point of a well-formed four-byte sequence.
inline uint32_t DecodeUtf8FourByteSequence(const unsigned char* s) {
  return (static_cast<uint32_t>(s[0] & 0x07) << 18) | (static_cast<uint32_t>(s[1] & 0x3F) << 12) |
         (static_cast<uint32_t>(s[2] & 0x3F) << 6) | static_cast<uint32_t>(s[3] & 0x3F);
}

// Writes the sequence at "s" that "sequence" describes (ScanUtf8Sequence's result) to "p" when it
// is well formed, otherwise U+FFFD in place of its ill-formed subpart, and returns the end of
// what was written: at most kUtf8ReplacementCharacterLength bytes per input byte.
inline char* WriteRepairedUtf8Sequence(char* p, const unsigned char* s, Utf8Sequence sequence) {
  if (sequence.well_formed) {
    std::memcpy(p, s, sequence.length);
    return p + sequence.length;
  }
  std::memcpy(p, kUtf8ReplacementCharacter, kUtf8ReplacementCharacterLength);
  return p + kUtf8ReplacementCharacterLength;
}

// The length of the longest well-formed UTF-8 prefix of the "n" bytes at "s": n when they are
// all valid UTF-8. ASCII is skipped eight bytes at a time.
inline size_t WellFormedUtf8Prefix(const unsigned char* s, size_t n) {
  size_t i = 0;
  while (true) {
    for (; n - i >= 8; i += 8) {
      uint64_t word;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ULL) != 0) break;
    }
    while (i < n && s[i] < 0x80) ++i;
    if (i == n) return n;
    const Utf8Sequence sequence = ScanUtf8Sequence(s + i, n - i);
    if (!sequence.well_formed) return i;
    i += sequence.length;
  }
}

// The bytes the "n" bytes at "s" take with each ill-formed subpart replaced by U+FFFD.
inline size_t RepairedUtf8Size(const unsigned char* s, size_t n) {
  size_t size = 0;
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) {
      ++size;
      ++i;
      continue;
    }
    const Utf8Sequence sequence = ScanUtf8Sequence(s + i, n - i);
    size += sequence.well_formed ? sequence.length : kUtf8ReplacementCharacterLength;
    i += sequence.length;
  }
  return size;
}

// Writes the "n" bytes at "s" to "p" with each ill-formed subpart replaced by U+FFFD
// (RepairedUtf8Size bytes) and returns the end of what was written.
inline char* WriteRepairedUtf8(char* p, const unsigned char* s, size_t n) {
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) {
      *p++ = static_cast<char>(s[i++]);
      continue;
    }
    const Utf8Sequence sequence = ScanUtf8Sequence(s + i, n - i);
    p = WriteRepairedUtf8Sequence(p, s + i, sequence);
    i += sequence.length;
  }
  return p;
}

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_UTF8_SEQUENCE_H_
