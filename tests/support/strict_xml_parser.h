#ifndef DVEXPORT_TESTS_SUPPORT_STRICT_XML_PARSER_H_
#define DVEXPORT_TESTS_SUPPORT_STRICT_XML_PARSER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace dvexport::test_support {

// A parsed element. Names are "namespace|local" when the element is in a namespace (expat's
// namespace processing), else "local"; namespace declarations are not attributes.
struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in document order, decoded
  std::vector<XmlElement> children;
  std::string text;  // the character data directly inside, concatenated

  // The value of attribute "name", or nullptr.
  const std::string* Attribute(std::string_view name) const;
};

struct XmlDocument {
  std::string version;   // of the XML declaration, empty without one
  std::string encoding;  // likewise
  XmlElement root;
};

// Parses "document" with expat (namespace-aware, UTF-8, XML 1.0), which fails on anything not
// well-formed, notably: ill-formed UTF-8, characters XML 1.0 does not allow (raw or as a
// character reference: controls below 0x20 but tab, LF and CR, U+FFFE, U+FFFF), '<' or an
// unescaped '&' in an attribute, unbound prefixes, content after the root element. The error
// names expat's reason and the byte offset.
absl::StatusOr<XmlDocument> ParseXmlStrictly(std::string_view document);

// What an XML parser gives back for "text" (valid UTF-8, as the database holds it): U+FFFD in place
// of each character XML 1.0 cannot carry (controls but tab, LF and CR; U+FFFE; U+FFFF).
std::string XmlCharactersOnly(const std::string& text);

}  // namespace dvexport::test_support

#endif  // DVEXPORT_TESTS_SUPPORT_STRICT_XML_PARSER_H_
