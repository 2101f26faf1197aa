#ifndef DVEXPORT_SERVICE_DHIS2_EXPORT_FILE_NAME_H_
#define DVEXPORT_SERVICE_DHIS2_EXPORT_FILE_NAME_H_

#include <string>
#include <string_view>

#include "dvexport/v1/export.pb.h"

namespace dvexport::dhis2 {

// The file name DHIS2 2.42 gives an export (DataValueSetController, without an "attachment"
// parameter), which is also the name of the one entry of its zip: "dataValues", then
// "_<start>_<end>" (yyyy-MM-dd) when the request has both a start and an end date, then "." and
// "extension" ("json", "csv"; DHIS2 names XML and ADX "xml"). Dates that do not parse are left
// out (the request fails its validation anyway).
std::string ExportFileName(const dvexport::v1::ExportRequest& query, std::string_view extension);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_FILE_NAME_H_
