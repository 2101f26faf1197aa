#ifndef DVEXPORT_TESTS_ENCODE_UNICODE_REFERENCE_H_
#define DVEXPORT_TESTS_ENCODE_UNICODE_REFERENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Slow, deliberately simple Unicode helpers written from the definitions rather than from the
// encoders' tables, so that tests compare the encoders against an independent implementation.
namespace dvexport::encode::test_support {

// The UTF-8 encoding of "code_point" (any value up to 0x10FFFF, surrogates included).
std::string EncodeUtf8(uint32_t code_point);

// The code points of "bytes", or std::nullopt if it is not well-formed UTF-8: each sequence
// must decode to a Unicode scalar value whose shortest encoding is exactly those bytes.
std::optional<std::vector<uint32_t>> DecodeUtf8(std::string_view bytes);

inline bool IsWellFormedUtf8(std::string_view bytes) { return DecodeUtf8(bytes).has_value(); }

// "bytes" with each ill-formed maximal subpart replaced by U+FFFD. A maximal subpart is the
// longest prefix of some well-formed sequence starting at that position, or one byte if there
// is none (Unicode §3.9). Computed from the set of all prefixes of all encoded scalar values.
std::string ReplaceIllFormedUtf8(std::string_view bytes);

// ReplaceIllFormedUtf8, then U+FFFD for each character outside XML 1.0's Char production
// (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]): the text a parser
// gives back for an attribute the XML encoders wrote from "bytes".
std::string ReplaceNonXmlCharacters(std::string_view bytes);

// Java's String.trim() on UTF-8 text: removes leading and trailing bytes 0x00..0x20.
std::string_view JavaTrim(std::string_view text);

}  // namespace dvexport::encode::test_support

#endif  // DVEXPORT_TESTS_ENCODE_UNICODE_REFERENCE_H_
