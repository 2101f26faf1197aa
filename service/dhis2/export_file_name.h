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

// The name DHIS2 2.42 gives a file for its `attachment` parameter (DataValueSetController's
// getAttachmentFileName and compress), without the compression's suffix: for a zip (the default)
// the name of its one entry, otherwise the Content-Disposition file name before
// CompressionFileSuffix. In DHIS2's order:
// 1. "attachment", or "dataValues" when it is empty;
// 2. when the query has no period and both a start and an end date (DHIS2 uses the dates only
//    then), the name cut at its first '.' and followed by "_<start>_<end>" (yyyy-MM-dd; dates
//    that do not parse are left out, as ExportFileName does);
// 3. every ".<extension>.gzip" then ".<extension>.gz" removed for gzip, ".<extension>.zip" for
//    zip, and (dvexport only) ".<extension>.zstd" then ".<extension>.zst" for zstd;
// 4. "." and "extension" appended ("json", "csv", "xml"; DHIS2 names ADX "xml").
// E.g. attachment "data.json.gz", gzip: "data.json"; "data.json", no compression: "data.json.json".
// "attachment" is used as given: a caller that puts it in a header checks it first.
std::string AttachmentFileName(
    const dvexport::v1::ExportRequest& query, std::string_view attachment,
    std::string_view extension,
    dvexport::v1::Compression compression = dvexport::v1::COMPRESSION_ZIP);

// The <fmt> of DHIS2's file names for "format": "json" (pretty JSON too), "csv", or "xml" for
// XML and ADX.
std::string_view FileExtensionOf(dvexport::v1::Format format);

// What a compressed file's name ends with: ".gz", ".zip", ".zst" (zstd: dvexport only), or
// nothing for no compression.
std::string_view CompressionFileSuffix(dvexport::v1::Compression compression);

// The file name of DHIS2's Content-Disposition header: AttachmentFileName followed by
// CompressionFileSuffix, e.g. "dataValues_2024-01-01_2024-12-31.csv.zip".
std::string DownloadFileName(const dvexport::v1::ExportRequest& query, std::string_view attachment,
                             std::string_view extension, dvexport::v1::Compression compression);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_FILE_NAME_H_
