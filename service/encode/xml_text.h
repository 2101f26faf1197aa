#ifndef DVEXPORT_SERVICE_ENCODE_XML_TEXT_H_
#define DVEXPORT_SERVICE_ENCODE_XML_TEXT_H_

// The XML character data escaper of the ADX encoder (annotations).
//
// Escapes as Woodstox (DHIS2 2.42's StAX writer, default settings: BufferingXmlWriter's
// writeCharacters) escapes the text of one writeCharacters call: '&' as &amp;, '<' as &lt;, '>'
// as &gt; when it is the text's first character or follows ']' (so that "]]>" never appears),
// CR as &#xd; (Woodstox's default P_OUTPUT_ESCAPE_CR: a raw CR would read back as LF), and
// U+007F to U+009F as &#x7f; to &#x9f;; tab, LF, '"', '\'' and every other character as raw
// UTF-8, characters beyond the BMP included.
//
// What XML 1.0 cannot carry becomes one U+FFFD, as in WriteXmlAttributeEscaped: the other bytes
// below 0x20 (Woodstox throws), U+FFFE and U+FFFF, and each ill-formed UTF-8 subpart. The
// output is always well-formed UTF-8 made of XML 1.0 characters.

#include <cstddef>
#include <string_view>

namespace dvexport::encode {

// Worst-case output bytes per input byte: DEL becomes &#x7f;. Nothing grows more (&amp; 5,
// U+0085's two bytes &#x85; 6, a replaced byte 3).
inline constexpr size_t kMaxXmlTextEscapedBytesPerInputByte = 6;

// Writes the escaped text and returns the end of what it wrote. Makes no capacity check and
// does not allocate.
// REQUIRES: kMaxXmlTextEscapedBytesPerInputByte * bytes.size() bytes writable at "p".
char* WriteXmlTextEscaped(char* p, std::string_view bytes);

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_XML_TEXT_H_
