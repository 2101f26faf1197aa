#ifndef DVEXPORT_SERVICE_DHIS2_EXPORT_FILE_NAME_H_
#define DVEXPORT_SERVICE_DHIS2_EXPORT_FILE_NAME_H_

#include <optional>
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

// DHIS2 2.43's name of an export's file (DataExportParams.Input.getFilename): the file name of
// its Content-Disposition header, and with ".zip" removed, its zip's one entry
// (ZipEntryFileName243). In DHIS2's order:
// 1. "attachment", or "dataValues" when there is none (nullopt; an empty attachment is the empty
//    name, as in DHIS2);
// 2. the compression's suffix removed from its end (CompressionFileSuffix: ".gz", ".zip", and
//    dvexport's ".zst"), then ".<format>" ("format" with every '+' as '.': ADX is ".adx.xml");
// 3. "_<start>" when the query has a start date, then "_<end>" when it has an end date, each on its
//    own and also with periods (yyyy-MM-dd as DateUtils.getSqlDateString writes it; a date that
//    does not parse is left out);
// 4. ".<format>" and the compression's suffix appended.
// E.g. attachment "a.b.xml", format "xml", gzip, 2024-01-01 to 2024-12-31:
// "a.b_2024-01-01_2024-12-31.xml.gz". "format" is DHIS2's `format` parameter as given (any text:
// "JSON" gives ".JSON"), or when none was, the name of the format the export has (FormatName).
// "attachment" and "format" are used as given: a caller that puts them in a header checks them
// first.
std::string FileName243(const dvexport::v1::ExportRequest& query,
                        std::optional<std::string_view> attachment, std::string_view format,
                        dvexport::v1::Compression compression);

// The name of the one entry of a 2.43 zip (DataExportPipeline.wrapWithCompression): FileName243
// for zip, without its ".zip".
std::string ZipEntryFileName243(const dvexport::v1::ExportRequest& query,
                                std::optional<std::string_view> attachment,
                                std::string_view format);

// The name DHIS2 2.43's controller gives a format it detected: "json" (pretty JSON too), "csv",
// "xml", "adx+xml".
std::string_view FormatName(dvexport::v1::Format format);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_EXPORT_FILE_NAME_H_
