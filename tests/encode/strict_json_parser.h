#ifndef DVEXPORT_TESTS_ENCODE_STRICT_JSON_PARSER_H_
#define DVEXPORT_TESTS_ENCODE_STRICT_JSON_PARSER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace dvexport::encode::test_support {

// A parsed JSON value. Objects keep their members in document order.
struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // kString: the decoded UTF-8 contents; kNumber: the literal.
  std::vector<JsonValue> elements;
  std::vector<std::pair<std::string, JsonValue>> members;

  // Out of line: clang with libstdc++ cannot instantiate them while JsonValue is incomplete.
  JsonValue();
  JsonValue(const JsonValue&);
  JsonValue(JsonValue&&) noexcept;
  JsonValue& operator=(const JsonValue&);
  JsonValue& operator=(JsonValue&&) noexcept;
  ~JsonValue();
};

// Parses "document" as exactly one JSON text (RFC 8259) and fails on anything the RFC does not
// allow, notably: ill-formed UTF-8 anywhere, raw bytes below 0x20 in strings, unknown escapes,
// \u escapes that form a lone or reversed surrogate, duplicate object keys, whitespace-free
// garbage after the value. Whitespace between tokens is accepted.
absl::StatusOr<JsonValue> ParseJsonStrictly(std::string_view document);

}  // namespace dvexport::encode::test_support

#endif  // DVEXPORT_TESTS_ENCODE_STRICT_JSON_PARSER_H_
