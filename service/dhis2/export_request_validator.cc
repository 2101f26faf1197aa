#include "service/dhis2/export_request_validator.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_error.h"
#include "service/dhis2/quote.h"
#include "service/dhis2/uid.h"

namespace dvexport::dhis2 {

namespace {

using google::protobuf::RepeatedPtrField;

absl::Status CollectUids(std::string_view field, const RepeatedPtrField<std::string>& values,
                         std::vector<std::string>* uids) {
  std::unordered_set<std::string_view> seen;
  for (const std::string& value : values) {
    if (!IsValidUid(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(field), ": ", QuoteForMessage(value),
                       " is not a valid UID (11 characters, a letter then letters or digits)"));
    }
    if (seen.insert(value).second) uids->push_back(value);
  }
  return absl::OkStatus();
}

absl::Status CollectPeriods(const RepeatedPtrField<std::string>& values,
                            std::vector<Period>* periods) {
  // A period is determined by its type and start date.
  std::set<std::pair<PeriodType, std::chrono::sys_days>> seen;
  for (const std::string& value : values) {
    absl::StatusOr<Period> period = ParseIsoPeriod(value);
    if (!period.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("period: ", period.status().message()));
    }
    if (seen.emplace(period->type, period->start).second) periods->push_back(*period);
  }
  return absl::OkStatus();
}

absl::Status ParseOptionalDate(std::string_view field, std::string_view text,
                               std::optional<std::chrono::sys_days>* date) {
  if (text.empty()) return absl::OkStatus();
  absl::StatusOr<std::chrono::sys_days> parsed = ParseDate(text);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(field), ": ", parsed.status().message()));
  }
  *date = *parsed;
  return absl::OkStatus();
}

// An integer as Java's MessageFormat writes a Number argument in an English
// locale, with grouping separators: -1,000.
std::string GroupedInteger(int64_t value) {
  const std::string digits = absl::StrCat(value < 0 ? -value : value);
  std::string text = value < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text.push_back(',');
    text.push_back(digits[i]);
  }
  return text;
}

absl::Status CheckDhis2Rules(const ExportParams& params) {
  const bool has_dates = params.start_date.has_value();
  if (params.data_sets.empty() && params.data_elements.empty()) {
    return ExportErrorStatus(ExportError::kE2001);
  }
  if (params.periods.empty() && !has_dates) return ExportErrorStatus(ExportError::kE2002);
  if (!params.periods.empty() && has_dates) return ExportErrorStatus(ExportError::kE2003);
  if (has_dates && *params.start_date > *params.end_date) {
    return ExportErrorStatus(ExportError::kE2004);
  }
  if (params.org_units.empty()) return ExportErrorStatus(ExportError::kE2006);
  // Unreachable while org units are the only org unit filter; kept in DHIS2's
  // order for when org unit groups arrive.
  if (params.children && params.org_units.empty()) return ExportErrorStatus(ExportError::kE2008);
  if (params.limit.has_value() && *params.limit < 0) {
    return ExportErrorStatus(ExportError::kE2009, GroupedInteger(*params.limit));
  }
  return absl::OkStatus();
}

}  // namespace

bool ExportParams::IsSingleDataValueSet() const {
  return data_sets.size() == 1 && periods.size() == 1 && org_units.size() == 1;
}

absl::StatusOr<ExportParams> ValidateExportRequest(const dvexport::v1::ExportRequest& request) {
  ExportParams params;
  absl::Status status = CollectUids("data_set", request.data_set(), &params.data_sets);
  if (!status.ok()) return status;
  status = CollectUids("data_element", request.data_element(), &params.data_elements);
  if (!status.ok()) return status;
  status = CollectPeriods(request.period(), &params.periods);
  if (!status.ok()) return status;
  status = ParseOptionalDate("start_date", request.start_date(), &params.start_date);
  if (!status.ok()) return status;
  status = ParseOptionalDate("end_date", request.end_date(), &params.end_date);
  if (!status.ok()) return status;
  if (params.start_date.has_value() != params.end_date.has_value()) {
    return absl::InvalidArgumentError("start_date and end_date must be given together");
  }
  status = CollectUids("org_unit", request.org_unit(), &params.org_units);
  if (!status.ok()) return status;

  params.children = request.children();
  params.include_deleted = request.include_deleted();
  if (request.has_limit()) params.limit = request.limit();

  status = CheckDhis2Rules(params);
  if (!status.ok()) return status;
  return params;
}

}  // namespace dvexport::dhis2
