#ifndef DVEXPORT_SERVICE_SERVER_COUNT_EXPORT_H_
#define DVEXPORT_SERVICE_SERVER_COUNT_EXPORT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "service/db/export_scope.h"
#include "service/db/pg_connection.h"

namespace dvexport::server {

// The number of data values an export of "scope" writes: a count(*) over the
// same condition as the export's COPY, capped at the scope's limit. Reads no
// value and renders nothing.
absl::StatusOr<int64_t> CountDataValues(db::PgConnection& conn, const db::ExportScope& scope);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_COUNT_EXPORT_H_
