#include "tests/support/strict_xml_parser.h"

#include <expat.h>

#include <algorithm>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dvexport::test_support {
namespace {

struct ParseState {
  XmlDocument document;
  std::vector<XmlElement*> open;  // innermost last
  bool root_seen = false;
};

void OnXmlDecl(void* data, const XML_Char* version, const XML_Char* encoding, int) {
  auto* state = static_cast<ParseState*>(data);
  if (version != nullptr) state->document.version = version;
  if (encoding != nullptr) state->document.encoding = encoding;
}

void OnStart(void* data, const XML_Char* name, const XML_Char** attributes) {
  auto* state = static_cast<ParseState*>(data);
  XmlElement* element;
  if (state->open.empty()) {
    element = &state->document.root;
    state->root_seen = true;
  } else {
    element = &state->open.back()->children.emplace_back();
  }
  element->name = name;
  for (const XML_Char** a = attributes; *a != nullptr; a += 2) {
    element->attributes.emplace_back(a[0], a[1]);
  }
  state->open.push_back(element);
}

void OnEnd(void* data, const XML_Char*) { static_cast<ParseState*>(data)->open.pop_back(); }

void OnCharacters(void* data, const XML_Char* s, int length) {
  auto* state = static_cast<ParseState*>(data);
  if (!state->open.empty()) state->open.back()->text.append(s, static_cast<size_t>(length));
}

}  // namespace

const std::string* XmlElement::Attribute(std::string_view name) const {
  for (const auto& [key, value] : attributes) {
    if (key == name) return &value;
  }
  return nullptr;
}

absl::StatusOr<XmlDocument> ParseXmlStrictly(std::string_view document) {
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(
      XML_ParserCreateNS("UTF-8", '|'), &XML_ParserFree);
  if (parser == nullptr) return absl::ResourceExhaustedError("XML_ParserCreateNS");
  ParseState state;
  XML_SetUserData(parser.get(), &state);
  XML_SetXmlDeclHandler(parser.get(), OnXmlDecl);
  XML_SetElementHandler(parser.get(), OnStart, OnEnd);
  XML_SetCharacterDataHandler(parser.get(), OnCharacters);
  // In pieces, so that documents beyond INT_MAX bytes parse too.
  constexpr size_t kPiece = 1 << 20;
  size_t offset = 0;
  do {
    const size_t n = std::min(kPiece, document.size() - offset);
    const bool last = offset + n == document.size();
    if (XML_Parse(parser.get(), document.data() + offset, static_cast<int>(n), last) !=
        XML_STATUS_OK) {
      return absl::InvalidArgumentError(
          absl::StrCat("not well-formed XML: ", XML_ErrorString(XML_GetErrorCode(parser.get())),
                       " at byte ", XML_GetCurrentByteIndex(parser.get())));
    }
    offset += n;
  } while (offset < document.size());
  if (!state.root_seen) return absl::InvalidArgumentError("no root element");
  return std::move(state.document);
}

std::string XmlCharactersOnly(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += "\xEF\xBF\xBD";
    } else if (c == 0xEF && i + 2 < text.size() && text[i + 1] == '\xBF' &&
               (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
      out += "\xEF\xBF\xBD";
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace dvexport::test_support
