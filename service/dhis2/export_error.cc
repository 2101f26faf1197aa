#include "service/dhis2/export_error.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace dvexport::dhis2 {

namespace {

// "<http status> <message>", e.g. "400 UID must be ...".
constexpr absl::string_view kHttpRefusalPayload =
    "type.googleapis.com/dvexport.dhis2.Dhis2HttpRefusal";

}  // namespace

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

absl::Status Dhis2HttpRefusalStatus(absl::StatusCode code, std::string_view field, int http_status,
                                    std::string_view message) {
  const absl::string_view text(message.data(), message.size());
  absl::Status status(code,
                      absl::StrCat(absl::string_view(field.data(), field.size()), ": ", text));
  status.SetPayload(kHttpRefusalPayload, absl::Cord(absl::StrCat(http_status, " ", text)));
  return status;
}

std::optional<Dhis2HttpRefusal> Dhis2HttpRefusalOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kHttpRefusalPayload);
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  const std::size_t space = text.find(' ');
  Dhis2HttpRefusal refusal;
  if (space == std::string::npos ||
      !absl::SimpleAtoi(absl::string_view(text).substr(0, space), &refusal.http_status)) {
    return std::nullopt;
  }
  refusal.message = text.substr(space + 1);
  return refusal;
}

}  // namespace dvexport::dhis2
