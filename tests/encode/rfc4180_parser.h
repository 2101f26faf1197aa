#ifndef DVEXPORT_TESTS_ENCODE_RFC4180_PARSER_H_
#define DVEXPORT_TESTS_ENCODE_RFC4180_PARSER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace dvexport::encode::test_support {

struct CsvField {
  std::string value;  // Unquoted, with doubled quotes collapsed.
  bool quoted = false;
};

using CsvRecord = std::vector<CsvField>;

// Parses "document" as RFC 4180 CSV with '\n' line ends, strictly: every record ends with '\n';
// a '"' may only open a field, close it, or be doubled inside a quoted field; a closing quote
// must be followed by ',' or '\n'; '\r' is only allowed inside quotes.
absl::StatusOr<std::vector<CsvRecord>> ParseCsvStrictly(std::string_view document);

}  // namespace dvexport::encode::test_support

#endif  // DVEXPORT_TESTS_ENCODE_RFC4180_PARSER_H_
