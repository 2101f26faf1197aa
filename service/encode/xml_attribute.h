#ifndef DVEXPORT_SERVICE_ENCODE_XML_ATTRIBUTE_H_
#define DVEXPORT_SERVICE_ENCODE_XML_ATTRIBUTE_H_

// The XML attribute value escaper of the XML and ADX encoders.
//
// Escapes as Woodstox (DHIS2 2.42's StAX writer, default settings) escapes a double-quoted
// attribute value: '&' as &amp;, '<' as &lt;, '"' as &quot;, tab, LF and CR as &#x9; &#xa; &#xd;
// (so that a parser's attribute-value normalization gives them back); '>', '\'', DEL and every
// other character as raw UTF-8, characters beyond the BMP included.
//
// Where Woodstox fails or writes what no XML 1.0 parser accepts, one U+FFFD is written instead,
// so that the document always parses:
// - the other bytes below 0x20 (XML 1.0 cannot carry them at all, not even as a character
//   reference; Woodstox throws "Invalid white space character" and DHIS2's export breaks off);
// - U+FFFE and U+FFFF (Woodstox writes &#xfffe; and &#xffff;, which parsers reject);
// - each ill-formed UTF-8 subpart, as common::ScanUtf8Sequence describes.
// The output is always well-formed UTF-8 made of XML 1.0 characters.

#include <cstddef>
#include <string_view>

#include "common/plain_copy.h"

namespace dvexport::encode {

// Worst-case output bytes per input byte: '"' becomes &quot;. Nothing grows more (&amp; 5,
// &#xa; 5, a replaced byte 3).
inline constexpr size_t kMaxXmlEscapedBytesPerInputByte = 6;

// The lanes of "v" that WriteXmlAttributeEscaped does not copy as they are: below 0x20, '&',
// '<', '"' and non-ASCII (signed lanes: < 0x20 also selects the bytes 0x80..0xFF, which are
// validated).
inline common::ByteVector XmlAttentionMask(common::ByteVector v) {
  return (v < 0x20) | (v == '&') | (v == '<') | (v == '"');
}

// WriteXmlAttributeEscaped() for values with at least one byte that needs attention. Not
// inlined: rare and large.
[[gnu::noinline]] char* WriteXmlAttributeEscapedSlowly(char* p, const unsigned char* s, size_t n);

// Writes the escaped attribute value (without quotes) and returns the end of what it wrote.
// Makes no capacity check and does not allocate.
// REQUIRES: kMaxXmlEscapedBytesPerInputByte * bytes.size() bytes writable at "p".
inline char* WriteXmlAttributeEscaped(char* p, std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  if (common::CopyIfPlain(s, n, p, XmlAttentionMask)) return p + n;
  return WriteXmlAttributeEscapedSlowly(p, s, n);
}

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_XML_ATTRIBUTE_H_
