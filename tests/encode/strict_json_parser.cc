#include "tests/encode/strict_json_parser.h"

#include <cstdint>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/encode/unicode_reference.h"

namespace dvexport::encode::test_support {

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    if (!IsWellFormedUtf8(text_)) return absl::InvalidArgumentError("ill-formed UTF-8");
    JsonValue value;
    if (!ParseValue(&value, 0)) return Error();
    SkipWhitespace();
    if (pos_ != text_.size()) {
      error_ = "trailing bytes";
      return Error();
    }
    return value;
  }

 private:
  absl::Status Error() const {
    return absl::InvalidArgumentError(absl::StrCat(error_, " at offset ", pos_));
  }

  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  void SkipWhitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  bool ParseValue(JsonValue* value, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    SkipWhitespace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(value, depth);
    if (c == '[') return ParseArray(value, depth);
    if (c == '"') {
      value->type = JsonValue::Type::kString;
      return ParseString(&value->text);
    }
    if (Consume("null")) {
      value->type = JsonValue::Type::kNull;
      return true;
    }
    if (Consume("true")) {
      value->type = JsonValue::Type::kBool;
      value->boolean = true;
      return true;
    }
    if (Consume("false")) {
      value->type = JsonValue::Type::kBool;
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(value);
    return Fail("unexpected character");
  }

  bool ParseObject(JsonValue* value, int depth) {
    value->type = JsonValue::Type::kObject;
    ++pos_;  // '{'
    SkipWhitespace();
    if (Consume("}")) return true;
    std::set<std::string> keys;
    for (;;) {
      SkipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a key");
      std::string key;
      if (!ParseString(&key)) return false;
      if (!keys.insert(key).second) return Fail("duplicate key " + key);
      SkipWhitespace();
      if (!Consume(":")) return Fail("expected ':'");
      JsonValue member;
      if (!ParseValue(&member, depth + 1)) return false;
      value->members.emplace_back(std::move(key), std::move(member));
      SkipWhitespace();
      if (Consume("}")) return true;
      if (!Consume(",")) return Fail("expected ',' or '}'");
    }
  }

  bool ParseArray(JsonValue* value, int depth) {
    value->type = JsonValue::Type::kArray;
    ++pos_;  // '['
    SkipWhitespace();
    if (Consume("]")) return true;
    for (;;) {
      JsonValue element;
      if (!ParseValue(&element, depth + 1)) return false;
      value->elements.push_back(std::move(element));
      SkipWhitespace();
      if (Consume("]")) return true;
      if (!Consume(",")) return Fail("expected ',' or ']'");
    }
  }

  bool ParseNumber(JsonValue* value) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t first = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ - first;
    };
    Consume("-");
    if (Consume("0")) {
      // No leading zeros.
    } else if (digits() == 0) {
      return Fail("bad number");
    }
    if (Consume(".") && digits() == 0) return Fail("bad fraction");
    if (Consume("e") || Consume("E")) {
      if (!Consume("+")) Consume("-");
      if (digits() == 0) return Fail("bad exponent");
    }
    value->type = JsonValue::Type::kNumber;
    value->text = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  bool ParseHex4(uint32_t* code_unit) {
    if (text_.size() - pos_ < 4) return Fail("short \\u escape");
    *code_unit = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = text_[pos_++];
      uint32_t digit;
      if (h >= '0' && h <= '9') {
        digit = h - '0';
      } else if (h >= 'a' && h <= 'f') {
        digit = h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        digit = h - 'A' + 10;
      } else {
        return Fail("bad hex digit");
      }
      *code_unit = *code_unit * 16 + digit;
    }
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // '"'
    for (;;) {
      if (pos_ >= text_.size()) return Fail("unterminated string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail("raw control character in string");
      if (c != '\\') {
        out->push_back(static_cast<char>(c));  // Well-formedness was checked up front.
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size()) return Fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t unit;
          if (!ParseHex4(&unit)) return false;
          if (unit >= 0xDC00 && unit <= 0xDFFF) return Fail("lone low surrogate");
          if (unit >= 0xD800 && unit <= 0xDBFF) {
            uint32_t low;
            if (!Consume("\\u") || !ParseHex4(&low)) return Fail("high surrogate without pair");
            if (low < 0xDC00 || low > 0xDFFF) return Fail("high surrogate without low");
            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
          }
          out->append(EncodeUtf8(unit));
          break;
        }
        default:
          return Fail("unknown escape");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

JsonValue::JsonValue() = default;
JsonValue::JsonValue(const JsonValue&) = default;
JsonValue::JsonValue(JsonValue&&) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue&) = default;
JsonValue& JsonValue::operator=(JsonValue&&) noexcept = default;
JsonValue::~JsonValue() = default;

absl::StatusOr<JsonValue> ParseJsonStrictly(std::string_view document) {
  return Parser(document).ParseDocument();
}

}  // namespace dvexport::encode::test_support
