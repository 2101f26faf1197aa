#include "service/http/web_message.h"

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/escaped_copy.h"
#include "common/json_string.h"
#include "common/plain_copy.h"
#include "common/utf8_sequence.h"
#include "service/auth/refusal_reason.h"
#include "service/dhis2/export_error.h"

namespace dvexport::http {

namespace {

using common::AsciiEscape;
using common::AsciiEscapeTable;
using common::ByteVector;
using common::Utf8Sequence;

// Debian's Abseil has its own string_view; the API and common/ speak std::string_view.
absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }
std::string_view Std(absl::string_view text) { return {text.data(), text.size()}; }

// DHIS2's message for an unexpected error (WebMessageUtils; its spelling).
constexpr absl::string_view kUnexpectedError =
    "An unexpected error has occured. Please contact your system administrator";

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

// --- XML escaping ---------------------------------------------------------------------------
//
// A WebMessage's XML is escaped through common/escaped_copy.h: &, <, >, " as entities, CR as
// &#xd; (a raw one would read back as LF), tab and LF raw in text and as &#x9; &#xa; in
// attributes; U+FFFD for what XML 1.0 cannot carry (the other controls, U+FFFE, U+FFFF) and for
// each ill-formed UTF-8 subpart.

// Worst-case output bytes per input byte: '"' becomes &quot;. Nothing grows more (&amp; 5,
// &#xa; 5, a replaced byte 3).
constexpr size_t kMaxXmlEscapedBytesPerInputByte = 6;

// The lanes WriteEscapedCopy does not copy as they are: below 0x20 (tab and LF in text are
// written back as themselves), '&', '<', '>', '"' and non-ASCII (signed lanes: < 0x20 also
// selects the bytes 0x80..0xFF, which are validated).
ByteVector WebMessageXmlAttentionMask(ByteVector v) {
  return (v < 0x20) | (v == '&') | (v == '<') | (v == '>') | (v == '"');
}

// What each ASCII byte that needs attention becomes, in an attribute or in text.
constexpr AsciiEscapeTable WebMessageXmlEscapes(bool attribute) {
  AsciiEscapeTable table{};
  for (int c = 0; c < 0x20; ++c) {
    table[c] = AsciiEscape{{'\xEF', '\xBF', '\xBD'}, 3};  // U+FFFD
  }
  table['\t'] = attribute ? AsciiEscape{{'&', '#', 'x', '9', ';'}, 5} : AsciiEscape{{'\t'}, 1};
  table['\n'] = attribute ? AsciiEscape{{'&', '#', 'x', 'a', ';'}, 5} : AsciiEscape{{'\n'}, 1};
  table['\r'] = AsciiEscape{{'&', '#', 'x', 'd', ';'}, 5};
  table['&'] = AsciiEscape{{'&', 'a', 'm', 'p', ';'}, 5};
  table['<'] = AsciiEscape{{'&', 'l', 't', ';'}, 4};
  table['>'] = AsciiEscape{{'&', 'g', 't', ';'}, 4};
  table['"'] = AsciiEscape{{'&', 'q', 'u', 'o', 't', ';'}, 6};
  return table;
}

// The escaping policy of common::WriteEscapedCopy for an attribute value or for text.
template <bool kAttribute>
struct WebMessageXmlEscaping {
  static ByteVector AttentionMask(ByteVector v) { return WebMessageXmlAttentionMask(v); }

  static constexpr AsciiEscapeTable kAsciiEscapes = WebMessageXmlEscapes(kAttribute);

  // Well-formed XML characters as they are; U+FFFD for the rest (U+FFFE and U+FFFF, EF BF BE
  // and EF BF BF, are well-formed UTF-8 but not XML characters).
  static char* WriteNonAscii(char* p, const unsigned char* s, Utf8Sequence sequence) {
    const bool non_character = sequence.length == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] >= 0xBE;
    if (sequence.well_formed && !non_character) {
      std::memcpy(p, s, sequence.length);
      return p + sequence.length;
    }
    std::memcpy(p, common::kUtf8ReplacementCharacter, common::kUtf8ReplacementCharacterLength);
    return p + common::kUtf8ReplacementCharacterLength;
  }
};

// Appends "text" escaped for XML: an attribute value's escaping when "kAttribute", else text's.
template <bool kAttribute>
void AppendXmlEscaped(absl::string_view text, std::string* out) {
  const size_t start = out->size();
  out->resize(start + kMaxXmlEscapedBytesPerInputByte * text.size());
  char* const begin = out->data() + start;
  char* const end = common::WriteEscapedCopy<WebMessageXmlEscaping<kAttribute>>(
      begin, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  out->resize(start + static_cast<size_t>(end - begin));
}

// --- The status table -----------------------------------------------------------------------

absl::string_view ContentTypeOf(MessageFormat format) {
  return format == MessageFormat::kXml ? "application/xml;charset=UTF-8"
                                       : "application/json;charset=UTF-8";
}

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

// A refusal of Dhis2ApiTokenFilter (auth::RefusalReason's names): the token unknown, expired,
// without a usable owner, or a request rule broken.
bool IsTokenRefusalReason(absl::string_view reason) {
  return absl::StartsWith(reason, "token_") || reason == "unknown_token" ||
         reason == "ip_not_allowed" || reason == "method_not_allowed" ||
         reason == "referrer_required";
}

// RefusalResponse of an Unauthenticated status.
HttpResponse UnauthenticatedResponse(const absl::Status& status, MessageFormat format,
                                     bool token_credential) {
  const absl::string_view message = status.message();
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

HttpResponse RefusalResponse(const absl::Status& status, MessageFormat format,
                             bool token_credential) {
  const absl::string_view message = status.message();
  const absl::StatusCode code = status.code();
  if (code == absl::StatusCode::kUnauthenticated) {
    return UnauthenticatedResponse(status, format, token_credential);
  }
  // DHIS2 2.43's binding and decoding refusals: its status and its text, without the field the
  // gRPC door's message names.
  if (const std::optional<dhis2::Dhis2HttpRefusal> refusal = dhis2::Dhis2HttpRefusalOf(status)) {
    return WebMessageResponse(refusal->http_status, refusal->message, "", format);
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
    AppendXmlEscaped</*kAttribute=*/true>(phrase, &body);
    absl::StrAppend(&body, "\" httpStatusCode=\"", code, "\" status=\"", state, "\"");
    if (!error_code.empty()) {
      body.append(" errorCode=\"");
      AppendXmlEscaped</*kAttribute=*/true>(error_code, &body);
      body.append("\"");
    }
    body.append("><message>");
    AppendXmlEscaped</*kAttribute=*/false>(message, &body);
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
