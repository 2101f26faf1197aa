#include "service/dhis2/export_file_name.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
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

// "_<date>" as DateUtils.getSqlDateString writes it (the year without padding), or empty when
// "text" is empty or does not parse.
std::string UnderscoreDate243(const std::string& text) {
  if (text.empty()) return "";
  absl::StatusOr<std::chrono::sys_days> day = ParseDate(text);
  if (!day.ok()) return "";
  const std::chrono::year_month_day date(*day);
  return absl::StrFormat("_%d-%02u-%02u", static_cast<int>(date.year()),
                         static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
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

std::string FileName243(const dvexport::v1::ExportRequest& query,
                        std::optional<std::string_view> attachment, std::string_view format,
                        dvexport::v1::Compression compression) {
  const std::string_view suffix = CompressionFileSuffix(compression);
  const absl::string_view comp(suffix.data(), suffix.size());
  std::string fmt = absl::StrCat(".", absl::string_view(format.data(), format.size()));
  std::replace(fmt.begin(), fmt.end(), '+', '.');
  absl::string_view name = attachment.has_value()
                               ? absl::string_view(attachment->data(), attachment->size())
                               : absl::string_view("dataValues");
  absl::ConsumeSuffix(&name, comp);
  absl::ConsumeSuffix(&name, fmt);
  return absl::StrCat(name, UnderscoreDate243(query.start_date()),
                      UnderscoreDate243(query.end_date()), fmt, comp);
}

std::string ZipEntryFileName243(const dvexport::v1::ExportRequest& query,
                                std::optional<std::string_view> attachment,
                                std::string_view format) {
  std::string name = FileName243(query, attachment, format, dvexport::v1::COMPRESSION_ZIP);
  name.resize(name.size() - CompressionFileSuffix(dvexport::v1::COMPRESSION_ZIP).size());
  return name;
}

std::string_view FormatName(dvexport::v1::Format format) {
  switch (format) {
    case dvexport::v1::FORMAT_XML:
      return "xml";
    case dvexport::v1::FORMAT_ADX:
      return "adx+xml";
    case dvexport::v1::FORMAT_CSV:
      return "csv";
    default:
      return "json";
  }
}

}  // namespace dvexport::dhis2
