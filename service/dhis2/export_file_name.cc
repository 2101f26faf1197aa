#include "service/dhis2/export_file_name.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "service/dhis2/dates.h"

namespace dvexport::dhis2 {

namespace {

std::string SqlDate(std::chrono::sys_days day) {
  const std::chrono::year_month_day date(day);
  return absl::StrFormat("%04d-%02u-%02u", static_cast<int>(date.year()),
                         static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
}

// "_<start>_<end>" when both dates of "query" are given and parse, else empty.
std::string DateSuffix(const dvexport::v1::ExportRequest& query) {
  if (query.start_date().empty() || query.end_date().empty()) return "";
  absl::StatusOr<std::chrono::sys_days> start = ParseDate(query.start_date());
  absl::StatusOr<std::chrono::sys_days> end = ParseDate(query.end_date());
  if (!start.ok() || !end.ok()) return "";
  return absl::StrCat("_", SqlDate(*start), "_", SqlDate(*end));
}

// Java's String.replace(target, ""): every occurrence, left to right, without rescanning.
void RemoveAll(std::string_view target, std::string* name) {
  *name = absl::StrReplaceAll(*name, {{absl::string_view(target.data(), target.size()), ""}});
}

}  // namespace

std::string ExportFileName(const dvexport::v1::ExportRequest& query, std::string_view extension) {
  return absl::StrCat("dataValues", DateSuffix(query), ".",
                      absl::string_view(extension.data(), extension.size()));
}

std::string AttachmentFileName(const dvexport::v1::ExportRequest& query,
                               std::string_view attachment, std::string_view extension,
                               dvexport::v1::Compression compression) {
  std::string name = attachment.empty() ? "dataValues" : std::string(attachment);
  if (query.period().empty()) {
    const std::string dates = DateSuffix(query);
    if (!dates.empty()) name = name.substr(0, name.find('.')) + dates;
  }
  const absl::string_view ext(extension.data(), extension.size());
  const std::string format = absl::StrCat(".", ext, ".");
  switch (compression) {
    case dvexport::v1::COMPRESSION_GZIP:
      RemoveAll(absl::StrCat(format, "gzip"), &name);
      RemoveAll(absl::StrCat(format, "gz"), &name);
      break;
    case dvexport::v1::COMPRESSION_ZIP:
      RemoveAll(absl::StrCat(format, "zip"), &name);
      break;
    case dvexport::v1::COMPRESSION_ZSTD:
      RemoveAll(absl::StrCat(format, "zstd"), &name);
      RemoveAll(absl::StrCat(format, "zst"), &name);
      break;
    default:
      break;
  }
  return absl::StrCat(name, ".", ext);
}

std::string_view FileExtensionOf(dvexport::v1::Format format) {
  switch (format) {
    case dvexport::v1::FORMAT_XML:
    case dvexport::v1::FORMAT_ADX:
      return "xml";
    case dvexport::v1::FORMAT_CSV:
      return "csv";
    default:
      return "json";
  }
}

std::string_view CompressionFileSuffix(dvexport::v1::Compression compression) {
  switch (compression) {
    case dvexport::v1::COMPRESSION_GZIP:
      return ".gz";
    case dvexport::v1::COMPRESSION_ZIP:
      return ".zip";
    case dvexport::v1::COMPRESSION_ZSTD:
      return ".zst";
    default:
      return "";
  }
}

std::string DownloadFileName(const dvexport::v1::ExportRequest& query, std::string_view attachment,
                             std::string_view extension, dvexport::v1::Compression compression) {
  return AttachmentFileName(query, attachment, extension, compression) +
         std::string(CompressionFileSuffix(compression));
}

}  // namespace dvexport::dhis2
