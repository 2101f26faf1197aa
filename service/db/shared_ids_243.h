#ifndef DVEXPORT_SERVICE_DB_SHARED_IDS_243_H_
#define DVEXPORT_SERVICE_DB_SHARED_IDS_243_H_

// DHIS2 2.43's group header members found from the exported values themselves
// (DefaultDataExportService.encodeGroup, 2.43.1): with an org unit id scheme other than UID, an
// export whose values all share one org unit gets it as the header's orgUnit (and the values
// leave it out); with an attribute option combo scheme other than UID, an export of exactly one
// value gets its combo as the header's attributeOptionCombo. "The values" are the page's when a
// limit or an offset cuts the export.

#include <pqxx/transaction_base>
#include <string>

#include "service/db/export_scope.h"
#include "service/dhis2/export_request_validator.h"

namespace dvexport::db {

// The query of "column" (a datavalue column: "sourceid", "attributeoptioncomboid") of every value
// the export writes, a column of the same name: the page's values, in its order, when a limit or
// an offset cuts the export (DHIS2 2.43 encodes and checks the page it read), else every value's.
// Integers from "scope" only.
std::string ExportedIdsSql(const ExportScope& scope, const char* column);

// Completes scope->group_header (set by the scope's resolution, E8202 and E8203 checked, before
// excludeDefaultAoc leaves the default combo's id out): one query of at most two rows per member
// that may be found, none when the request named it already or the scheme is UID (and the default
// combo's ids with excludeDefaultAoc, which leaves it out of the header). Database errors are
// libpqxx's exceptions.
void FindSharedHeaderIds243(pqxx::transaction_base& tx, const dhis2::ExportParams& params,
                            ExportScope* scope);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_SHARED_IDS_243_H_
