#include "service/http/data_value_sets_request.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "boost/url/encoding_opts.hpp"
#include "boost/url/parse.hpp"
#include "boost/url/parse_query.hpp"
#include "boost/url/pct_string_view.hpp"
#include "boost/url/url_view.hpp"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_file_name.h"
#include "service/http/content_negotiation.h"
#include "service/http/data_value_sets_request_243.h"
#include "service/http/data_value_sets_request_parameters.h"

namespace dvexport::http {

namespace {

using dvexport::v1::Compression;
using dvexport::v1::ExportRequest;
using dvexport::v1::Format;

// Debian's Abseil has its own string_view; the API and common/ speak std::string_view.
absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }
std::string_view Std(absl::string_view text) { return {text.data(), text.size()}; }

// The longest `attachment` accepted: a file name (most file systems' limit).
constexpr size_t kMaxAttachmentBytes = 255;

// --- Routes ---------------------------------------------------------------------------------

// The suffix of a route of DHIS2 2.<dhis2> (what follows "dataValueSets."; empty for none), or
// nullopt when "path" is no route.
std::optional<absl::string_view> RouteSuffix(absl::string_view path, int dhis2) {
  if (!absl::ConsumePrefix(&path, "/api/")) return std::nullopt;
  if (path.size() > 3 && absl::ascii_isdigit(path[0]) && absl::ascii_isdigit(path[1]) &&
      path[2] == '/') {
    const int version = (path[0] - '0') * 10 + (path[1] - '0');
    // 2.42's DhisApiVersion V28..V42; 2.43's ApiVersionFilter 28..43.
    if (version < 28 || version > (dhis2 >= 43 ? 43 : 42)) return std::nullopt;
    path.remove_prefix(3);
  }
  if (!absl::ConsumePrefix(&path, "dataValueSets")) return std::nullopt;
  if (path.empty() || path == "/") return absl::string_view();
  if (path[0] != '.' || path.find('/') != absl::string_view::npos) return std::nullopt;
  return path.substr(1);
}

// --- Query parameters -----------------------------------------------------------------------

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

// Binds the list parameters (Set<String> in DHIS2) into "query".
void BindLists(const QueryParameters& parameters, ExportRequest* query) {
  parameters.BindList("dataSet", query->mutable_data_set());
  parameters.BindList("dataElementGroup", query->mutable_data_element_group());
  parameters.BindList("dataElement", query->mutable_data_element());
  parameters.BindList("period", query->mutable_period());
  parameters.BindList("orgUnit", query->mutable_org_unit());
  parameters.BindList("orgUnitGroup", query->mutable_org_unit_group());
  parameters.BindList("attributeOptionCombo", query->mutable_attribute_option_combo());
  parameters.BindList("attributeOptions", query->mutable_attribute_options());
}

// Binds startDate, endDate and lastUpdated into "query".
absl::Status BindDates(const QueryParameters& parameters, int dhis2, ExportRequest* query) {
  // DHIS2 binds both dates (a bad one is a 400 even when unused). 2.42 uses them only when no
  // period is given and both are (DefaultDataValueSetService.getFromUrl; a `period` whose
  // elements are all empty still counts as given there); 2.43 uses each one given.
  absl::StatusOr<std::string> start = parameters.BindDate("startDate");
  if (!start.ok()) return start.status();
  absl::StatusOr<std::string> end = parameters.BindDate("endDate");
  if (!end.ok()) return end.status();
  const bool period_given = !parameters.Text("period").empty();
  if (dhis2 >= 43 || (!period_given && !start->empty() && !end->empty())) {
    if (!start->empty()) query->set_start_date(*start);
    if (!end->empty()) query->set_end_date(*end);
  }
  const std::string last_updated = parameters.Text("lastUpdated");
  if (!last_updated.empty()) {
    absl::StatusOr<int64_t> micros = dhis2::ParseDateTimeMicros(last_updated);
    if (!micros.ok()) return NotValid("lastUpdated", last_updated, micros.status().message());
    query->set_last_updated(last_updated);
  }
  return absl::OkStatus();
}

// Binds the booleans (children, includeDeleted) and integers (limit, compressionLevel).
absl::Status BindFlagsAndNumbers(const QueryParameters& parameters,
                                 dvexport::v1::ExportFileRequest* request) {
  ExportRequest& query = *request->mutable_query();
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
  return absl::OkStatus();
}

// Binds the String parameters that go into the query as they are (set when not empty).
void BindTexts(const QueryParameters& parameters, ExportRequest* query) {
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
    if (!text.empty()) (query->*field.set)(text);
  }
}

// Binds the parameters DHIS2 2.<dhis2> reads into "request" (its format already set); the first
// that does not bind is the refusal.
absl::Status Bind(const QueryParameters& parameters, int dhis2,
                  dvexport::v1::ExportFileRequest* request) {
  BindLists(parameters, request->mutable_query());
  absl::Status status = BindDates(parameters, dhis2, request->mutable_query());
  if (!status.ok()) return status;
  status = BindFlagsAndNumbers(parameters, request);
  if (!status.ok()) return status;
  BindTexts(parameters, request->mutable_query());
  if (dhis2 >= 43) return Bind243(parameters, request);

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

// The format of the export: 2.43's (SelectFormat243), or 2.42's from `format`, else from the
// acceptable types; nullopt when none can be produced (406).
std::optional<Format> SelectFormat(const QueryParameters& parameters, absl::string_view path,
                                   const std::vector<MediaType>& acceptable, int dhis2) {
  if (dhis2 >= 43) return SelectFormat243(parameters, path);
  if (parameters.Has("format")) return FormatParameterOf(parameters.Text("format"));
  return NegotiateFormat(acceptable);
}

// Binds the parameters and makes the headers of the 200; a status when they do not bind.
absl::Status BindRequest(const QueryParameters& parameters, int dhis2,
                         DataValueSetsRequest* request) {
  absl::Status status = parameters.CheckUtf8();
  if (status.ok()) status = Bind(parameters, dhis2, &request->export_request);
  if (!status.ok()) return status;
  if (dhis2 >= 43) return SuccessHeaders243(parameters, request->export_request, &request->headers);
  request->headers = SuccessHeaders(request->export_request);
  return absl::OkStatus();
}

}  // namespace

bool IsDataValueSetsPath(std::string_view path, int dhis2) {
  return RouteSuffix(Absl(path), dhis2).has_value();
}

ParsedRequest ParseDataValueSetsRequest(std::string_view target_text, std::string_view accept,
                                        int dhis2) {
  const absl::string_view target = Absl(target_text);
  ParsedRequest parsed;
  const size_t question = target.find('?');
  const absl::string_view path = target.substr(0, question);
  const absl::string_view query =
      question == absl::string_view::npos ? absl::string_view() : target.substr(question + 1);
  const std::optional<absl::string_view> suffix = RouteSuffix(path, dhis2);
  const std::vector<MediaType> acceptable = AcceptableTypes(Std(suffix.value_or("")), accept);
  const MessageFormat message_format = NegotiateMessageFormat(acceptable);
  parsed.message_format = message_format;
  if (!suffix) {
    parsed.refusal = WebMessageResponse(
        404,
        absl::StrCat("No such resource: the export is GET /api/dataValueSets or /api/{28..",
                     dhis2 >= 43 ? 43 : 42, "}/dataValueSets"),
        "", message_format);
    return parsed;
  }

  // A NUL-terminated copy (see InvalidTargetRefusal); the url_view points into it.
  const std::string target_copy(target);
  boost::urls::result<boost::urls::url_view> url = boost::urls::parse_origin_form(target_copy);
  if (!url.has_value()) {
    parsed.refusal = InvalidTargetRefusal(query, message_format);
    return parsed;
  }
  const QueryParameters parameters = CollectParameters(*url, dhis2);

  // Handler mapping (406, 2.42 only) comes before binding (400), as in Spring.
  DataValueSetsRequest request;
  request.message_format = message_format;
  if (std::optional<Format> format = SelectFormat(parameters, path, acceptable, dhis2)) {
    request.export_request.set_format(*format);
  } else {
    const std::string message = NotAcceptableMessage(Std(*suffix));
    parsed.refusal = WebMessageResponse(406, message, "", message_format);
    return parsed;
  }

  const absl::Status status = BindRequest(parameters, dhis2, &request);
  if (!status.ok()) {
    parsed.refusal = WebMessageResponse(400, status.message(), "", message_format);
    return parsed;
  }
  parsed.request = std::move(request);
  return parsed;
}

}  // namespace dvexport::http
