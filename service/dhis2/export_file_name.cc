#include "service/dhis2/export_file_name.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "service/dhis2/dates.h"

namespace dvexport::dhis2 {

namespace {

std::string SqlDate(std::chrono::sys_days day) {
  const std::chrono::year_month_day date(day);
  return absl::StrFormat("%04d-%02u-%02u", static_cast<int>(date.year()),
                         static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
}

}  // namespace

std::string ExportFileName(const dvexport::v1::ExportRequest& query, std::string_view extension) {
  std::string name = "dataValues";
  if (!query.start_date().empty() && !query.end_date().empty()) {
    absl::StatusOr<std::chrono::sys_days> start = ParseDate(query.start_date());
    absl::StatusOr<std::chrono::sys_days> end = ParseDate(query.end_date());
    if (start.ok() && end.ok()) absl::StrAppend(&name, "_", SqlDate(*start), "_", SqlDate(*end));
  }
  name.append(".").append(extension);
  return name;
}

}  // namespace dvexport::dhis2
