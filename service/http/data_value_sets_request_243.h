#ifndef DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_243_H_
#define DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_243_H_

// What DHIS2 2.43's GET /api/dataValueSets does differently from 2.42's
// (docs/DHIS2-COMPATIBILITY.md; the reference's sections 2, 3 and 8): the format without content
// negotiation, the binding of 2.43's parameters, the headers and file name of a 200 (no I/O).
// ParseDataValueSetsRequest (data_value_sets_request.h) calls these for a 2.43 database.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "dvexport/v1/export.pb.h"
#include "service/http/data_value_sets_request_parameters.h"

namespace dvexport::http {

// DataValueSetController.getDataValueSet's format: `format` when given (exact: xml, adx+xml,
// csv; anything else JSON); else the end of the path ("path", percent-decoded as Tomcat's
// pathInfo is): ".adx+xml" ADX, ".xml" XML (".adx.xml" too), ".csv" CSV; else JSON. The Accept
// header is not read: no format is ever refused (no 406).
dvexport::v1::Format SelectFormat243(const QueryParameters& parameters, absl::string_view path);

// Binds what 2.43 binds unlike 2.42 into "request" (its format set, the parameters both bind
// already bound): startDate and endDate each on its own (also with `period`; a date that does not
// parse is a 400 either way), `compression` as Spring binds DHIS2's Compression enum (none, gzip,
// zip in any case, and dvexport's zstd; anything else, the empty value included, a 400 with
// Spring's message), `attachment` (checked for the header only where one is written), and 2.43's
// parameters: categoryOptionCombo, offset, level, order (as Spring binds List<Order>: exact names
// through the conversion service, else each element by DHIS2's editor ignoring case; a value that
// binds neither way is a 400 with Spring's message), orderByPeriod, inputUseCodeFallback,
// excludeDefaultCoc and excludeDefaultAoc. unfoldOptionCombos is refused (400) where it asks for
// what dvexport does not write: true outside ADX (option combos as category objects), false on
// ADX (which dvexport always writes by category, ADX's default). The first that does not bind is
// the refusal.
absl::Status Bind243(const QueryParameters& parameters, dvexport::v1::ExportFileRequest* request);

// The headers of 2.43's 200 (DataValueSetController.lazyOutputStream, 2.43.2): Content-Type of the
// format, with "+gzip", "+zip" (and dvexport's "+zstd") when compressed (dhis2-core PR #25287),
// and ";charset=UTF-8" as Tomcat writes it after DHIS2's CharacterEncodingFilter; when compressed
// or without `attachment`, Content-Disposition `attachment; filename="<name>"`
// (dhis2::FileName243, with the `format` parameter's text when given) and
// Content-Transfer-Encoding binary; then Cache-Control and DHIS2's security headers, as on 2.42.
// A refusal (400) when the file name would not be safe in the header: `attachment` or `format`
// with a control character, '"', '\', '/', non-ASCII, or too long.
absl::Status SuccessHeaders243(const QueryParameters& parameters,
                               const dvexport::v1::ExportFileRequest& request,
                               std::vector<std::pair<std::string, std::string>>* headers);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_243_H_
