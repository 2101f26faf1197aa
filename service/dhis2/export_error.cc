#include "service/dhis2/export_error.h"

namespace dvexport::dhis2 {

std::string ExportErrorMessage(ExportError error, std::string_view argument) {
  const ExportErrorInfo& info = GetExportErrorInfo(error);
  std::string message(info.code);
  message.append(": ");
  message.append(info.message);
  const std::size_t argument_at = message.find("{0}");
  if (argument_at != std::string::npos) message.replace(argument_at, 3, argument);
  return message;
}

absl::Status ExportErrorStatus(ExportError error, std::string_view argument) {
  return absl::Status(GetExportErrorInfo(error).status_code, ExportErrorMessage(error, argument));
}

}  // namespace dvexport::dhis2
