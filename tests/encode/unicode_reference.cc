#include "tests/encode/unicode_reference.h"

#include <unordered_set>

namespace dvexport::encode::test_support {

namespace {

bool IsScalarValue(uint32_t code_point) {
  return code_point <= 0x10FFFF && (code_point < 0xD800 || code_point > 0xDFFF);
}

// Every proper prefix of the encoding of every scalar value, as strings.
const std::unordered_set<std::string>& ProperPrefixes() {
  static const auto* prefixes = [] {
    auto* set = new std::unordered_set<std::string>();
    for (uint32_t code_point = 0x80; code_point <= 0x10FFFF; ++code_point) {
      if (!IsScalarValue(code_point)) continue;
      const std::string encoded = EncodeUtf8(code_point);
      for (size_t length = 1; length < encoded.size(); ++length) {
        set->insert(encoded.substr(0, length));
      }
    }
    return set;
  }();
  return *prefixes;
}

// If a well-formed sequence starts at bytes[0], its length; else 0.
size_t WellFormedSequenceLength(std::string_view bytes) {
  for (size_t length = 1; length <= 4 && length <= bytes.size(); ++length) {
    const auto decoded = DecodeUtf8(bytes.substr(0, length));
    if (decoded.has_value() && decoded->size() == 1) return length;
  }
  return 0;
}

}  // namespace

std::string EncodeUtf8(uint32_t code_point) {
  std::string out;
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
  return out;
}

std::optional<std::vector<uint32_t>> DecodeUtf8(std::string_view bytes) {
  std::vector<uint32_t> code_points;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    size_t length;
    uint32_t code_point;
    if (lead < 0x80) {
      length = 1;
      code_point = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code_point = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code_point = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code_point = lead & 0x07;
    } else {
      return std::nullopt;
    }
    if (bytes.size() - i < length) return std::nullopt;
    for (size_t k = 1; k < length; ++k) {
      const auto continuation = static_cast<unsigned char>(bytes[i + k]);
      if ((continuation & 0xC0) != 0x80) return std::nullopt;
      code_point = (code_point << 6) | (continuation & 0x3F);
    }
    if (!IsScalarValue(code_point)) return std::nullopt;
    if (EncodeUtf8(code_point) != bytes.substr(i, length)) return std::nullopt;  // Overlong.
    code_points.push_back(code_point);
    i += length;
  }
  return code_points;
}

std::string ReplaceIllFormedUtf8(std::string_view bytes) {
  std::string out;
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t length = WellFormedSequenceLength(bytes.substr(i));
    if (length > 0) {
      out.append(bytes.substr(i, length));
      i += length;
      continue;
    }
    size_t subpart = 1;
    for (size_t k = 3; k >= 1; --k) {
      if (i + k <= bytes.size() && ProperPrefixes().count(std::string(bytes.substr(i, k)))) {
        subpart = k;
        break;
      }
    }
    out += "\xEF\xBF\xBD";
    i += subpart;
  }
  return out;
}

std::string_view JavaTrim(std::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= 0x20) text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= 0x20) text.remove_suffix(1);
  return text;
}

std::string ReplaceNonXmlCharacters(std::string_view bytes) {
  const auto code_points = DecodeUtf8(ReplaceIllFormedUtf8(bytes));
  std::string out;
  for (uint32_t c : *code_points) {
    const bool is_xml_char = c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c <= 0xD7FF) ||
                             (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
    out += EncodeUtf8(is_xml_char ? c : 0xFFFD);
  }
  return out;
}

}  // namespace dvexport::encode::test_support
