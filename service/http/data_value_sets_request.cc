#include "service/http/data_value_sets_request.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "boost/url/encoding_opts.hpp"
#include "boost/url/parse.hpp"
#include "boost/url/parse_query.hpp"
#include "boost/url/pct_string_view.hpp"
#include "boost/url/url_view.hpp"
#include "common/json_string.h"
#include "common/utf8_sequence.h"
#include "service/auth/refusal_reason.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_file_name.h"

namespace dvexport::http {

namespace {

using dvexport::v1::Compression;
using dvexport::v1::ExportRequest;
using dvexport::v1::Format;

// Debian's Abseil has its own string_view; the API and common/ speak std::string_view.
absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }
std::string_view Std(absl::string_view text) { return {text.data(), text.size()}; }

// DHIS2's message for an unexpected error (WebMessageUtils; its spelling).
constexpr absl::string_view kUnexpectedError =
    "An unexpected error has occured. Please contact your system administrator";

// The longest `attachment` accepted: a file name (most file systems' limit).
constexpr size_t kMaxAttachmentBytes = 255;

// Bytes of a parameter's value quoted in a message; the rest is summarised.
constexpr size_t kMaxQuotedValueBytes = 64;

// --- Routes ---------------------------------------------------------------------------------

// The suffix of a route (what follows "dataValueSets."; empty for none), or nullopt when "path"
// is no route.
std::optional<absl::string_view> RouteSuffix(absl::string_view path) {
  if (!absl::ConsumePrefix(&path, "/api/")) return std::nullopt;
  if (path.size() > 3 && absl::ascii_isdigit(path[0]) && absl::ascii_isdigit(path[1]) &&
      path[2] == '/') {
    const int version = (path[0] - '0') * 10 + (path[1] - '0');
    if (version < 28 || version > 42) return std::nullopt;  // DhisApiVersion V28..V42
    path.remove_prefix(3);
  }
  if (!absl::ConsumePrefix(&path, "dataValueSets")) return std::nullopt;
  if (path.empty() || path == "/") return absl::string_view();
  if (path[0] != '.' || path.find('/') != absl::string_view::npos) return std::nullopt;
  return path.substr(1);
}

// --- Media types ----------------------------------------------------------------------------

// A media range of an Accept header, or a media type; lower case.
struct MediaType {
  std::string type;
  std::string subtype;
  double quality = 1;

  bool IsAll() const { return type == "*" && subtype == "*"; }
  // Spring's specificity rank: 0 concrete, 1 "type/*" (or "type/*+suffix"), 2 "*/*".
  int WildcardRank() const {
    if (type == "*") return 2;
    return subtype == "*" || absl::StartsWith(subtype, "*+") ? 1 : 0;
  }
  // Whether this range includes the concrete type "type/subtype" (Spring's MimeType.includes).
  bool Includes(absl::string_view other_type, absl::string_view other_subtype) const {
    if (type != "*" && type != other_type) return false;
    if (subtype == "*" || subtype == other_subtype) return true;
    if (!absl::StartsWith(subtype, "*+")) return false;
    // "*+xml" includes "adx+xml": the same suffix after the other's last '+'.
    const size_t plus = other_subtype.rfind('+');
    return plus != absl::string_view::npos &&
           other_subtype.substr(plus) == absl::string_view(subtype).substr(1);
  }
};

// A token of RFC 9110 (type, subtype).
bool IsToken(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (absl::ascii_isalnum(c)) continue;
    if (absl::string_view("!#$%&'*+-.^_`|~").find(c) == absl::string_view::npos) return false;
  }
  return true;
}

// A q-value of RFC 9110: 0 to 1 with at most three decimals.
std::optional<double> ParseQuality(absl::string_view text) {
  if (text.empty() || text.size() > 5 || (text[0] != '0' && text[0] != '1')) return std::nullopt;
  if (text.size() > 1 && text[1] != '.') return std::nullopt;
  for (char c : text.substr(std::min<size_t>(2, text.size()))) {
    if (!absl::ascii_isdigit(c)) return std::nullopt;
  }
  double quality = 0;
  if (!absl::SimpleAtod(text, &quality) || quality > 1) return std::nullopt;
  return quality;
}

// Splits on ',' outside quoted strings.
std::vector<absl::string_view> SplitHeaderList(absl::string_view header) {
  std::vector<absl::string_view> items;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < header.size(); ++i) {
    const char c = header[i];
    if (quoted && c == '\\') {
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      items.push_back(header.substr(start, i - start));
      start = i + 1;
    }
  }
  items.push_back(header.substr(start));
  return items;
}

// The valid media ranges of an Accept header, in its order. A range that does not parse is left
// out (Spring refuses the whole header with 406; a client is better served this way).
std::vector<MediaType> ParseAccept(absl::string_view accept) {
  std::vector<MediaType> ranges;
  for (absl::string_view item : SplitHeaderList(accept)) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, ';');
    const absl::string_view name = absl::StripAsciiWhitespace(parts[0]);
    const size_t slash = name.find('/');
    if (slash == absl::string_view::npos) continue;
    MediaType range{absl::AsciiStrToLower(name.substr(0, slash)),
                    absl::AsciiStrToLower(name.substr(slash + 1))};
    if (!IsToken(range.type) || !IsToken(range.subtype) ||
        (range.type == "*" && range.subtype != "*")) {
      continue;
    }
    bool valid = true;
    for (size_t i = 1; i < parts.size(); ++i) {
      std::pair<absl::string_view, absl::string_view> parameter =
          absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(parameter.first), "q")) continue;
      std::optional<double> quality = ParseQuality(absl::StripAsciiWhitespace(parameter.second));
      if (!quality) valid = false;
      if (quality) range.quality = *quality;
    }
    if (valid) ranges.push_back(std::move(range));
  }
  return ranges;
}

// DHIS2's registered path suffixes (WebMvcConfig.mediaTypeMap) and the media types they stand
// for. Only four name a format the export produces; the others (compressed files, PDF, ...)
// match no handler: 406 unless `format` is given.
struct RegisteredSuffix {
  absl::string_view suffix;
  absl::string_view type;
  absl::string_view subtype;
};
constexpr RegisteredSuffix kRegisteredSuffixes[] = {
    {"json", "application", "json"},
    {"json.gz", "application", "json+gzip"},
    {"json.zip", "application", "json+zip"},
    {"jsonp", "application", "javascript"},
    {"xml", "application", "xml"},
    {"xml.gz", "application", "xml+gzip"},
    {"xml.zip", "application", "xml+zip"},
    {"png", "image", "png"},
    {"pdf", "application", "pdf"},
    {"xls", "application", "vnd.ms-excel"},
    {"xlsx", "application", "vnd.ms-excel"},
    {"csv", "text", "csv"},
    {"csv.gz", "application", "csv+gzip"},
    {"csv.zip", "application", "csv+zip"},
    {"adx.xml", "application", "adx+xml"},
    {"adx.xml.gz", "application", "adx+xml+gzip"},
    {"adx.xml.zip", "application", "adx+xml+zip"},
    {"geojson", "application", "json+geojson"},
};

// What the request accepts, most wanted first, as Spring's ContentNegotiationManager resolves it:
// the registered suffix's type; else the Accept header's ranges (q=0 left out: RFC 9110's "not
// acceptable"), sorted by quality then specificity, stable; else (no Accept, nothing valid in it,
// or only */*: no preference) application/json. Empty when every range has q=0.
std::vector<MediaType> AcceptableTypes(absl::string_view suffix, absl::string_view accept) {
  const std::string lower_suffix = absl::AsciiStrToLower(suffix);
  for (const RegisteredSuffix& registered : kRegisteredSuffixes) {
    if (lower_suffix == registered.suffix) {
      return {MediaType{std::string(registered.type), std::string(registered.subtype)}};
    }
  }
  std::vector<MediaType> ranges = ParseAccept(accept);
  const bool any = !ranges.empty();
  std::erase_if(ranges, [](const MediaType& range) { return range.quality <= 0; });
  if (!any || (!ranges.empty() && std::all_of(ranges.begin(), ranges.end(),
                                              [](const MediaType& r) { return r.IsAll(); }))) {
    return {MediaType{"application", "json"}};
  }
  std::stable_sort(ranges.begin(), ranges.end(), [](const MediaType& a, const MediaType& b) {
    if (a.quality != b.quality) return a.quality > b.quality;
    return a.WildcardRank() < b.WildcardRank();
  });
  return ranges;
}

// The formats of DHIS2's `produces` handlers, in dvexport's order of preference for a range that
// includes several (application/*, */* after text/html): JSON first. Spring would break that
// tie by comparing the media types' names, which would pick ADX (INFERRED, not run).
struct Producer {
  Format format;
  // The media types of its `produces`, as {type, subtype}; unused entries are empty.
  std::array<std::pair<absl::string_view, absl::string_view>, 2> types;
};
constexpr Producer kProducers[] = {
    {dvexport::v1::FORMAT_JSON, {{{"application", "json"}, {}}}},
    // CONTENT_TYPE_XML only: Accept: text/xml matches no handler in DHIS2 (406).
    {dvexport::v1::FORMAT_XML, {{{"application", "xml"}, {}}}},
    // application/csv, and text/csv since dhis2-core PR #14458.
    {dvexport::v1::FORMAT_CSV, {{{"application", "csv"}, {"text", "csv"}}}},
    {dvexport::v1::FORMAT_ADX, {{{"application", "adx+xml"}, {}}}},
};

// The handler Spring picks without `format`: the one that produces the first acceptable type
// that any produces; nullopt when none does (406).
std::optional<Format> NegotiateFormat(const std::vector<MediaType>& acceptable) {
  for (const MediaType& range : acceptable) {
    for (const Producer& producer : kProducers) {
      for (const auto& [type, subtype] : producer.types) {
        if (!type.empty() && range.Includes(type, subtype)) return producer.format;
      }
    }
  }
  return std::nullopt;
}

// How Spring renders a WebMessage for these acceptable types: with the first converter that can
// write the first type one can (Jackson JSON: application/json, application/*+json; Jackson XML:
// application/xml, text/xml). DHIS2 fails with 500 when neither can (text/csv, ADX); dvexport
// answers in JSON there.
MessageFormat NegotiateMessageFormat(const std::vector<MediaType>& acceptable) {
  for (const MediaType& range : acceptable) {
    if (range.Includes("application", "json") ||
        (range.type == "application" && absl::EndsWith(range.subtype, "+json"))) {
      return MessageFormat::kJson;
    }
    if (range.Includes("application", "xml") || range.Includes("text", "xml")) {
      return MessageFormat::kXml;
    }
  }
  return MessageFormat::kJson;
}

// The compressed suffixes, for a 406 that says what to use instead.
bool IsCompressedSuffix(absl::string_view suffix) {
  return absl::EndsWithIgnoreCase(suffix, ".gz") || absl::EndsWithIgnoreCase(suffix, ".zip");
}

// --- WebMessages ----------------------------------------------------------------------------

absl::string_view ReasonPhrase(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return code < 500 ? "Bad Request" : "Internal Server Error";
  }
}

// Appends "text" escaped for XML: &, <, >, " as entities, CR as &#xd; (a raw one would read back
// as LF), tab and LF raw in text and as &#x9; &#xa; in attributes; U+FFFD for what XML 1.0
// cannot carry (the other controls, U+FFFE, U+FFFF) and for each ill-formed UTF-8 subpart.
void AppendXmlEscaped(absl::string_view text, bool attribute, std::string* out) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      const common::Utf8Sequence sequence = common::ScanUtf8Sequence(s + i, n - i);
      // U+FFFE and U+FFFF: EF BF BE, EF BF BF.
      const bool non_character = sequence.well_formed && sequence.length == 3 && c == 0xEF &&
                                 s[i + 1] == 0xBF && s[i + 2] >= 0xBE;
      if (sequence.well_formed && !non_character) {
        out->append(text.data() + i, sequence.length);
      } else {
        out->append(common::kUtf8ReplacementCharacter);
      }
      i += sequence.length;
      continue;
    }
    switch (c) {
      case '&':
        out->append("&amp;");
        break;
      case '<':
        out->append("&lt;");
        break;
      case '>':
        out->append("&gt;");
        break;
      case '"':
        out->append("&quot;");
        break;
      case '\r':
        out->append("&#xd;");
        break;
      case '\t':
        out->append(attribute ? "&#x9;" : "\t");
        break;
      case '\n':
        out->append(attribute ? "&#xa;" : "\n");
        break;
      default:
        if (c < 0x20) {
          out->append(common::kUtf8ReplacementCharacter);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
}

absl::string_view ContentTypeOf(MessageFormat format) {
  return format == MessageFormat::kXml ? "application/xml;charset=UTF-8"
                                       : "application/json;charset=UTF-8";
}

}  // namespace

HttpResponse WebMessageResponse(int code, absl::string_view message, absl::string_view error_code,
                                MessageFormat format) {
  HttpResponse response;
  response.status = code;
  response.headers = {
      {"Content-Type", std::string(ContentTypeOf(format))},
      {"Cache-Control", "no-cache, private"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-XSS-Protection", "0"},
  };
  response.body = WebMessageBody(code, Std(message), Std(error_code), format);
  return response;
}

namespace {

// The error code of a message "E<4 digits>: <text>", or empty.
absl::string_view ErrorCodeOf(absl::string_view message) {
  if (message.size() < 7 || message[0] != 'E' || message[5] != ':' || message[6] != ' ') {
    return {};
  }
  for (char c : message.substr(1, 4)) {
    if (!absl::ascii_isdigit(c)) return {};
  }
  return message.substr(0, 5);
}

// --- Query parameters -----------------------------------------------------------------------

// The parameters ParseDataValueSetsRequest reads; every other one is ignored.
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

static_assert(std::is_sorted(std::begin(kKnownParameters), std::end(kKnownParameters)));

bool IsKnownParameter(absl::string_view name) {
  return std::binary_search(std::begin(kKnownParameters), std::end(kKnownParameters), name);
}

// "value" for a message: as it is when short, else its first bytes (cut at a character) and its
// length, so that a huge value makes a short message.
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

// java.lang.String.trim: every character up to U+0020 off both ends.
absl::string_view JavaTrim(absl::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return text;
}

// The known parameters of a query, each with its values in query order (decoded, '+' as space).
// Spring binds them by their type:
// - a list (Set<String>): one value is split on ',' and each element trimmed (Spring's
//   StringToCollectionConverter); repeated values are taken as they are, not split (Spring's
//   ArrayToCollectionConverter): orgUnit=a,b&orgUnit=c is the two identifiers "a,b" and "c"
//   (INFERRED in the reference). DHIS2 drops an identifier it does not know, so "a,b" matches
//   nothing there; dvexport refuses it as the malformed or unknown identifier it is. Empty
//   elements (orgUnit=, orgUnit=a,,b) match nothing in DHIS2 and are dropped here;
// - a String: repeated values joined with ',' (ArrayToStringConverter), so format=xml&format=xml
//   is "xml,xml", which DHIS2's switch takes for JSON;
// - a boolean or integer: the first value (ArrayToObjectConverter);
// - a Date (DHIS2's property editor): repeated values joined with ',', which does not parse.
class QueryParameters {
 public:
  void Add(std::string name, std::string value) {
    values_[std::move(name)].push_back(std::move(value));
  }

  bool Has(absl::string_view name) const { return values_.find(name) != values_.end(); }

  const std::vector<std::string>& Values(absl::string_view name) const {
    static const std::vector<std::string> kNone;
    auto it = values_.find(name);
    return it == values_.end() ? kNone : it->second;
  }

  // The first known parameter, in name order, with a value that is not UTF-8.
  absl::Status CheckUtf8() const {
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

  void BindList(absl::string_view name,
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

  // The String binding: empty when absent.
  std::string Text(absl::string_view name) const { return absl::StrJoin(Values(name), ","); }

  // Spring's StringToBooleanConverter: true, on, yes, 1 and false, off, no, 0, in any case, after
  // trimming. An empty value converts to null, which leaves the default (false): the reference
  // leaves `children=` open (question 6); treating it as absent refuses nothing DHIS2 may accept.
  absl::Status BindBoolean(absl::string_view name, bool* out) const {
    const std::vector<std::string>& values = Values(name);
    if (values.empty()) return absl::OkStatus();
    const std::string value = absl::AsciiStrToLower(JavaTrim(values[0]));
    if (value.empty()) return absl::OkStatus();
    if (value == "true" || value == "on" || value == "yes" || value == "1") {
      *out = true;
    } else if (value == "false" || value == "off" || value == "no" || value == "0") {
      *out = false;
    } else {
      return NotValid(name, values[0],
                      "It must be a boolean: true or false (also on/off, yes/no, 1/0)");
    }
    return absl::OkStatus();
  }

  // Spring's StringToNumberConverterFactory for Integer: an empty value is null (unset);
  // otherwise NumberUtils.parseNumber: all whitespace removed, then decimal with an optional
  // sign, or hexadecimal after "0x", "0X" or "#" (with an optional '-'), within 32 bits.
  absl::Status BindInteger(absl::string_view name, std::optional<int32_t>* out) const {
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

  // A Date, checked as DHIS2's DateUtils.parseDate would parse it and passed on as written
  // (ParseDate accepts every form DHIS2's does: nothing to convert). Empty when absent or empty.
  absl::StatusOr<std::string> BindDate(absl::string_view name) const {
    const std::string text = Text(name);
    if (text.empty()) return text;
    absl::StatusOr<std::chrono::sys_days> date = dhis2::ParseDate(text);
    if (!date.ok()) return NotValid(name, text, date.status().message());
    return text;
  }

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
};

// Decodes the query of "url" into its known parameters. Keys and values are decoded as Tomcat
// decodes a query ('+' as space); a parameter without '=' has the empty value, as in Tomcat.
QueryParameters CollectParameters(const boost::urls::url_view& url) {
  QueryParameters parameters;
  for (const boost::urls::param& param : url.params(boost::urls::encoding_opts(true))) {
    if (IsKnownParameter(param.key)) parameters.Add(param.key, param.value);
  }
  return parameters;
}

// The 400 for a target that parse_origin_form refused: names the first parameter of "query"
// that is not valid percent-encoded text (RFC 3986: '%' then two hex digits; characters such
// as space, '"', '<', '>' and bytes above 0x7F percent-encoded).
// Boost.URL 1.81 is given NUL-terminated copies only: Debian's libboost_url reads pieces of a
// larger buffer up to a NUL (strlen; AddressSanitizer caught it reading past the request target).
HttpResponse InvalidTargetRefusal(absl::string_view query, MessageFormat format) {
  for (absl::string_view piece : absl::StrSplit(query, '&')) {
    const std::string piece_copy(piece);
    if (boost::urls::parse_query(piece_copy).has_value()) continue;
    const size_t equals = piece.find('=');
    const absl::string_view key = piece.substr(0, equals);
    const absl::string_view value =
        equals == absl::string_view::npos ? absl::string_view() : piece.substr(equals + 1);
    const std::string key_copy(key);
    boost::urls::result<boost::urls::pct_string_view> decoded_key =
        boost::urls::make_pct_string_view(key_copy);
    if (!decoded_key.has_value() || !boost::urls::parse_query(key_copy).has_value()) {
      return WebMessageResponse(400,
                                absl::StrCat("Parameter name ", QuoteValue(key),
                                             " is not valid percent-encoded text (RFC 3986)"),
                                "", format);
    }
    const std::string name = decoded_key->decode(boost::urls::encoding_opts(true));
    return WebMessageResponse(
        400, NotValid(name, value, "It is not valid percent-encoded text (RFC 3986)").message(), "",
        format);
  }
  return WebMessageResponse(400, "The request target is not a valid URI path and query (RFC 3986)",
                            "", format);
}

// An `attachment` goes into "Content-Disposition: attachment; filename=<name>" unquoted, as
// DHIS2 writes it, and names the zip's entry: it must be a plain file name. Refused: controls
// (CR and LF would inject headers), '"', ';' and ',' (they end or split the header's value),
// '/' and '\' (a zip entry "../x" escapes the directory it is extracted into), non-ASCII (not a
// header token; Tomcat would mangle it to ISO-8859-1), and more than kMaxAttachmentBytes.
absl::Status CheckAttachment(absl::string_view attachment) {
  if (attachment.size() > kMaxAttachmentBytes) {
    return NotValid("attachment", attachment,
                    absl::StrCat("A file name has at most ", kMaxAttachmentBytes, " characters"));
  }
  for (char c : attachment) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F || c == '"' || c == ';' || c == ',' || c == '/' || c == '\\') {
      return NotValid("attachment", attachment,
                      "A file name is printable ASCII without '\"', ';', ',', '/' or '\\'");
    }
  }
  return absl::OkStatus();
}

// Compression.fromValue (gzip, zip, none; any case; anything else none, without error), and
// dvexport's zstd.
Compression CompressionOf(absl::string_view text) {
  if (absl::EqualsIgnoreCase(text, "gzip")) return dvexport::v1::COMPRESSION_GZIP;
  if (absl::EqualsIgnoreCase(text, "zip")) return dvexport::v1::COMPRESSION_ZIP;
  if (absl::EqualsIgnoreCase(text, "zstd")) return dvexport::v1::COMPRESSION_ZSTD;
  return dvexport::v1::COMPRESSION_UNSPECIFIED;
}

// DataValueSetController's switch on `format`: exact and case-sensitive.
Format FormatParameterOf(absl::string_view text) {
  if (text == "xml") return dvexport::v1::FORMAT_XML;
  if (text == "adx+xml") return dvexport::v1::FORMAT_ADX;
  if (text == "csv") return dvexport::v1::FORMAT_CSV;
  return dvexport::v1::FORMAT_JSON;
}

absl::string_view ContentTypeOf(Format format) {
  switch (format) {
    case dvexport::v1::FORMAT_XML:
      return "application/xml;charset=UTF-8";
    case dvexport::v1::FORMAT_CSV:
      return "application/csv;charset=UTF-8";
    case dvexport::v1::FORMAT_ADX:
      return "application/adx+xml;charset=UTF-8";
    default:
      return "application/json;charset=UTF-8";
  }
}

// Binds the parameters into "request" (its format already set).
absl::Status Bind(const QueryParameters& parameters, dvexport::v1::ExportFileRequest* request) {
  ExportRequest& query = *request->mutable_query();
  parameters.BindList("dataSet", query.mutable_data_set());
  parameters.BindList("dataElementGroup", query.mutable_data_element_group());
  parameters.BindList("dataElement", query.mutable_data_element());
  parameters.BindList("period", query.mutable_period());
  parameters.BindList("orgUnit", query.mutable_org_unit());
  parameters.BindList("orgUnitGroup", query.mutable_org_unit_group());
  parameters.BindList("attributeOptionCombo", query.mutable_attribute_option_combo());
  parameters.BindList("attributeOptions", query.mutable_attribute_options());

  // DHIS2 binds both dates (a bad one is a 400 even when unused), then uses them only when no
  // period is given and both are (DefaultDataValueSetService.getFromUrl). A `period` whose
  // elements are all empty still counts as given there.
  absl::StatusOr<std::string> start = parameters.BindDate("startDate");
  if (!start.ok()) return start.status();
  absl::StatusOr<std::string> end = parameters.BindDate("endDate");
  if (!end.ok()) return end.status();
  const bool period_given = !parameters.Text("period").empty();
  if (!period_given && !start->empty() && !end->empty()) {
    query.set_start_date(*start);
    query.set_end_date(*end);
  }
  const std::string last_updated = parameters.Text("lastUpdated");
  if (!last_updated.empty()) {
    absl::StatusOr<int64_t> micros = dhis2::ParseDateTimeMicros(last_updated);
    if (!micros.ok()) return NotValid("lastUpdated", last_updated, micros.status().message());
    query.set_last_updated(last_updated);
  }

  bool flag = false;
  absl::Status status = parameters.BindBoolean("children", &flag);
  if (!status.ok()) return status;
  query.set_children(flag);
  flag = false;
  status = parameters.BindBoolean("includeDeleted", &flag);
  if (!status.ok()) return status;
  query.set_include_deleted(flag);
  std::optional<int32_t> number;
  status = parameters.BindInteger("limit", &number);
  if (!status.ok()) return status;
  if (number) query.set_limit(*number);
  number.reset();
  status = parameters.BindInteger("compressionLevel", &number);
  if (!status.ok()) return status;
  if (number) request->set_compression_level(*number);

  struct TextField {
    absl::string_view name;
    void (ExportRequest::*set)(const std::string&);
  };
  static constexpr TextField kTextFields[] = {
      {"lastUpdatedDuration", &ExportRequest::set_last_updated_duration},
      {"attributeCombo", &ExportRequest::set_attribute_combo},
      {"inputIdScheme", &ExportRequest::set_input_id_scheme},
      {"inputOrgUnitIdScheme", &ExportRequest::set_input_org_unit_id_scheme},
      {"inputDataElementIdScheme", &ExportRequest::set_input_data_element_id_scheme},
      {"inputDataSetIdScheme", &ExportRequest::set_input_data_set_id_scheme},
      {"inputDataElementGroupIdScheme", &ExportRequest::set_input_data_element_group_id_scheme},
      {"idScheme", &ExportRequest::set_id_scheme},
      {"dataElementIdScheme", &ExportRequest::set_data_element_id_scheme},
      {"orgUnitIdScheme", &ExportRequest::set_org_unit_id_scheme},
      {"categoryOptionComboIdScheme", &ExportRequest::set_category_option_combo_id_scheme},
      {"attributeOptionComboIdScheme", &ExportRequest::set_attribute_option_combo_id_scheme},
      {"dataSetIdScheme", &ExportRequest::set_data_set_id_scheme},
      {"changesSince", &ExportRequest::set_changes_since},
  };
  for (const TextField& field : kTextFields) {
    const std::string text = parameters.Text(field.name);
    if (!text.empty()) (query.*field.set)(text);
  }

  request->set_compression(CompressionOf(parameters.Text("compression")));
  const std::string attachment = parameters.Text("attachment");
  status = CheckAttachment(attachment);
  if (!status.ok()) return status;
  request->set_attachment(attachment);
  return absl::OkStatus();
}

// The headers of a 200 (DataValueSetController.getDataValueSet and compress, ContextUtils
// .setNoStore, Spring Security's header writers).
std::vector<std::pair<std::string, std::string>> SuccessHeaders(
    const dvexport::v1::ExportFileRequest& request) {
  std::vector<std::pair<std::string, std::string>> headers;
  // Room for all of them at once (and no growth from empty, where GCC 12 at -O3 warns falsely).
  headers.reserve(6);
  headers.emplace_back("Content-Type", ContentTypeOf(request.format()));
  const Compression compression = request.compression();
  const bool compressed = compression == dvexport::v1::COMPRESSION_GZIP ||
                          compression == dvexport::v1::COMPRESSION_ZIP ||
                          compression == dvexport::v1::COMPRESSION_ZSTD;
  if (compressed || !request.attachment().empty()) {
    headers.emplace_back("Content-Disposition",
                         absl::StrCat("attachment; filename=",
                                      dhis2::DownloadFileName(
                                          request.query(), request.attachment(),
                                          dhis2::FileExtensionOf(request.format()), compression)));
    headers.emplace_back("Content-Transfer-Encoding", "binary");
  }
  headers.emplace_back("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate");
  headers.emplace_back("X-Content-Type-Options", "nosniff");
  headers.emplace_back("X-XSS-Protection", "0");
  return headers;
}

// A refusal of Dhis2ApiTokenFilter (auth::RefusalReason's names): the token unknown, expired,
// without a usable owner, or a request rule broken.
bool IsTokenRefusalReason(absl::string_view reason) {
  return absl::StartsWith(reason, "token_") || reason == "unknown_token" ||
         reason == "ip_not_allowed" || reason == "method_not_allowed" ||
         reason == "referrer_required";
}

}  // namespace

bool IsDataValueSetsPath(std::string_view path) { return RouteSuffix(Absl(path)).has_value(); }

ParsedRequest ParseDataValueSetsRequest(std::string_view target_text,
                                        std::string_view accept_text) {
  const absl::string_view target = Absl(target_text);
  const absl::string_view accept = Absl(accept_text);
  ParsedRequest parsed;
  const size_t question = target.find('?');
  const absl::string_view path = target.substr(0, question);
  const absl::string_view query =
      question == absl::string_view::npos ? absl::string_view() : target.substr(question + 1);
  const std::optional<absl::string_view> suffix = RouteSuffix(path);
  const std::vector<MediaType> acceptable = AcceptableTypes(suffix.value_or(""), accept);
  const MessageFormat message_format = NegotiateMessageFormat(acceptable);
  parsed.message_format = message_format;
  if (!suffix) {
    parsed.refusal = WebMessageResponse(
        404,
        "No such resource: the export is GET /api/dataValueSets or /api/{28..42}/dataValueSets", "",
        message_format);
    return parsed;
  }

  // A NUL-terminated copy (see InvalidTargetRefusal); the url_view points into it.
  const std::string target_copy(target);
  boost::urls::result<boost::urls::url_view> url = boost::urls::parse_origin_form(target_copy);
  if (!url.has_value()) {
    parsed.refusal = InvalidTargetRefusal(query, message_format);
    return parsed;
  }
  const QueryParameters parameters = CollectParameters(*url);

  // Handler mapping (406) comes before binding (400), as in Spring.
  DataValueSetsRequest request;
  request.message_format = message_format;
  if (parameters.Has("format")) {
    request.export_request.set_format(FormatParameterOf(parameters.Text("format")));
  } else if (std::optional<Format> format = NegotiateFormat(acceptable)) {
    request.export_request.set_format(*format);
  } else {
    const std::string message =
        IsCompressedSuffix(*suffix)
            ? absl::StrCat("The suffix .", *suffix,
                           " names a compressed file, which is asked for with compression=gzip "
                           "or compression=zip (or give format=)")
            : "None of the acceptable media types is produced here: application/json, "
              "application/xml, application/csv, text/csv and application/adx+xml";
    parsed.refusal = WebMessageResponse(406, message, "", message_format);
    return parsed;
  }

  absl::Status status = parameters.CheckUtf8();
  if (status.ok()) status = Bind(parameters, &request.export_request);
  if (!status.ok()) {
    parsed.refusal = WebMessageResponse(400, status.message(), "", message_format);
    return parsed;
  }
  request.headers = SuccessHeaders(request.export_request);
  parsed.request = std::move(request);
  return parsed;
}

HttpResponse RefusalResponse(const absl::Status& status, MessageFormat format,
                             bool token_credential) {
  const absl::string_view message = status.message();
  const absl::StatusCode code = status.code();
  if (code == absl::StatusCode::kUnauthenticated) {
    // Dhis2ApiTokenFilter's refusals go through DhisApiTokenAuthenticationEntryPoint
    // (WWW-Authenticate: ApiToken) to CrudControllerAdvice, whose WebMessage takes the status of
    // the ApiTokenError: ApiTokenErrors.invalidRequest (a malformed token, a failed checksum) is
    // 400, invalidToken (the rest) 401. A refusal without a reason (too many failed attempts)
    // names a token when the request presented one.
    const std::string reason = auth::RefusalReason(status);
    const bool invalid_request = reason == "malformed_token" || reason == "bad_checksum";
    const bool token_refusal =
        reason.empty() ? token_credential : invalid_request || IsTokenRefusalReason(reason);
    HttpResponse response = WebMessageResponse(
        invalid_request ? 400 : 401, message.empty() ? "Unauthorized" : message, "", format);
    if (token_refusal) response.headers.emplace_back("WWW-Authenticate", "ApiToken");
    return response;
  }
  const absl::string_view error_code = ErrorCodeOf(message);
  if (!error_code.empty() &&
      (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kPermissionDenied ||
       code == absl::StatusCode::kNotFound || code == absl::StatusCode::kFailedPrecondition)) {
    return WebMessageResponse(409, message.substr(error_code.size() + 2), error_code, format);
  }
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return WebMessageResponse(400, message, "", format);
    case absl::StatusCode::kFailedPrecondition:
      return WebMessageResponse(409, message, "", format);
    case absl::StatusCode::kNotFound:
      return WebMessageResponse(404, message, "", format);
    case absl::StatusCode::kPermissionDenied:
      return WebMessageResponse(403, message, "", format);
    case absl::StatusCode::kResourceExhausted: {
      // DHIS2 has no such state (it queues on Tomcat's threads). The limits that refuse
      // (export slots, the authentication queue) free up within about a second, and a refusal
      // costs the server nothing: 1 s lets the retrying clients (urllib3, pyDHIS2, httr2 honour
      // Retry-After) come back soon without spinning.
      HttpResponse response = WebMessageResponse(503, message, "", format);
      response.headers.emplace_back("Retry-After", "1");
      return response;
    }
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kCancelled:
      return WebMessageResponse(503, message, "", format);
    case absl::StatusCode::kDeadlineExceeded:
      return WebMessageResponse(504, message, "", format);
    default:
      return WebMessageResponse(500, kUnexpectedError, "", format);
  }
}

std::string WebMessageBody(int code, std::string_view message_text,
                           std::string_view error_code_text, MessageFormat format) {
  const absl::string_view message = Absl(message_text);
  const absl::string_view error_code = Absl(error_code_text);
  const absl::string_view phrase = ReasonPhrase(code);
  const absl::string_view state = code >= 400 ? "ERROR" : "OK";
  std::string body;
  if (format == MessageFormat::kXml) {
    body = "<webMessage xmlns=\"http://dhis2.org/schema/dxf/2.0\" httpStatus=\"";
    AppendXmlEscaped(phrase, /*attribute=*/true, &body);
    absl::StrAppend(&body, "\" httpStatusCode=\"", code, "\" status=\"", state, "\"");
    if (!error_code.empty()) {
      body.append(" errorCode=\"");
      AppendXmlEscaped(error_code, /*attribute=*/true, &body);
      body.append("\"");
    }
    body.append("><message>");
    AppendXmlEscaped(message, /*attribute=*/false, &body);
    body.append("</message></webMessage>");
    return body;
  }
  body = "{\"httpStatus\":";
  common::AppendJsonString(Std(phrase), &body);
  absl::StrAppend(&body, ",\"httpStatusCode\":", code, ",\"status\":\"", state, "\",\"message\":");
  common::AppendJsonString(Std(message), &body);
  if (!error_code.empty()) {
    body.append(",\"errorCode\":");
    common::AppendJsonString(Std(error_code), &body);
  }
  body.append("}");
  return body;
}

}  // namespace dvexport::http
