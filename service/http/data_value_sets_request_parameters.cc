#include "service/http/data_value_sets_request_parameters.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "boost/url/encoding_opts.hpp"
#include "common/utf8_sequence.h"
#include "service/dhis2/dates.h"

namespace dvexport::http {

namespace {

// Bytes of a parameter's value quoted in a message; the rest is summarised.
constexpr size_t kMaxQuotedValueBytes = 64;

// The parameters every served DHIS2 reads; every other one is ignored.
constexpr absl::string_view kKnownParameters[] = {
    "attachment",
    "attributeCombo",
    "attributeOptionCombo",
    "attributeOptionComboIdScheme",
    "attributeOptions",
    "categoryOptionComboIdScheme",
    "changesSince",
    "children",
    "compression",
    "compressionLevel",
    "dataElement",
    "dataElementGroup",
    "dataElementIdScheme",
    "dataSet",
    "dataSetIdScheme",
    "endDate",
    "format",
    "idScheme",
    "includeDeleted",
    "inputDataElementGroupIdScheme",
    "inputDataElementIdScheme",
    "inputDataSetIdScheme",
    "inputIdScheme",
    "inputOrgUnitIdScheme",
    "lastUpdated",
    "lastUpdatedDuration",
    "limit",
    "orgUnit",
    "orgUnitGroup",
    "orgUnitIdScheme",
    "period",
    "startDate",
};

// The parameters DHIS2 2.43 added (DataExportParams.Input); 2.42 ignores them.
constexpr absl::string_view kKnownParameters243[] = {
    "categoryOptionCombo",
    "excludeDefaultAoc",
    "excludeDefaultCoc",
    "inputUseCodeFallback",
    "level",
    "offset",
    "order",
    "orderByPeriod",
    "unfoldOptionCombos",
};

static_assert(std::is_sorted(std::begin(kKnownParameters), std::end(kKnownParameters)));
static_assert(std::is_sorted(std::begin(kKnownParameters243), std::end(kKnownParameters243)));

bool IsKnownParameter(absl::string_view name, int dhis2) {
  return std::binary_search(std::begin(kKnownParameters), std::end(kKnownParameters), name) ||
         (dhis2 >= 43 &&
          std::binary_search(std::begin(kKnownParameters243), std::end(kKnownParameters243), name));
}

// Spring's StringToBooleanConverter on "value" (see BindBoolean): nullopt for null.
absl::StatusOr<std::optional<bool>> ConvertBoolean(absl::string_view name,
                                                   const std::string& value) {
  const std::string lower = absl::AsciiStrToLower(JavaTrim(value));
  if (lower.empty()) return std::optional<bool>();
  if (lower == "true" || lower == "on" || lower == "yes" || lower == "1") return true;
  if (lower == "false" || lower == "off" || lower == "no" || lower == "0") return false;
  return NotValid(name, value, "It must be a boolean: true or false (also on/off, yes/no, 1/0)");
}

}  // namespace

std::string QuoteValue(absl::string_view value) {
  if (value.size() <= kMaxQuotedValueBytes) return absl::StrCat("'", value, "'");
  size_t cut = kMaxQuotedValueBytes;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat("'", value.substr(0, cut), "...' (", value.size(), " bytes)");
}

absl::Status NotValid(absl::string_view name, absl::string_view value, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("Value ", QuoteValue(value), " is not valid for parameter ", name, ". ", why));
}

absl::string_view JavaTrim(absl::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return text;
}

void QueryParameters::Add(std::string name, std::string value) {
  values_[std::move(name)].push_back(std::move(value));
}

const std::vector<std::string>& QueryParameters::Values(absl::string_view name) const {
  static const std::vector<std::string> kNone;
  auto it = values_.find(name);
  return it == values_.end() ? kNone : it->second;
}

absl::Status QueryParameters::CheckUtf8() const {
  for (const auto& [name, values] : values_) {
    for (const std::string& value : values) {
      const auto* bytes = reinterpret_cast<const unsigned char*>(value.data());
      if (common::WellFormedUtf8Prefix(bytes, value.size()) != value.size()) {
        return NotValid(name, value, "It is not UTF-8 (percent-encode text as UTF-8 bytes)");
      }
    }
  }
  return absl::OkStatus();
}

void QueryParameters::BindList(absl::string_view name,
                               google::protobuf::RepeatedPtrField<std::string>* out) const {
  const std::vector<std::string>& values = Values(name);
  if (values.size() == 1) {
    for (absl::string_view element : absl::StrSplit(values[0], ',')) {
      element = JavaTrim(element);
      if (!element.empty()) out->Add(std::string(element));
    }
    return;
  }
  for (const std::string& value : values) {
    if (!value.empty()) out->Add(std::string(value));
  }
}

std::string QueryParameters::Text(absl::string_view name) const {
  return absl::StrJoin(Values(name), ",");
}

absl::Status QueryParameters::BindBoolean(absl::string_view name, bool* out) const {
  std::optional<bool> value;
  absl::Status status = BindOptionalBoolean(name, &value);
  if (value.has_value()) *out = *value;
  return status;
}

absl::Status QueryParameters::BindOptionalBoolean(absl::string_view name,
                                                  std::optional<bool>* out) const {
  const std::vector<std::string>& values = Values(name);
  if (values.empty()) return absl::OkStatus();
  absl::StatusOr<std::optional<bool>> value = ConvertBoolean(name, values[0]);
  if (!value.ok()) return value.status();
  *out = *value;
  return absl::OkStatus();
}

absl::Status QueryParameters::BindInteger(absl::string_view name,
                                          std::optional<int32_t>* out) const {
  const std::vector<std::string>& values = Values(name);
  if (values.empty() || values[0].empty()) return absl::OkStatus();
  std::string text;
  for (char c : values[0]) {
    const bool java_whitespace = (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    if (!java_whitespace) text.push_back(c);
  }
  absl::string_view digits = text;
  const bool negative = absl::ConsumePrefix(&digits, "-");
  int base = 10;
  if (absl::ConsumePrefix(&digits, "0x") || absl::ConsumePrefix(&digits, "0X") ||
      absl::ConsumePrefix(&digits, "#")) {
    base = 16;
  } else if (!negative) {
    absl::ConsumePrefix(&digits, "+");
  }
  int64_t value = 0;
  bool valid = !digits.empty();
  for (char c : digits) {
    int digit;
    if (absl::ascii_isdigit(c)) {
      digit = c - '0';
    } else if (base == 16 && absl::ascii_isxdigit(c)) {
      digit = absl::ascii_tolower(c) - 'a' + 10;
    } else {
      valid = false;
      break;
    }
    value = value * base + digit;
    if (value > int64_t{1} << 31) {  // beyond every int32 magnitude; stops before int64's
      valid = false;
      break;
    }
  }
  if (negative) value = -value;
  if (!valid || value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return NotValid(name, values[0], "It must be an integer from -2147483648 to 2147483647");
  }
  *out = static_cast<int32_t>(value);
  return absl::OkStatus();
}

absl::StatusOr<std::string> QueryParameters::BindDate(absl::string_view name) const {
  const std::string text = Text(name);
  if (text.empty()) return text;
  absl::StatusOr<std::chrono::sys_days> date = dhis2::ParseDate(text);
  if (!date.ok()) return NotValid(name, text, date.status().message());
  return text;
}

QueryParameters CollectParameters(const boost::urls::url_view& url, int dhis2) {
  QueryParameters parameters;
  for (const boost::urls::param& param : url.params(boost::urls::encoding_opts(true))) {
    if (IsKnownParameter(param.key, dhis2)) parameters.Add(param.key, param.value);
  }
  return parameters;
}

}  // namespace dvexport::http
