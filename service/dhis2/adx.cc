#include "service/dhis2/adx.h"

#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/utf8_sequence.h"

namespace dvexport::dhis2 {
namespace {

bool InRanges(char32_t c, const std::pair<char32_t, char32_t>* ranges, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (c >= ranges[i].first && c <= ranges[i].second) return true;
  }
  return false;
}

// XML 1.0 (5th edition) production [4] NameStartChar.
bool IsNameStartChar(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {':', ':'},       {'A', 'Z'},       {'_', '_'},       {'a', 'z'},
      {0xC0, 0xD6},     {0xD8, 0xF6},     {0xF8, 0x2FF},    {0x370, 0x37D},
      {0x37F, 0x1FFF},  {0x200C, 0x200D}, {0x2070, 0x218F}, {0x2C00, 0x2FEF},
      {0x3001, 0xD7FF}, {0xF900, 0xFDCF}, {0xFDF0, 0xFFFD}, {0x10000, 0xEFFFF}};
  return InRanges(c, kRanges, std::size(kRanges));
}

// Production [4a] NameChar.
bool IsNameChar(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {'-', '.'}, {'0', '9'}, {0xB7, 0xB7}, {0x300, 0x36F}, {0x203F, 0x2040}};
  return IsNameStartChar(c) || InRanges(c, kRanges, std::size(kRanges));
}

}  // namespace

absl::Status CheckAdxRequest(const dvexport::v1::ExportRequest& request, int dhis2) {
  if (dhis2 < 43 && request.data_set_size() == 0) {
    return absl::InvalidArgumentError(
        "data_set: an ADX export groups its values by data set; at least one is required");
  }
  if (dhis2 < 43 && request.data_element_size() > 0) {
    return absl::InvalidArgumentError(
        "data_element: an ADX export holds its data sets' elements only; give data_set instead");
  }
  if (dhis2 < 43 && request.data_element_group_size() > 0) {
    return absl::InvalidArgumentError(
        "data_element_group: an ADX export holds its data sets' elements only; give data_set "
        "instead");
  }
  if (dhis2 < 43 && (!request.attribute_combo().empty() || request.attribute_options_size() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(request.attribute_combo().empty() ? "attribute_options" : "attribute_combo",
                     ": DHIS2's ADX export ignores attribute_combo and attribute_options; give "
                     "attribute_option_combo instead"));
  }
  if (!request.changes_since().empty()) {
    return absl::InvalidArgumentError(
        "changes_since: ADX cannot mark a value deleted, which a delta must carry; use JSON, "
        "CSV or XML for changes");
  }
  return absl::OkStatus();
}

dvexport::v1::ExportRequest WithAdxDefaults(const dvexport::v1::ExportRequest& request, int dhis2) {
  dvexport::v1::ExportRequest adx = request;
  if (adx.id_scheme().empty()) adx.set_id_scheme("CODE");
  if (dhis2 >= 43 && !adx.has_input_use_code_fallback()) adx.set_input_use_code_fallback(true);
  return adx;
}

dvexport::v1::ExportRequest WithUidOutputSchemes(const dvexport::v1::ExportRequest& request) {
  dvexport::v1::ExportRequest uids = request;
  uids.set_id_scheme("UID");
  uids.set_data_element_id_scheme("UID");
  uids.set_org_unit_id_scheme("UID");
  uids.set_category_option_combo_id_scheme("UID");
  uids.set_attribute_option_combo_id_scheme("UID");
  uids.set_data_set_id_scheme("UID");
  return uids;
}

std::optional<std::string_view> AdxPeriodDuration(std::string_view period_type_name) {
  // 2.43 adds WeeklyFriday, FinancialFeb and FinancialAug (AdxPeriod at 2.43.1); only a 2.43
  // database has periods of those types.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kDurations = {{
      {"Daily", "P1D"},           {"Weekly", "P7D"},         {"WeeklyWednesday", "P7D"},
      {"WeeklyThursday", "P7D"},  {"WeeklySaturday", "P7D"}, {"WeeklySunday", "P7D"},
      {"BiWeekly", "P14D"},       {"Monthly", "P1M"},        {"BiMonthly", "P2M"},
      {"Quarterly", "P3M"},       {"QuarterlyNov", "P3M"},   {"SixMonthly", "P6M"},
      {"SixMonthlyApril", "P6M"}, {"SixMonthlyNov", "P6M"},  {"Yearly", "P1Y"},
      {"FinancialApril", "P1Y"},  {"FinancialJuly", "P1Y"},  {"FinancialSep", "P1Y"},
      {"FinancialOct", "P1Y"},    {"FinancialNov", "P1Y"},   {"TwoYearly", "P2Y"},
      {"WeeklyFriday", "P7D"},    {"FinancialFeb", "P1Y"},   {"FinancialAug", "P1Y"},
  }};
  for (const auto& [name, duration] : kDurations) {
    if (name == period_type_name) return duration;
  }
  return std::nullopt;
}

bool IsNumericValueType(std::string_view value_type) {
  static constexpr std::string_view kNumeric[] = {
      "INTEGER", "INTEGER_POSITIVE", "INTEGER_NEGATIVE", "INTEGER_ZERO_OR_POSITIVE",
      "NUMBER",  "UNIT_INTERVAL",    "PERCENTAGE"};
  for (std::string_view numeric : kNumeric) {
    if (numeric == value_type) return true;
  }
  return false;
}

bool IsXmlName(std::string_view name) {
  const auto* s = reinterpret_cast<const unsigned char*>(name.data());
  const size_t n = name.size();
  if (n == 0) return false;
  for (size_t at = 0; at < n;) {
    char32_t c = s[at];
    size_t length = 1;
    if (c >= 0x80) {
      const common::Utf8Sequence sequence = common::ScanUtf8Sequence(s + at, n - at);
      if (!sequence.well_formed) return false;
      length = sequence.length;
      static constexpr unsigned char kLeadMask[] = {0, 0, 0x1F, 0x0F, 0x07};
      c = s[at] & kLeadMask[length];
      for (size_t i = 1; i < length; ++i) c = (c << 6) | (s[at + i] & 0x3F);
    }
    if (at == 0 ? !IsNameStartChar(c) : !IsNameChar(c)) return false;
    at += length;
  }
  return true;
}

}  // namespace dvexport::dhis2
