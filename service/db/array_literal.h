#ifndef DVEXPORT_SERVICE_DB_ARRAY_LITERAL_H_
#define DVEXPORT_SERVICE_DB_ARRAY_LITERAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dvexport::db {

// "values" as a PostgreSQL array literal, "{1,2,3}" ("{}" when empty): a text parameter for
// "= ANY($1::bigint[])", or the text between quotes of "ANY('{...}'::bigint[])".
inline std::string ToArrayLiteral(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    absl::StrAppend(&out, values[i]);
  }
  out += '}';
  return out;
}

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_ARRAY_LITERAL_H_
