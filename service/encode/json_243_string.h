#ifndef DVEXPORT_SERVICE_ENCODE_JSON_243_STRING_H_
#define DVEXPORT_SERVICE_ENCODE_JSON_243_STRING_H_

// The JSON string escaper of DHIS2 2.43's export (json-tree 1.8.1's JsonAppender.appendEscaped,
// written through a UTF-8 PrintStream), for Json243DataValueEncoder.
//
// Escaped as 2.43 escapes them: \" \\ \b \t \n \f \r, and U+2028, U+2029 as \u2028, \u2029.
// Written raw as 2.43 writes them: '/', DEL, every other character, and characters beyond the BMP
// as their four UTF-8 bytes (2.42's Jackson wrote an escaped surrogate pair instead; the JVM's
// UTF-8 encoder joins the two UTF-16 halves json-tree appends one by one).
//
// Deviations, so that the output is always well-formed UTF-8 and valid JSON:
// - the other bytes below 0x20 become \u00XX (upper-case hex, as common::WriteJsonEscaped writes
//   them): 2.43 writes them raw (its `case -31` branch never matches), which no strict JSON parser
//   accepts;
// - each ill-formed UTF-8 subpart becomes U+FFFD, as common::ScanUtf8Sequence describes (2.43
//   reads only well-formed text from PostgreSQL).

#include <cstddef>
#include <string_view>

#include "common/json_string.h"
#include "common/plain_copy.h"

namespace dvexport::encode {

// Worst-case output bytes per input byte of WriteJson243Escaped: a byte below 0x20 becomes
// \u00XX, 6. Everything else is smaller: '"' and '\' 2; U+2028's three bytes \u2028, 2 per byte;
// an ill-formed byte at most 3 (U+FFFD); other sequences are copied.
inline constexpr size_t kMaxJson243EscapedBytesPerInputByte = 6;

// WriteJson243Escaped() for strings with at least one byte that needs attention. Not inlined: it
// is rare and large.
[[gnu::noinline]] char* WriteJson243EscapedSlowly(char* p, const unsigned char* s, size_t n);

// Writes the escaped contents of a string (without quotes) and returns the end of what it wrote.
// Makes no capacity check and does not allocate.
// REQUIRES: kMaxJson243EscapedBytesPerInputByte * bytes.size() bytes writable at "p".
inline char* WriteJson243Escaped(char* p, std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  // The same bytes need attention as for 2.42's escaper: below 0x20, '"', '\' and non-ASCII.
  if (common::CopyIfPlain(s, n, p, common::JsonAttentionMask)) return p + n;
  return WriteJson243EscapedSlowly(p, s, n);
}

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_JSON_243_STRING_H_
