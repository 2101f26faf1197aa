#include "tests/encode/rfc4180_parser.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dvexport::encode::test_support {

absl::StatusOr<std::vector<CsvRecord>> ParseCsvStrictly(std::string_view document) {
  std::vector<CsvRecord> records;
  CsvRecord record;
  size_t i = 0;
  auto error = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(what, " at offset ", i));
  };
  while (i < document.size()) {
    CsvField field;
    if (document[i] == '"') {
      field.quoted = true;
      ++i;
      for (;;) {
        if (i >= document.size()) return error("unterminated quoted field");
        if (document[i] != '"') {
          field.value += document[i++];
        } else if (i + 1 < document.size() && document[i + 1] == '"') {
          field.value += '"';
          i += 2;
        } else {
          ++i;
          break;
        }
      }
      if (i >= document.size() || (document[i] != ',' && document[i] != '\n')) {
        return error("closing quote not followed by ',' or newline");
      }
    } else {
      while (i < document.size() && document[i] != ',' && document[i] != '\n') {
        if (document[i] == '"') return error("quote inside an unquoted field");
        if (document[i] == '\r') return error("carriage return outside quotes");
        field.value += document[i++];
      }
      if (i >= document.size()) return error("record without line end");
    }
    record.push_back(std::move(field));
    if (document[i++] == '\n') {
      records.push_back(std::move(record));
      record.clear();
    }
  }
  if (!record.empty()) return error("record without line end");
  return records;
}

}  // namespace dvexport::encode::test_support
