#include "client/file_format.h"

#include "absl/strings/match.h"

namespace dvexport::client {

std::optional<FileFormat> FormatFromPath(absl::string_view path) {
  FileFormat result;
  if (absl::EndsWithIgnoreCase(path, ".gz")) {
    result.compression = dvexport::v1::COMPRESSION_GZIP;
    path.remove_suffix(3);
  }
  if (absl::EndsWithIgnoreCase(path, ".json")) {
    result.format = dvexport::v1::FORMAT_JSON;
    return result;
  }
  if (absl::EndsWithIgnoreCase(path, ".csv")) {
    result.format = dvexport::v1::FORMAT_CSV;
    return result;
  }
  if (absl::EndsWithIgnoreCase(path, ".xml")) {
    result.format = dvexport::v1::FORMAT_XML;
    return result;
  }
  return std::nullopt;
}

}  // namespace dvexport::client
