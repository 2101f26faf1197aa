#include "service/http/data_value_sets_request_243.h"

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "boost/url/pct_string_view.hpp"
#include "service/dhis2/export_file_name.h"
#include "service/http/content_negotiation.h"

namespace dvexport::http {

namespace {

using dvexport::v1::Compression;
using dvexport::v1::ExportOrder;
using dvexport::v1::ExportRequest;
using dvexport::v1::Format;

// The longest `attachment` or `format` put into a file name.
constexpr size_t kMaxFileNamePartBytes = 255;

// Bytes of a value quoted without quotes in a message (an `order` element); the rest is cut.
constexpr size_t kMaxElementBytes = 64;

// Spring's message for a value of a DHIS2 enum that does not bind (CrudControllerAdvice
// .handleTypeMismatchException): the value's part, then "Valid values are: [...]".
constexpr char kCompressionValues[] = "Valid values are: [NONE, GZIP, ZIP]";

// The class DHIS2's ConvertEnum names when an `order` element is none of its keys.
constexpr char kOrderClass[] = "class org.hisp.dhis.datavalue.DataExportParams$Order";

// DataExportParams.Order's keys.
struct OrderName {
  absl::string_view name;
  ExportOrder order;
};
constexpr OrderName kOrderNames[] = {
    {"DE", dvexport::v1::EXPORT_ORDER_DE},   {"OU", dvexport::v1::EXPORT_ORDER_OU},
    {"PE", dvexport::v1::EXPORT_ORDER_PE},   {"CREATED", dvexport::v1::EXPORT_ORDER_CREATED},
    {"AOC", dvexport::v1::EXPORT_ORDER_AOC},
};

// "text" as Java's String.equalsIgnoreCase compares it with an ASCII name: ASCII letters in
// lower case, and U+0130 and U+0131 (whose upper or lower case is an ASCII 'I') as 'i'.
std::string JavaCaseFolded(absl::string_view text) {
  return absl::AsciiStrToLower(absl::StrReplaceAll(text, {{"\xC4\xB0", "i"}, {"\xC4\xB1", "i"}}));
}

std::optional<ExportOrder> OrderNamed(absl::string_view name, bool ignore_case) {
  const std::string folded = JavaCaseFolded(name);
  for (const OrderName& key : kOrderNames) {
    if (ignore_case ? folded == absl::AsciiStrToLower(key.name) : name == key.name) {
      return key.order;
    }
  }
  return std::nullopt;
}

// "text" cut to kMaxElementBytes (at a character), for a message.
std::string Shortened(absl::string_view text) {
  if (text.size() <= kMaxElementBytes) return std::string(text);
  size_t cut = kMaxElementBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(text.substr(0, cut), "...");
}

// `order` (List<Order>) as Spring binds it. Its conversion service first: one value split on ','
// and each element trimmed (repeated values each whole, trimmed), an empty one null (left out
// here; DHIS2's ORDER BY lookup fails on it with a 500, INFERRED), the others by exact name. When
// one is not a name, Spring falls back to DHIS2's ConvertEnum on each element of the same split,
// untrimmed and ignoring case; an element that is no name then is the 400.
absl::Status BindOrder(const QueryParameters& parameters,
                       google::protobuf::RepeatedField<int>* out) {
  const std::vector<std::string>& values = parameters.Values("order");
  const bool split = values.size() == 1;
  std::vector<absl::string_view> elements(values.begin(), values.end());
  if (split) {
    elements.clear();
    if (!values[0].empty()) {
      for (absl::string_view element : absl::StrSplit(values[0], ',')) elements.push_back(element);
    }
  }
  std::vector<ExportOrder> orders;
  bool converted = true;
  for (absl::string_view element : elements) {
    if ((split ? JavaTrim(element) : element).empty()) continue;
    std::optional<ExportOrder> order = OrderNamed(JavaTrim(element), false);
    if (!order.has_value()) {
      converted = false;
      break;
    }
    orders.push_back(*order);
  }
  if (!converted) {
    orders.clear();
    for (absl::string_view element : elements) {
      std::optional<ExportOrder> order = OrderNamed(element, true);
      if (!order.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Value ", QuoteValue(parameters.Text("order")), " is not valid for parameter order. ",
            " Cannot convert ", Shortened(element), " to ", kOrderClass));
      }
      orders.push_back(*order);
    }
  }
  for (ExportOrder order : orders) out->Add(order);
  return absl::OkStatus();
}

// `compression` as Spring binds DHIS2's Compression enum with DHIS2's ConvertEnum (Java's
// equalsIgnoreCase), and dvexport's zstd; none is COMPRESSION_UNSPECIFIED, as on 2.42.
absl::StatusOr<Compression> BindCompression(const QueryParameters& parameters) {
  if (!parameters.Has("compression")) return dvexport::v1::COMPRESSION_UNSPECIFIED;
  const std::string text = parameters.Text("compression");
  const std::string folded = JavaCaseFolded(text);
  if (folded == "none") return dvexport::v1::COMPRESSION_UNSPECIFIED;
  if (folded == "gzip") return dvexport::v1::COMPRESSION_GZIP;
  if (folded == "zip") return dvexport::v1::COMPRESSION_ZIP;
  if (folded == "zstd") return dvexport::v1::COMPRESSION_ZSTD;
  if (text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression cannot be empty. ", kCompressionValues));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "Value ", QuoteValue(text), " is not valid for parameter compression. ", kCompressionValues));
}

// unfoldOptionCombos where it asks for what dvexport does not write.
absl::Status CheckUnfold(const QueryParameters& parameters, Format format) {
  std::optional<bool> unfold;
  absl::Status status = parameters.BindOptionalBoolean("unfoldOptionCombos", &unfold);
  if (!status.ok() || !unfold.has_value()) return status;
  const std::string value = parameters.Values("unfoldOptionCombos")[0];
  if (format == dvexport::v1::FORMAT_ADX && !*unfold) {
    return NotValid("unfoldOptionCombos", value,
                    "dvexport writes ADX's option combos by category and option, as DHIS2 does "
                    "by default: leave the parameter out or set it to true");
  }
  if (format != dvexport::v1::FORMAT_ADX && *unfold) {
    return NotValid(
        "unfoldOptionCombos", value,
        "dvexport does not unfold option combos into categories and options (DHIS2 "
        "2.43's Alpha feature) outside ADX: leave the parameter out or set it to false");
  }
  return absl::OkStatus();
}

// offset and level (Integer), and the booleans orderByPeriod, inputUseCodeFallback,
// excludeDefaultCoc, excludeDefaultAoc.
absl::Status BindNumbersAndFlags(const QueryParameters& parameters, ExportRequest* query) {
  std::optional<int32_t> number;
  absl::Status status = parameters.BindInteger("offset", &number);
  if (!status.ok()) return status;
  if (number) query->set_offset(*number);
  number.reset();
  status = parameters.BindInteger("level", &number);
  if (!status.ok()) return status;
  if (number) query->set_level(*number);
  struct Flag {
    absl::string_view name;
    void (ExportRequest::*set)(bool);
  };
  static constexpr Flag kFlags[] = {
      {"orderByPeriod", &ExportRequest::set_order_by_period},
      {"excludeDefaultCoc", &ExportRequest::set_exclude_default_coc},
      {"excludeDefaultAoc", &ExportRequest::set_exclude_default_aoc},
  };
  for (const Flag& flag : kFlags) {
    bool value = false;
    status = parameters.BindBoolean(flag.name, &value);
    if (!status.ok()) return status;
    (query->*flag.set)(value);
  }
  std::optional<bool> fallback;
  status = parameters.BindOptionalBoolean("inputUseCodeFallback", &fallback);
  if (!status.ok()) return status;
  if (fallback) query->set_input_use_code_fallback(*fallback);
  return absl::OkStatus();
}

// A part of the file name in `attachment; filename="<name>"` that the quotes would not hold, or
// that would let a zip's entry leave its directory.
absl::Status CheckFileNamePart(absl::string_view name, absl::string_view value) {
  if (value.size() > kMaxFileNamePartBytes) {
    return NotValid(
        name, value,
        absl::StrCat("It names the file and has at most ", kMaxFileNamePartBytes, " characters"));
  }
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F || c == '"' || c == '/' || c == '\\') {
      return NotValid(name, value, "It names the file: printable ASCII without '\"', '/' or '\\'");
    }
  }
  return absl::OkStatus();
}

bool Compressed(Compression compression) {
  return compression == dvexport::v1::COMPRESSION_GZIP ||
         compression == dvexport::v1::COMPRESSION_ZIP ||
         compression == dvexport::v1::COMPRESSION_ZSTD;
}

// DataValueSetController's Content-Type: ContextUtils' type of the format, the compression's
// "+gzip" or "+zip" since 2.43.2, and the charset DHIS2's CharacterEncodingFilter forces (Tomcat
// writes it ";charset=UTF-8").
std::string ContentType243(Format format, Compression compression) {
  absl::string_view type = "application/json";
  if (format == dvexport::v1::FORMAT_XML) type = "application/xml";
  if (format == dvexport::v1::FORMAT_CSV) type = "application/csv";
  if (format == dvexport::v1::FORMAT_ADX) type = "application/adx+xml";
  absl::string_view suffix;
  if (compression == dvexport::v1::COMPRESSION_GZIP) suffix = "+gzip";
  if (compression == dvexport::v1::COMPRESSION_ZIP) suffix = "+zip";
  if (compression == dvexport::v1::COMPRESSION_ZSTD) suffix = "+zstd";
  return absl::StrCat(type, suffix, ";charset=UTF-8");
}

// Tomcat's pathInfo: "path" percent-decoded ('+' stays '+'), or as it is when it does not decode.
std::string PathInfo(absl::string_view path) {
  const std::string copy(path);  // NUL-terminated for Boost.URL (data_value_sets_request.cc)
  boost::urls::result<boost::urls::pct_string_view> encoded =
      boost::urls::make_pct_string_view(copy);
  return encoded.has_value() ? encoded->decode() : copy;
}

}  // namespace

Format SelectFormat243(const QueryParameters& parameters, absl::string_view path) {
  if (parameters.Has("format")) return FormatParameterOf(parameters.Text("format"));
  const std::string path_info = PathInfo(path);
  if (absl::EndsWith(path_info, ".adx+xml")) return dvexport::v1::FORMAT_ADX;
  if (absl::EndsWith(path_info, ".xml")) return dvexport::v1::FORMAT_XML;
  if (absl::EndsWith(path_info, ".csv")) return dvexport::v1::FORMAT_CSV;
  return dvexport::v1::FORMAT_JSON;
}

absl::Status Bind243(const QueryParameters& parameters, dvexport::v1::ExportFileRequest* request) {
  ExportRequest& query = *request->mutable_query();
  parameters.BindList("categoryOptionCombo", query.mutable_category_option_combo());
  absl::Status status = BindNumbersAndFlags(parameters, &query);
  if (!status.ok()) return status;
  status = BindOrder(parameters, query.mutable_order());
  if (!status.ok()) return status;
  absl::StatusOr<Compression> compression = BindCompression(parameters);
  if (!compression.ok()) return compression.status();
  request->set_compression(*compression);
  request->set_attachment(parameters.Text("attachment"));
  return CheckUnfold(parameters, request->format());
}

absl::Status SuccessHeaders243(const QueryParameters& parameters,
                               const dvexport::v1::ExportFileRequest& request,
                               std::vector<std::pair<std::string, std::string>>* headers) {
  headers->reserve(6);
  headers->emplace_back("Content-Type", ContentType243(request.format(), request.compression()));
  if (Compressed(request.compression()) || !parameters.Has("attachment")) {
    std::optional<std::string> attachment;
    if (parameters.Has("attachment")) attachment = parameters.Text("attachment");
    std::string format(dhis2::FormatName(request.format()));
    if (parameters.Has("format")) format = parameters.Text("format");
    absl::Status status = CheckFileNamePart("attachment", attachment.value_or(""));
    if (status.ok()) status = CheckFileNamePart("format", format);
    if (!status.ok()) return status;
    const std::string name =
        dhis2::FileName243(request.query(), attachment, format, request.compression());
    headers->emplace_back("Content-Disposition",
                          absl::StrCat("attachment; filename=\"", name, "\""));
    headers->emplace_back("Content-Transfer-Encoding", "binary");
  }
  headers->emplace_back("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate");
  headers->emplace_back("X-Content-Type-Options", "nosniff");
  headers->emplace_back("X-XSS-Protection", "0");
  return absl::OkStatus();
}

}  // namespace dvexport::http
