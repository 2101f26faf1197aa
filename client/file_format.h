#ifndef DVEXPORT_CLIENT_FILE_FORMAT_H_
#define DVEXPORT_CLIENT_FILE_FORMAT_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "dvexport/v1/export.pb.h"

namespace dvexport::client {

// What an export file holds, as named by its extension.
struct FileFormat {
  dvexport::v1::Format format = dvexport::v1::FORMAT_JSON;
  dvexport::v1::Compression compression = dvexport::v1::COMPRESSION_NONE;
};

// Returns the format of "path" from its extension, case-insensitively:
// ".json", ".csv", ".xml" and ".adx", each optionally followed by ".gz" (gzip),
// ".zip" (zip) or ".zst" (zstd). Returns nullopt for any other name.
std::optional<FileFormat> FormatFromPath(absl::string_view path);

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_FILE_FORMAT_H_
