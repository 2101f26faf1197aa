#include "client/file_format.h"

#include <utility>

#include "absl/strings/match.h"

namespace dvexport::client {

std::optional<FileFormat> FormatFromPath(absl::string_view path) {
  FileFormat result;
  for (const auto& [suffix, compression] :
       {std::pair{absl::string_view(".gz"), dvexport::v1::COMPRESSION_GZIP},
        std::pair{absl::string_view(".zip"), dvexport::v1::COMPRESSION_ZIP},
        std::pair{absl::string_view(".zst"), dvexport::v1::COMPRESSION_ZSTD}}) {
    if (absl::EndsWithIgnoreCase(path, suffix)) {
      result.compression = compression;
      path.remove_suffix(suffix.size());
      break;
    }
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
  if (absl::EndsWithIgnoreCase(path, ".adx")) {
    result.format = dvexport::v1::FORMAT_ADX;
    return result;
  }
  return std::nullopt;
}

}  // namespace dvexport::client
