#include "service/dhis2/export_request_validator.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_error.h"
#include "service/dhis2/export_request_validator_internal.h"
#include "service/dhis2/quote.h"
#include "service/dhis2/uid.h"

namespace dvexport::dhis2 {

namespace {

using google::protobuf::RepeatedPtrField;

// True if `s` is well-formed UTF-8 (no overlongs, surrogates or code points
// beyond U+10FFFF).
bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (size_t k = 1; k <= n; ++k) {
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return false;
    }
    i += n + 1;
  }
  return true;
}

}  // namespace

namespace internal {

absl::Status CheckIdentifier(std::string_view field, const IdScheme& scheme,
                             std::string_view value) {
  if (scheme.property == IdScheme::Property::kUid) {
    if (IsValidUid(value)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(field), ": ", QuoteForMessage(value),
                     " is not a valid UID (11 characters, a letter then letters or digits)"));
  }
  if (value.empty() || value.find('\0') != std::string_view::npos || !IsValidUtf8(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(field), ": ", QuoteForMessage(value), " is not a valid ",
                     IdSchemeName(scheme), " identifier (not empty, UTF-8, no NUL character)"));
  }
  return absl::OkStatus();
}

}  // namespace internal

namespace {

using internal::CheckIdentifier;

absl::Status CollectIdentifiers(std::string_view field, const IdScheme& scheme,
                                const RepeatedPtrField<std::string>& values, Identifiers* ids) {
  ids->scheme = scheme;
  std::unordered_set<std::string_view> seen;
  for (const std::string& value : values) {
    absl::Status status = CheckIdentifier(field, scheme, value);
    if (!status.ok()) return status;
    if (seen.insert(value).second) ids->values.push_back(value);
  }
  return absl::OkStatus();
}

absl::Status CollectPeriods(const RepeatedPtrField<std::string>& values, int dhis2,
                            std::vector<Period>* periods) {
  // A period is determined by its type and start date.
  std::set<std::pair<PeriodType, std::chrono::sys_days>> seen;
  for (const std::string& value : values) {
    absl::StatusOr<Period> period = ParseIsoPeriod(value);
    if (!period.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("period: ", period.status().message()));
    }
    // FinancialSep came with 2.42 (PeriodType.PERIOD_TYPES): 2.40 and 2.41 cannot read its ids.
    if (period->type == PeriodType::kFinancialSep && dhis2 < 42) {
      return absl::InvalidArgumentError(
          absl::StrCat("period: ", QuoteForMessage(value), " is not a valid ISO period in DHIS2 2.",
                       dhis2, " (FinancialSep periods came with DHIS2 2.42)"));
    }
    if (seen.emplace(period->type, period->start).second) periods->push_back(*period);
  }
  return absl::OkStatus();
}

}  // namespace

namespace internal {

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

// A duration too long for int64 microseconds is clamped (it reaches back before any data).
std::optional<int64_t> ParseDuration(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  int64_t unit;
  switch (text.back()) {
    case 'd':
      unit = int64_t{86400} * 1000000;
      break;
    case 'h':
      unit = int64_t{3600} * 1000000;
      break;
    case 'm':
      unit = int64_t{60} * 1000000;
      break;
    case 's':
      unit = 1000000;
      break;
    default:
      return std::nullopt;
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t amount = 0;
  for (char c : text.substr(0, text.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    // DHIS2's Long.parseLong fails beyond Long.MAX_VALUE.
    if (amount > (kMax - (c - '0')) / 10) return std::nullopt;
    amount = amount * 10 + (c - '0');
  }
  return amount > kMax / unit ? kMax : amount * unit;
}

std::string DurationArgument(std::string_view text) {
  bool plain = text.size() <= 64;
  for (char c : text) plain = plain && c >= 0x20 && c < 0x7F && c != '`';
  return plain ? std::string(text) : QuoteForMessage(text);
}

// In an English locale, with grouping separators.
std::string GroupedInteger(int64_t value) {
  const std::string digits = absl::StrCat(value < 0 ? -value : value);
  std::string text = value < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text.push_back(',');
    text.push_back(digits[i]);
  }
  return text;
}

}  // namespace internal

namespace {

using internal::DurationArgument;
using internal::GroupedInteger;
using internal::ParseDuration;
using internal::ParseOptionalDate;

absl::Status CheckDhis2Rules(const ExportParams& params, const std::string& duration_text,
                             RuleOrder order) {
  const bool has_dates = params.start_date.has_value();
  absl::Status reported;
  // Records a failing rule; true when it is the one to report.
  auto fails = [&](absl::Status status) {
    reported = std::move(status);
    return order == RuleOrder::kFirstFailure;
  };
  if (params.data_sets.empty() && params.data_elements.empty() &&
      params.data_element_groups.empty() && fails(ExportErrorStatus(ExportError::kE2001))) {
    return reported;
  }
  if (params.periods.empty() && !has_dates && !params.last_updated_micros &&
      duration_text.empty() && fails(ExportErrorStatus(ExportError::kE2002))) {
    return reported;
  }
  if (!params.periods.empty() && has_dates && fails(ExportErrorStatus(ExportError::kE2003))) {
    return reported;
  }
  if (has_dates && *params.start_date > *params.end_date &&
      fails(ExportErrorStatus(ExportError::kE2004))) {
    return reported;
  }
  if (!duration_text.empty() && !params.last_updated_duration_micros &&
      fails(ExportErrorStatus(ExportError::kE2005, DurationArgument(duration_text)))) {
    return reported;
  }
  if (params.org_units.empty() && params.org_unit_groups.empty() &&
      fails(ExportErrorStatus(ExportError::kE2006))) {
    return reported;
  }
  if (params.children && !params.org_unit_groups.empty() &&
      fails(ExportErrorStatus(ExportError::kE2007))) {
    return reported;
  }
  if (params.children && params.org_units.empty() &&
      fails(ExportErrorStatus(ExportError::kE2008))) {
    return reported;
  }
  // The last rule: reported in either order.
  if (params.limit.has_value() && *params.limit < 0) {
    reported = ExportErrorStatus(ExportError::kE2009, GroupedInteger(*params.limit));
  }
  return reported;
}

// The parsed id schemes of a request, in the proto's field order.
struct RequestIdSchemes {
  std::optional<IdScheme> input, input_org_unit, input_data_element, input_data_set,
      input_data_element_group;
  std::optional<IdScheme> output, data_element, org_unit, category_option_combo,
      attribute_option_combo, data_set;
};

absl::StatusOr<RequestIdSchemes> ParseIdSchemes(const dvexport::v1::ExportRequest& request) {
  RequestIdSchemes schemes;
  struct Field {
    const char* name;
    const std::string& text;
    std::optional<IdScheme>* scheme;
  };
  const Field fields[] = {
      {"input_id_scheme", request.input_id_scheme(), &schemes.input},
      {"input_org_unit_id_scheme", request.input_org_unit_id_scheme(), &schemes.input_org_unit},
      {"input_data_element_id_scheme", request.input_data_element_id_scheme(),
       &schemes.input_data_element},
      {"input_data_set_id_scheme", request.input_data_set_id_scheme(), &schemes.input_data_set},
      {"input_data_element_group_id_scheme", request.input_data_element_group_id_scheme(),
       &schemes.input_data_element_group},
      {"id_scheme", request.id_scheme(), &schemes.output},
      {"data_element_id_scheme", request.data_element_id_scheme(), &schemes.data_element},
      {"org_unit_id_scheme", request.org_unit_id_scheme(), &schemes.org_unit},
      {"category_option_combo_id_scheme", request.category_option_combo_id_scheme(),
       &schemes.category_option_combo},
      {"attribute_option_combo_id_scheme", request.attribute_option_combo_id_scheme(),
       &schemes.attribute_option_combo},
      {"data_set_id_scheme", request.data_set_id_scheme(), &schemes.data_set},
  };
  for (const Field& field : fields) {
    absl::StatusOr<std::optional<IdScheme>> parsed = ParseIdScheme(field.name, field.text);
    if (!parsed.ok()) return parsed.status();
    *field.scheme = *parsed;
  }
  return schemes;
}

IdScheme FirstOf(const std::optional<IdScheme>& specific, const std::optional<IdScheme>& general) {
  if (specific) return *specific;
  if (general) return *general;
  return IdScheme::Uid();
}

// The identifiers, periods and dates the request selects, in DHIS2's order of checks.
absl::Status BindSelection(const dvexport::v1::ExportRequest& request,
                           const RequestIdSchemes& schemes, int dhis2, ExportParams* params) {
  const std::optional<IdScheme>& input = schemes.input;
  absl::Status status = CollectIdentifiers("data_set", FirstOf(schemes.input_data_set, input),
                                           request.data_set(), &params->data_sets);
  if (!status.ok()) return status;
  status =
      CollectIdentifiers("data_element_group", FirstOf(schemes.input_data_element_group, input),
                         request.data_element_group(), &params->data_element_groups);
  if (!status.ok()) return status;
  status = CollectIdentifiers("data_element", FirstOf(schemes.input_data_element, input),
                              request.data_element(), &params->data_elements);
  if (!status.ok()) return status;
  status = CollectPeriods(request.period(), dhis2, &params->periods);
  if (!status.ok()) return status;
  status = ParseOptionalDate("start_date", request.start_date(), &params->start_date);
  if (!status.ok()) return status;
  status = ParseOptionalDate("end_date", request.end_date(), &params->end_date);
  if (!status.ok()) return status;
  if (params->start_date.has_value() != params->end_date.has_value()) {
    return absl::InvalidArgumentError("start_date and end_date must be given together");
  }
  status = CollectIdentifiers("org_unit", FirstOf(schemes.input_org_unit, input),
                              request.org_unit(), &params->org_units);
  if (!status.ok()) return status;
  status = CollectIdentifiers("org_unit_group", FirstOf(std::nullopt, input),
                              request.org_unit_group(), &params->org_unit_groups);
  if (!status.ok()) return status;
  return CollectIdentifiers("attribute_option_combo", FirstOf(std::nullopt, input),
                            request.attribute_option_combo(), &params->attribute_option_combos);
}

// last_updated and last_updated_duration.
absl::Status BindLastUpdated(const dvexport::v1::ExportRequest& request, ExportParams* params) {
  if (!request.last_updated().empty()) {
    absl::StatusOr<int64_t> micros = ParseDateTimeMicros(request.last_updated());
    if (!micros.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("last_updated: ", micros.status().message()));
    }
    params->last_updated_micros = *micros;
  }
  const std::string& duration = request.last_updated_duration();
  if (!duration.empty()) params->last_updated_duration_micros = ParseDuration(duration);
  return absl::OkStatus();
}

// attribute_combo with attribute_options (E2040: both or neither); ignored when attribute option
// combos are named.
absl::Status BindAttributeCombo(const dvexport::v1::ExportRequest& request, ExportParams* params) {
  if (!request.attribute_combo().empty()) {
    absl::Status status =
        CheckIdentifier("attribute_combo", IdScheme::Uid(), request.attribute_combo());
    if (!status.ok()) return status;
  }
  Identifiers options;
  absl::Status status = CollectIdentifiers("attribute_options", IdScheme::Uid(),
                                           request.attribute_options(), &options);
  if (!status.ok()) return status;
  if (request.attribute_combo().empty() != options.empty()) {
    return absl::InvalidArgumentError(
        "E2040: Both category combination and category options must be specified");
  }
  if (params->attribute_option_combos.empty()) {
    params->attribute_combo = request.attribute_combo();
    params->attribute_options = std::move(options.values);
  }
  return absl::OkStatus();
}

}  // namespace

namespace internal {

absl::Status BindChangeTracking(const dvexport::v1::ExportRequest& request, ExportParams* params) {
  if (!request.changes_since().empty()) {
    absl::StatusOr<ChangeToken> token = DecodeChangeToken(request.changes_since());
    if (!token.ok()) return token.status();
    if (params->limit.has_value()) {
      return absl::InvalidArgumentError(
          "changes_since: cannot be combined with limit (a limited export is incomplete, so the "
          "next token would skip what it left out)");
    }
    params->changes_since = *token;
  }
  if (request.start_change_stream()) {
    if (params->limit.has_value()) {
      return absl::InvalidArgumentError(
          "start_change_stream: cannot be combined with limit (a stream starts with a complete "
          "export)");
    }
    if (params->changes_since.has_value()) {
      return absl::InvalidArgumentError(
          "start_change_stream: cannot be combined with changes_since (a delta continues the "
          "stream or snapshot its token names; a new stream starts with a full export)");
    }
    params->start_change_stream = true;
  }
  return absl::OkStatus();
}

}  // namespace internal

namespace {

// A 2.43 parameter in a request answered as an earlier DHIS2: refused, naming the field.
absl::Status RefuseDhis243Parameters(const dvexport::v1::ExportRequest& request, int dhis2) {
  const char* field = nullptr;
  if (request.has_offset()) {
    field = "offset";
  } else if (request.order_size() > 0) {
    field = "order";
  } else if (request.order_by_period()) {
    field = "order_by_period";
  } else if (request.has_level()) {
    field = "level";
  } else if (request.category_option_combo_size() > 0) {
    field = "category_option_combo";
  } else if (request.has_input_use_code_fallback()) {
    field = "input_use_code_fallback";
  } else if (request.exclude_default_coc()) {
    field = "exclude_default_coc";
  } else if (request.exclude_default_aoc()) {
    field = "exclude_default_aoc";
  }
  if (field == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": a DHIS2 2.43 parameter; this export answers as DHIS2 2.", dhis2));
}

}  // namespace

bool ExportParams::IsSingleDataValueSet() const {
  return data_sets.size() == 1 && periods.size() == 1 && org_units.size() == 1 &&
         data_element_groups.empty();
}

absl::StatusOr<ExportParams> ValidateExportRequest(const dvexport::v1::ExportRequest& request,
                                                   RuleOrder order, int dhis2) {
  if (dhis2 >= 43) return ValidateExportRequest243(request);
  absl::Status refused = RefuseDhis243Parameters(request, dhis2);
  if (!refused.ok()) return refused;
  absl::StatusOr<RequestIdSchemes> schemes = ParseIdSchemes(request);
  if (!schemes.ok()) return schemes.status();
  ExportParams params;
  params.output.data_element = FirstOf(schemes->data_element, schemes->output);
  params.output.org_unit = FirstOf(schemes->org_unit, schemes->output);
  params.output.category_option_combo = FirstOf(schemes->category_option_combo, schemes->output);
  params.output.attribute_option_combo = FirstOf(schemes->attribute_option_combo, schemes->output);
  params.output.data_set = FirstOf(schemes->data_set, schemes->output);

  absl::Status status = BindSelection(request, *schemes, dhis2, &params);
  if (!status.ok()) return status;
  status = BindLastUpdated(request, &params);
  if (!status.ok()) return status;
  status = BindAttributeCombo(request, &params);
  if (!status.ok()) return status;
  params.children = request.children();
  params.include_deleted = request.include_deleted();
  if (request.has_limit()) params.limit = request.limit();
  status = internal::BindChangeTracking(request, &params);
  if (!status.ok()) return status;
  status = CheckDhis2Rules(params, request.last_updated_duration(), order);
  if (!status.ok()) return status;
  return params;
}

}  // namespace dvexport::dhis2
