#ifndef DVEXPORT_COMMON_JSON_STRING_H_
#define DVEXPORT_COMMON_JSON_STRING_H_

// The one JSON string escaper: the JSON encoder, the server's call log and the CLI's JSON lines
// all write strings with it.
//
// Strings are escaped as Jackson's UTF-8 generator (DHIS2 2.42) does: \" \\ \b \t \n \f \r; the
// other bytes below 0x20 as \u00XX (upper-case hex); characters beyond the BMP as an escaped
// surrogate pair (U+1F600 as \uD83D\uDE00); everything else, including '/', DEL and
// U+2028/U+2029, as raw UTF-8. Ill-formed UTF-8 is replaced with U+FFFD as described at
// ScanUtf8Sequence, so the output is always well-formed UTF-8 and valid JSON.

#include <cstddef>
#include <string>
#include <string_view>

#include "common/plain_copy.h"

namespace dvexport::common {

// Worst-case output bytes per input byte of WriteJsonEscaped. A byte below 0x20 becomes \u00XX:
// 6. Everything else is smaller: '"' and '\' become 2 bytes; an ill-formed byte at most 3
// (U+FFFD); a four-byte sequence 12 (\uD83D\uDE00), i.e. 3 per input byte; two- and three-byte
// sequences are copied.
inline constexpr size_t kMaxJsonEscapedBytesPerInputByte = 6;

// The lanes of "v" that WriteJsonEscaped does not copy as they are: below 0x20, '"', '\' and
// non-ASCII (signed lanes: < 0x20 also selects the bytes 0x80..0xFF).
inline ByteVector JsonAttentionMask(ByteVector v) { return (v < 0x20) | (v == '"') | (v == '\\'); }

// WriteJsonEscaped() for strings with at least one byte that needs attention. Not inlined: it is
// rare and large.
[[gnu::noinline]] char* WriteJsonEscapedSlowly(char* p, const unsigned char* s, size_t n);

// Writes the escaped contents of a string (without quotes) and returns the end of what it wrote.
// Makes no capacity check and does not allocate.
// REQUIRES: kMaxJsonEscapedBytesPerInputByte * bytes.size() bytes writable at "p".
inline char* WriteJsonEscaped(char* p, std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  if (CopyIfPlain(s, n, p, JsonAttentionMask)) return p + n;
  return WriteJsonEscapedSlowly(p, s, n);
}

// Appends "text" as a JSON string: between quotes, escaped as WriteJsonEscaped does.
void AppendJsonString(std::string_view text, std::string* out);

// "text" as a JSON string, as AppendJsonString writes it.
std::string JsonString(std::string_view text);

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_JSON_STRING_H_
