#ifndef DVEXPORT_SERVICE_ENCODE_JSON_LAYOUT_H_
#define DVEXPORT_SERVICE_ENCODE_JSON_LAYOUT_H_

// What the JSON encoders of both DHIS2 versions (json_data_value_encoder.cc,
// json_243_data_value_encoder.cc) build their literals from at compile time: strings that can be
// template arguments, and the two layouts, the white space around the members.

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace dvexport::encode {

// A string of N characters that can be a template argument, for building literals at compile
// time.
template <size_t N>
struct FixedString {
  char chars[N + 1] = {};

  constexpr FixedString() = default;
  constexpr FixedString(const char (&text)[N + 1]) { std::copy_n(text, N + 1, chars); }

  static constexpr size_t size() { return N; }
  constexpr operator std::string_view() const { return std::string_view(chars, N); }
};

template <size_t M>
FixedString(const char (&)[M]) -> FixedString<M - 1>;

// "parts" one after the other.
template <FixedString... parts>
constexpr FixedString<(parts.size() + ...)> Concat() {
  FixedString<(parts.size() + ...)> out;
  size_t n = 0;
  ((std::copy_n(parts.chars, parts.size(), out.chars + n), n += parts.size()), ...);
  return out;
}

// DHIS2's compact layout, no white space at all.
struct CompactJsonLayout {
  static constexpr FixedString kColon = ":";
  static constexpr FixedString kLineEnd = "";
  static constexpr FixedString kDocumentMemberIndent = "";  // before a member of the document
  static constexpr FixedString kValueIndent = "";           // before a value's braces
  static constexpr FixedString kValueMemberIndent = "";     // before a member of a value
};

// Two spaces of indent per level, one member per line, a space after each colon.
struct PrettyJsonLayout {
  static constexpr FixedString kColon = ": ";
  static constexpr FixedString kLineEnd = "\n";
  static constexpr FixedString kDocumentMemberIndent = "\n  ";
  static constexpr FixedString kValueIndent = "\n    ";
  static constexpr FixedString kValueMemberIndent = "\n      ";
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_JSON_LAYOUT_H_
