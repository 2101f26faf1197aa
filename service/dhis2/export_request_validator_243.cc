// DHIS2 2.43's export request: Spring's binding of DataExportParams.Input, then
// DefaultDataExportService.decodeParams and validateFilters (branch 2.43, 2.43.2).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_error.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/export_request_validator_internal.h"
#include "service/dhis2/quote.h"
#include "service/dhis2/uid.h"

namespace dvexport::dhis2 {

namespace {

using google::protobuf::RepeatedPtrField;

absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

constexpr absl::string_view kUidMessage =
    "UID must be an alphanumeric string of 11 characters starting with a letter, but was: ";

// A refusal 2.43 answers with a WebMessage without errorCode (400, or "http_status").
absl::Status HttpRefusal(std::string_view field, std::string_view message, int http_status = 400) {
  return Dhis2HttpRefusalStatus(absl::StatusCode::kInvalidArgument, field, http_status, message);
}

// CrudControllerAdvice's message for a parameter Spring could not bind:
// getNotValidValueMessage, a space, then the reason.
std::string NotValidValue(std::string_view value, std::string_view parameter,
                          std::string_view reason) {
  return absl::StrCat("Value '", Absl(value), "' is not valid for parameter ", Absl(parameter),
                      ". ", Absl(reason));
}

// Java's String.length(): UTF-16 units.
std::size_t Utf16Length(std::string_view s) {
  std::size_t units = 0;
  for (char c : s) {
    const unsigned char b = static_cast<unsigned char>(c);
    if ((b & 0xC0) != 0x80) ++units;
    if (b >= 0xF0) ++units;
  }
  return units;
}

// IdentifiableProperty, the type of 2.43's input id schemes.
enum class InputProperty { kId, kUid, kUuid, kName, kCode, kAttribute };

// CrudControllerAdvice's ConvertEnum: the constant's name in any case.
absl::StatusOr<std::optional<InputProperty>> BindInputProperty(std::string_view field,
                                                               std::string_view parameter,
                                                               std::string_view text) {
  if (text.empty()) return std::nullopt;
  constexpr std::pair<std::string_view, InputProperty> kNames[] = {
      {"ID", InputProperty::kId},     {"UID", InputProperty::kUid},
      {"UUID", InputProperty::kUuid}, {"NAME", InputProperty::kName},
      {"CODE", InputProperty::kCode}, {"ATTRIBUTE", InputProperty::kAttribute},
  };
  for (const auto& [name, property] : kNames) {
    if (absl::EqualsIgnoreCase(absl::string_view(text.data(), text.size()),
                               absl::string_view(name.data(), name.size()))) {
      return property;
    }
  }
  return HttpRefusal(field, NotValidValue(text, parameter,
                                          "Valid values are: [ID, UID, UUID, NAME, CODE, "
                                          "ATTRIBUTE]"));
}

// IdProperty.of(String), 2.43's output id schemes, through Spring's ObjectToObjectConverter.
absl::StatusOr<std::optional<IdScheme>> BindOutputScheme(std::string_view field,
                                                         std::string_view parameter,
                                                         std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string upper = absl::AsciiStrToUpper(absl::string_view(text.data(), text.size()));
  IdScheme scheme;
  if (upper == "ID" || upper == "UID") return scheme;
  if (upper == "CODE" || upper == "NAME") {
    scheme.property = upper == "CODE" ? IdScheme::Property::kCode : IdScheme::Property::kName;
    return scheme;
  }
  if (Utf16Length(text) == 21 && absl::StartsWith(upper, "ATTRIBUTE:")) {
    const std::string_view uid = text.substr(10);
    if (!IsValidUid(uid)) {
      return HttpRefusal(field,
                         NotValidValue(text, parameter, absl::StrCat(kUidMessage, Absl(uid))));
    }
    scheme.property = IdScheme::Property::kAttribute;
    scheme.attribute = std::string(uid);
    return scheme;
  }
  return HttpRefusal(field,
                     NotValidValue(text, parameter,
                                   absl::StrCat("Invalid ID scheme: ", Absl(text),
                                                "\n\tUse UID, CODE, NAME, ATTRIBUTE:<uid>")));
}

// What binding made of the request's id schemes and attributeCombo.
struct BoundRequest {
  std::optional<InputProperty> input, input_org_unit, input_data_element, input_data_set,
      input_data_element_group;
  std::optional<IdScheme> output, data_element, org_unit, category_option_combo,
      attribute_option_combo, data_set;
  std::string attribute_combo;
  std::vector<std::string> attribute_options;
};

// A UID parameter (attributeCombo, each of attributeOptions).
absl::Status BindUid(std::string_view field, std::string_view parameter, std::string_view value) {
  if (IsValidUid(value)) return absl::OkStatus();
  return HttpRefusal(field,
                     NotValidValue(value, parameter, absl::StrCat(kUidMessage, Absl(value))));
}

absl::Status BindAttributeOptions(const dvexport::v1::ExportRequest& request, BoundRequest* bound) {
  std::unordered_set<std::string_view> seen;
  for (const std::string& option : request.attribute_options()) {
    absl::Status status = BindUid("attribute_options", "attributeOptions", option);
    if (!status.ok()) return status;
    if (seen.insert(option).second) bound->attribute_options.push_back(option);
  }
  return absl::OkStatus();
}

absl::Status BindLastUpdated(const dvexport::v1::ExportRequest& request, ExportParams* params) {
  if (request.last_updated().empty()) return absl::OkStatus();
  absl::StatusOr<int64_t> micros = ParseDateTimeMicros(request.last_updated());
  if (!micros.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("last_updated: ", micros.status().message()));
  }
  params->last_updated_micros = *micros;
  return absl::OkStatus();
}

// DataExportParams.Order, each key once in its first position.
absl::Status BindOrder(const dvexport::v1::ExportRequest& request, ExportParams* params) {
  for (int value : request.order()) {
    OrderKey key;
    switch (value) {
      case dvexport::v1::EXPORT_ORDER_DE:
        key = OrderKey::kDe;
        break;
      case dvexport::v1::EXPORT_ORDER_OU:
        key = OrderKey::kOu;
        break;
      case dvexport::v1::EXPORT_ORDER_PE:
        key = OrderKey::kPe;
        break;
      case dvexport::v1::EXPORT_ORDER_CREATED:
        key = OrderKey::kCreated;
        break;
      case dvexport::v1::EXPORT_ORDER_AOC:
        key = OrderKey::kAoc;
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("order: ",
                         value == dvexport::v1::EXPORT_ORDER_UNSPECIFIED
                             ? std::string("EXPORT_ORDER_UNSPECIFIED")
                             : absl::StrCat(value),
                         " is not an order key (DE, OU, PE, CREATED or AOC)"));
    }
    bool present = false;
    for (OrderKey seen : params->order) present = present || seen == key;
    if (!present) params->order.push_back(key);
  }
  return absl::OkStatus();
}

// Spring binds the request's parameters in the order of their names (a TreeMap), and
// CrudControllerAdvice reports the first that fails.
absl::Status BindParameters(const dvexport::v1::ExportRequest& r, BoundRequest* b,
                            ExportParams* params) {
  auto output = [&](const char* field, const char* parameter, const std::string& text,
                    std::optional<IdScheme>* scheme) {
    absl::StatusOr<std::optional<IdScheme>> parsed = BindOutputScheme(field, parameter, text);
    if (parsed.ok()) *scheme = *parsed;
    return parsed.status();
  };
  auto input = [&](const char* field, const char* parameter, const std::string& text,
                   std::optional<InputProperty>* property) {
    absl::StatusOr<std::optional<InputProperty>> parsed = BindInputProperty(field, parameter, text);
    if (parsed.ok()) *property = *parsed;
    return parsed.status();
  };
  const std::function<absl::Status()> steps[] = {
      [&] {
        if (r.attribute_combo().empty()) return absl::OkStatus();
        b->attribute_combo = r.attribute_combo();
        return BindUid("attribute_combo", "attributeCombo", r.attribute_combo());
      },
      [&] {
        return output("attribute_option_combo_id_scheme", "attributeOptionComboIdScheme",
                      r.attribute_option_combo_id_scheme(), &b->attribute_option_combo);
      },
      [&] { return BindAttributeOptions(r, b); },
      [&] {
        return output("category_option_combo_id_scheme", "categoryOptionComboIdScheme",
                      r.category_option_combo_id_scheme(), &b->category_option_combo);
      },
      [&] {
        return output("data_element_id_scheme", "dataElementIdScheme", r.data_element_id_scheme(),
                      &b->data_element);
      },
      [&] {
        return output("data_set_id_scheme", "dataSetIdScheme", r.data_set_id_scheme(),
                      &b->data_set);
      },
      [&] { return internal::ParseOptionalDate("end_date", r.end_date(), &params->end_date); },
      [&] { return output("id_scheme", "idScheme", r.id_scheme(), &b->output); },
      [&] {
        return input("input_data_element_group_id_scheme", "inputDataElementGroupIdScheme",
                     r.input_data_element_group_id_scheme(), &b->input_data_element_group);
      },
      [&] {
        return input("input_data_element_id_scheme", "inputDataElementIdScheme",
                     r.input_data_element_id_scheme(), &b->input_data_element);
      },
      [&] {
        return input("input_data_set_id_scheme", "inputDataSetIdScheme",
                     r.input_data_set_id_scheme(), &b->input_data_set);
      },
      [&] { return input("input_id_scheme", "inputIdScheme", r.input_id_scheme(), &b->input); },
      [&] {
        return input("input_org_unit_id_scheme", "inputOrgUnitIdScheme",
                     r.input_org_unit_id_scheme(), &b->input_org_unit);
      },
      [&] { return BindLastUpdated(r, params); },
      [&] { return BindOrder(r, params); },
      [&] {
        return output("org_unit_id_scheme", "orgUnitIdScheme", r.org_unit_id_scheme(),
                      &b->org_unit);
      },
      [&] {
        return internal::ParseOptionalDate("start_date", r.start_date(), &params->start_date);
      },
  };
  for (const std::function<absl::Status()>& step : steps) {
    absl::Status status = step();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// decodeIds: the identifiers of one field in its input property; nullopt is the code fallback
// (no scheme given, inputUseCodeFallback asked).
absl::Status DecodeIds(std::string_view field, std::optional<InputProperty> from,
                       const RepeatedPtrField<std::string>& values, Identifiers* ids) {
  ids->scheme = IdScheme::Uid();
  if (values.empty()) return absl::OkStatus();
  ids->code_fallback = !from.has_value();
  if (from == InputProperty::kAttribute) {
    return HttpRefusal(field, "Attribute must be used with the attribute ID");
  }
  if (from == InputProperty::kUuid) {
    return HttpRefusal(field, "UUID is not supported for this operation", 500);
  }
  if (from == InputProperty::kCode) ids->scheme.property = IdScheme::Property::kCode;
  if (from == InputProperty::kName) ids->scheme.property = IdScheme::Property::kName;
  const bool uids_only = from == InputProperty::kId || from == InputProperty::kUid;
  std::unordered_set<std::string_view> seen;
  for (const std::string& value : values) {
    if (uids_only && !IsValidUid(value)) {
      return HttpRefusal(field, absl::StrCat(kUidMessage, value));
    }
    if (!uids_only && !(ids->code_fallback && IsValidUid(value))) {
      const IdScheme checked =
          ids->code_fallback ? IdScheme{IdScheme::Property::kCode, ""} : ids->scheme;
      absl::Status status = internal::CheckIdentifier(field, checked, value);
      if (!status.ok()) return status;
    }
    if (seen.insert(value).second) ids->values.push_back(value);
  }
  return absl::OkStatus();
}

// decodePeriods: Period.of for each different string, one period for each canonical id.
absl::Status DecodePeriods(const RepeatedPtrField<std::string>& values, ExportParams* params) {
  std::unordered_set<std::string_view> texts;
  std::set<std::pair<PeriodType, std::chrono::sys_days>> seen;
  for (const std::string& value : values) {
    if (!texts.insert(value).second) continue;
    absl::StatusOr<Period> period = ParseIsoPeriod243(value);
    if (!period.ok()) return HttpRefusal("period", std::string(period.status().message()));
    const int first_year = static_cast<int>(std::chrono::year_month_day{period->start}.year());
    const int last_year = static_cast<int>(std::chrono::year_month_day{period->end}.year());
    if (first_year < kMinYear || last_year > kMaxYear) {
      return absl::InvalidArgumentError(absl::StrCat(
          "period: ", QuoteForMessage(value), " is not a valid ISO period: it runs from ",
          FormatDate(period->start), " to ", FormatDate(period->end),
          ", and periods must lie within the years ", kMinYear, " to ", kMaxYear));
    }
    if (seen.emplace(period->type, period->start).second) params->periods.push_back(*period);
  }
  params->period_texts = texts.size();
  return absl::OkStatus();
}

// Java's String.isBlank: every code point Character.isWhitespace.
bool IsBlank(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) {
      ++i;
      continue;
    }
    const absl::string_view rest = Absl(text.substr(i));
    // U+1680, U+2000-U+2006, U+2008-U+200A, U+2028, U+2029, U+205F, U+3000.
    if (absl::StartsWith(rest, "\xE1\x9A\x80") || absl::StartsWith(rest, "\xE3\x80\x80") ||
        absl::StartsWith(rest, "\xE2\x81\x9F")) {
      i += 3;
      continue;
    }
    if (rest.size() >= 3 && c == 0xE2 && static_cast<unsigned char>(rest[1]) == 0x80) {
      const unsigned char last = static_cast<unsigned char>(rest[2]);
      if ((last <= 0x8A && last != 0x87) || last == 0xA8 || last == 0xA9) {
        i += 3;
        continue;
      }
    }
    return false;
  }
  return true;
}

// resolveLastUpdatedDuration (2.43.2): a blank value is no duration; another that
// DateUtils.getDuration cannot read is E2005. Java's $ also matches before one final line
// terminator, and Long.valueOf refuses more than Long.MAX_VALUE (NumberFormatException: 400).
absl::Status DecodeDuration(const std::string& text, ExportParams* params) {
  if (IsBlank(text)) return absl::OkStatus();
  absl::string_view matched = text;
  for (absl::string_view end : {"\r\n", "\n", "\r", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    if (absl::EndsWith(matched, end)) {
      matched.remove_suffix(end.size());
      break;
    }
  }
  params->last_updated_duration_micros =
      internal::ParseDuration(std::string_view(matched.data(), matched.size()));
  if (params->last_updated_duration_micros) return absl::OkStatus();
  const absl::string_view digits = matched.substr(0, matched.empty() ? 0 : matched.size() - 1);
  if (!digits.empty() && absl::StrContains("dhms", matched.back()) &&
      digits.find_first_not_of("0123456789") == absl::string_view::npos) {
    return HttpRefusal("last_updated_duration", absl::StrCat("For input string: \"", digits, "\""));
  }
  return ExportErrorStatus(ExportError::kE2005, internal::DurationArgument(text));
}

std::optional<InputProperty> FirstOf(std::optional<InputProperty> specific,
                                     std::optional<InputProperty> general) {
  return specific ? specific : general;
}

// decodeParams: identifiers field by field in 2.43.2's order, then periods and the duration.
absl::Status Decode(const dvexport::v1::ExportRequest& r, const BoundRequest& b,
                    ExportParams* params) {
  const bool code_fallback = r.has_input_use_code_fallback() && r.input_use_code_fallback();
  const std::optional<InputProperty> any =
      b.input || code_fallback ? b.input : std::optional(InputProperty::kUid);
  params->input_use_code_fallback = !any.has_value();
  absl::Status status =
      DecodeIds("data_set", FirstOf(b.input_data_set, any), r.data_set(), &params->data_sets);
  if (status.ok()) {
    status = DecodeIds("data_element_group", FirstOf(b.input_data_element_group, any),
                       r.data_element_group(), &params->data_element_groups);
  }
  if (status.ok()) {
    status = DecodeIds("data_element", FirstOf(b.input_data_element, any), r.data_element(),
                       &params->data_elements);
  }
  if (status.ok()) {
    status =
        DecodeIds("org_unit", FirstOf(b.input_org_unit, any), r.org_unit(), &params->org_units);
  }
  if (status.ok()) {
    status = DecodeIds("org_unit_group", any, r.org_unit_group(), &params->org_unit_groups);
  }
  if (status.ok()) {
    status = DecodeIds("category_option_combo", any, r.category_option_combo(),
                       &params->category_option_combos);
  }
  if (status.ok()) {
    status = DecodeIds("attribute_option_combo", any, r.attribute_option_combo(),
                       &params->attribute_option_combos);
  }
  if (status.ok()) status = DecodePeriods(r.period(), params);
  if (status.ok()) status = DecodeDuration(r.last_updated_duration(), params);
  return status;
}

IdScheme OutputScheme(const std::optional<IdScheme>& specific,
                      const std::optional<IdScheme>& general) {
  if (specific) return *specific;
  if (general) return *general;
  return IdScheme::Uid();
}

// resolveOrders, and the store's default when none.
void ResolveOrder(bool order_by_period, std::vector<OrderKey>* order) {
  bool has_period = false;
  for (OrderKey key : *order) has_period = has_period || key == OrderKey::kPe;
  if (order_by_period && !has_period) order->insert(order->begin(), OrderKey::kPe);
  if (order->empty()) *order = {OrderKey::kPe, OrderKey::kCreated, OrderKey::kDe};
}

// dvexport's change tracking refuses an offset for the reason it refuses a limit.
absl::Status CheckChangeTrackingOffset(const dvexport::v1::ExportRequest& request) {
  if (!request.has_offset() || request.offset() == 0) return absl::OkStatus();
  if (!request.changes_since().empty()) {
    return absl::InvalidArgumentError(
        "changes_since: cannot be combined with offset (an export from an offset is incomplete, "
        "so the next token would skip what it left out)");
  }
  if (request.start_change_stream()) {
    return absl::InvalidArgumentError(
        "start_change_stream: cannot be combined with offset (a stream starts with a complete "
        "export)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckExportRules243(const ExportParams& p) {
  const bool both_dates = p.start_date.has_value() && p.end_date.has_value();
  if (p.data_sets.empty() && p.data_elements.empty() && p.data_element_groups.empty()) {
    return ExportErrorStatus(ExportError::kE2001);
  }
  if (p.periods.empty() && !both_dates && !p.last_updated_micros &&
      !p.last_updated_duration_micros) {
    return ExportErrorStatus(ExportError::kE2002);
  }
  if (p.org_units.empty() && p.org_unit_groups.empty()) {
    return ExportErrorStatus(ExportError::kE2006);
  }
  if (!p.periods.empty() && both_dates) return ExportErrorStatus(ExportError::kE2003);
  if (both_dates && *p.start_date > *p.end_date) return ExportErrorStatus(ExportError::kE2004);
  if (!p.org_unit_groups.empty() && p.children) return ExportErrorStatus(ExportError::kE2007);
  if (p.limit.has_value() && *p.limit < 0) {
    return ExportErrorStatus(ExportError::kE2009, internal::GroupedInteger(*p.limit));
  }
  return absl::OkStatus();
}

absl::StatusOr<ExportParams> ValidateExportRequest243(const dvexport::v1::ExportRequest& request) {
  ExportParams params;
  params.dhis2 = 43;
  params.last_updated_date_only = true;
  BoundRequest bound;
  absl::Status status = BindParameters(request, &bound, &params);
  if (!status.ok()) return status;
  params.output.data_element = OutputScheme(bound.data_element, bound.output);
  params.output.org_unit = OutputScheme(bound.org_unit, bound.output);
  params.output.category_option_combo = OutputScheme(bound.category_option_combo, bound.output);
  params.output.attribute_option_combo = OutputScheme(bound.attribute_option_combo, bound.output);
  params.output.data_set = OutputScheme(bound.data_set, bound.output);
  params.output.category = OutputScheme(std::nullopt, bound.output);
  params.output.category_option = OutputScheme(std::nullopt, bound.output);
  status = Decode(request, bound, &params);
  if (!status.ok()) return status;
  if (!bound.attribute_options.empty()) {
    params.attribute_combo = bound.attribute_combo;
    params.attribute_options = bound.attribute_options;
  }
  params.children = request.children();
  params.include_deleted = request.include_deleted();
  if (request.has_limit()) params.limit = request.limit();
  if (request.has_offset())
    params.offset = request.offset() < 0 ? -int64_t{request.offset()} : int64_t{request.offset()};
  if (request.has_level()) params.level = request.level();
  params.exclude_default_coc = request.exclude_default_coc();
  params.exclude_default_aoc = request.exclude_default_aoc();
  ResolveOrder(request.order_by_period(), &params.order);
  status = CheckChangeTrackingOffset(request);
  if (status.ok()) status = internal::BindChangeTracking(request, &params);
  if (status.ok()) status = CheckExportRules243(params);
  if (!status.ok()) return status;
  return params;
}

}  // namespace dvexport::dhis2
