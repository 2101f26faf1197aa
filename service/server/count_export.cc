#include "service/server/count_export.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace dvexport::server {

absl::StatusOr<int64_t> CountDataValues(db::PgConnection& conn, const db::ExportScope& scope) {
  if (scope.MatchesNothing()) return 0;
  absl::StatusOr<db::PgResult> result = conn.Query(
      absl::StrCat("SELECT count(*) FROM datavalue dv WHERE ", db::BuildDataValueWhereSql(scope)));
  if (!result.ok()) return result.status();
  int64_t count = 0;
  if (PQntuples(result->get()) != 1 || !absl::SimpleAtoi(PQgetvalue(result->get(), 0, 0), &count)) {
    return absl::InternalError("count(*) did not return one number");
  }
  if (scope.limit.has_value()) count = std::min<int64_t>(count, *scope.limit);
  return count;
}

}  // namespace dvexport::server
