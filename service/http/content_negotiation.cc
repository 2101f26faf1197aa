#include "service/http/content_negotiation.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace dvexport::http {

namespace {

using dvexport::v1::Format;

// Debian's Abseil has its own string_view; the API and common/ speak std::string_view.
absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

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

// The compressed suffixes, for a 406 that says what to use instead.
bool IsCompressedSuffix(absl::string_view suffix) {
  return absl::EndsWithIgnoreCase(suffix, ".gz") || absl::EndsWithIgnoreCase(suffix, ".zip");
}

}  // namespace

int MediaType::WildcardRank() const {
  if (type == "*") return 2;
  return subtype == "*" || absl::StartsWith(subtype, "*+") ? 1 : 0;
}

bool MediaType::Includes(std::string_view other_type_text,
                         std::string_view other_subtype_text) const {
  const absl::string_view other_type = Absl(other_type_text);
  const absl::string_view other_subtype = Absl(other_subtype_text);
  if (type != "*" && type != other_type) return false;
  if (subtype == "*" || subtype == other_subtype) return true;
  if (!absl::StartsWith(subtype, "*+")) return false;
  // "*+xml" includes "adx+xml": the same suffix after the other's last '+'.
  const size_t plus = other_subtype.rfind('+');
  return plus != absl::string_view::npos &&
         other_subtype.substr(plus) == absl::string_view(subtype).substr(1);
}

std::vector<MediaType> AcceptableTypes(std::string_view suffix, std::string_view accept) {
  const std::string lower_suffix = absl::AsciiStrToLower(Absl(suffix));
  for (const RegisteredSuffix& registered : kRegisteredSuffixes) {
    if (lower_suffix == registered.suffix) {
      return {MediaType{std::string(registered.type), std::string(registered.subtype)}};
    }
  }
  std::vector<MediaType> ranges = ParseAccept(Absl(accept));
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

std::optional<Format> NegotiateFormat(const std::vector<MediaType>& acceptable) {
  for (const MediaType& range : acceptable) {
    for (const Producer& producer : kProducers) {
      for (const auto& [type, subtype] : producer.types) {
        if (!type.empty() &&
            range.Includes({type.data(), type.size()}, {subtype.data(), subtype.size()})) {
          return producer.format;
        }
      }
    }
  }
  return std::nullopt;
}

// With the first converter that can write the first type one can (Jackson JSON:
// application/json, application/*+json; Jackson XML: application/xml, text/xml). DHIS2 fails
// with 500 when neither can (text/csv, ADX); dvexport answers in JSON there.
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

Format FormatParameterOf(std::string_view text) {
  if (text == "xml") return dvexport::v1::FORMAT_XML;
  if (text == "adx+xml") return dvexport::v1::FORMAT_ADX;
  if (text == "csv") return dvexport::v1::FORMAT_CSV;
  return dvexport::v1::FORMAT_JSON;
}

std::string NotAcceptableMessage(std::string_view suffix) {
  if (IsCompressedSuffix(Absl(suffix))) {
    return absl::StrCat("The suffix .", Absl(suffix),
                        " names a compressed file, which is asked for with compression=gzip "
                        "or compression=zip (or give format=)");
  }
  return "None of the acceptable media types is produced here: application/json, "
         "application/xml, application/csv, text/csv and application/adx+xml";
}

}  // namespace dvexport::http
