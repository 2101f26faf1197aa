// DHIS2's WebMessages (service/http/web_message.h): the status table of refusals, and the
// bodies in JSON and XML, escaped byte for byte as they always were.

#include "service/http/web_message.h"

#include <chrono>
#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/utf8_sequence.h"
#include "gtest/gtest.h"
#include "service/auth/verify.h"
#include "service/dhis2/export_error.h"
#include "tests/http/data_value_sets_testing.h"

namespace dvexport::http {
namespace {

using testing::Header;
using testing::Headers;

// --- Refusals from the pipeline -------------------------------------------------------------

TEST(RefusalResponseTest, Dhis2RulesAreConflictsWithTheirCode) {
  HttpResponse response = RefusalResponse(
      absl::InvalidArgumentError("E2006: At least one organisation unit or organisation unit "
                                 "group must be specified"),
      MessageFormat::kJson, false);
  EXPECT_EQ(response.status, 409);
  const Headers expected = {
      {"Content-Type", "application/json;charset=UTF-8"},
      {"Cache-Control", "no-cache, private"},
      {"X-Content-Type-Options", "nosniff"},
      {"X-XSS-Protection", "0"},
  };
  EXPECT_EQ(response.headers, expected);
  EXPECT_EQ(response.body,
            R"({"httpStatus":"Conflict","httpStatusCode":409,"status":"ERROR","message":"At )"
            R"(least one organisation unit or organisation unit group must be )"
            R"(specified","errorCode":"E2006"})");

  response = RefusalResponse(
      absl::PermissionDeniedError("E2010: User is not allowed to read data for data set: "
                                  "`pBOMPrpg1QX`"),
      MessageFormat::kXml, false);
  EXPECT_EQ(response.status, 409);
  EXPECT_EQ(Header(response.headers, "Content-Type"), "application/xml;charset=UTF-8");
  EXPECT_EQ(response.body,
            R"(<webMessage xmlns="http://dhis2.org/schema/dxf/2.0" httpStatus="Conflict" )"
            R"(httpStatusCode="409" status="ERROR" errorCode="E2010"><message>User is not )"
            R"(allowed to read data for data set: `pBOMPrpg1QX`</message></webMessage>)");
  EXPECT_EQ(RefusalResponse(absl::NotFoundError("E2041: Attribute option combo does not exist"),
                            MessageFormat::kJson, false)
                .status,
            409);
  EXPECT_EQ(RefusalResponse(absl::InvalidArgumentError("E2040: Both category combination and "
                                                       "category options must be specified"),
                            MessageFormat::kJson, false)
                .body,
            R"({"httpStatus":"Conflict","httpStatusCode":409,"status":"ERROR","message":"Both )"
            R"(category combination and category options must be specified",)"
            R"("errorCode":"E2040"})");
}

// DHIS2 2.43's binding and decoding refusals carry DHIS2's status and text as a payload: the
// door writes those, not the gRPC message that names the field.
TEST(RefusalResponseTest, Dhis2243RefusalsAreWrittenWithDhis2sStatusAndText) {
  const std::string text =
      "UID must be an alphanumeric string of 11 characters starting with a letter, but was: abc";
  HttpResponse response = RefusalResponse(
      dhis2::Dhis2HttpRefusalStatus(absl::StatusCode::kInvalidArgument, "data_set", 400, text),
      MessageFormat::kJson, false);
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.body, absl::StrCat(R"({"httpStatus":"Bad Request","httpStatusCode":400,)",
                                        R"("status":"ERROR","message":")", text, R"("})"));
  response = RefusalResponse(
      dhis2::Dhis2HttpRefusalStatus(absl::StatusCode::kInvalidArgument, "input_id_scheme", 500,
                                    "UUID is not supported for this operation"),
      MessageFormat::kJson, false);
  EXPECT_EQ(response.status, 500);
  EXPECT_NE(response.body.find("UUID is not supported for this operation"), std::string::npos);
  // The same message without the payload is dvexport's own 400, as it stands.
  response = RefusalResponse(absl::InvalidArgumentError(absl::StrCat("data_set: ", text)),
                             MessageFormat::kJson, false);
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.body.find("data_set: UID must"), std::string::npos);
}

TEST(RefusalResponseTest, MapsEveryStatusCode) {
  struct Case {
    absl::Status status;
    int http;
    const char* phrase;
  };
  const Case cases[] = {
      {absl::InvalidArgumentError("data_set: \"x\" is not a valid UID"), 400, "Bad Request"},
      {absl::InvalidArgumentError("E20: not a code"), 400, "Bad Request"},
      {absl::FailedPreconditionError("changes_since: the token is too old"), 409, "Conflict"},
      {absl::NotFoundError("data_set: \"dsX\" does not exist"), 404, "Not Found"},
      {absl::PermissionDeniedError("not yours"), 403, "Forbidden"},
      {absl::ResourceExhaustedError("too many exports"), 503, "Service Unavailable"},
      {absl::UnavailableError("the server is shutting down"), 503, "Service Unavailable"},
      {absl::CancelledError("cancelled"), 503, "Service Unavailable"},
      {absl::DeadlineExceededError("deadline"), 504, "Gateway Timeout"},
      {absl::InternalError("boom"), 500, "Internal Server Error"},
      {absl::UnknownError("boom"), 500, "Internal Server Error"},
      {absl::DataLossError("boom"), 500, "Internal Server Error"},
  };
  for (const Case& c : cases) {
    const HttpResponse response = RefusalResponse(c.status, MessageFormat::kJson, false);
    EXPECT_EQ(response.status, c.http) << c.status;
    EXPECT_EQ(
        response.body.rfind(absl::StrCat(R"({"httpStatus":")", c.phrase, R"(","httpStatusCode":)",
                                         c.http, R"(,"status":"ERROR","message":)"),
                            0),
        0u)
        << response.body;
    EXPECT_EQ(response.body.find("errorCode"), std::string::npos) << response.body;
    EXPECT_EQ(Header(response.headers, "Cache-Control"), "no-cache, private");
    EXPECT_EQ(Header(response.headers, "Retry-After"),
              c.status.code() == absl::StatusCode::kResourceExhausted ? "1" : "<absent>");
  }
  EXPECT_EQ(RefusalResponse(absl::NotFoundError("data_set: \"dsX\" does not exist"),
                            MessageFormat::kJson, false)
                .body,
            R"({"httpStatus":"Not Found","httpStatusCode":404,"status":"ERROR","message":)"
            R"("data_set: \"dsX\" does not exist"})");
}

TEST(RefusalResponseTest, InternalErrorsAreMasked) {
  const HttpResponse response =
      RefusalResponse(absl::InternalError("pqxx: connection to host=db password=secret failed"),
                      MessageFormat::kJson, false);
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(response.body,
            R"({"httpStatus":"Internal Server Error","httpStatusCode":500,"status":"ERROR",)"
            R"("message":"An unexpected error has occured. Please contact your system )"
            R"(administrator"})");
}

TEST(RefusalResponseTest, UnauthenticatedNamesApiTokenOnlyForTokens) {
  HttpResponse response = RefusalResponse(
      absl::UnauthenticatedError("The API token does not exists"), MessageFormat::kJson, true);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(Header(response.headers, "WWW-Authenticate"), "ApiToken");
  EXPECT_EQ(response.body,
            R"({"httpStatus":"Unauthorized","httpStatusCode":401,"status":"ERROR","message":)"
            R"("The API token does not exists"})");
  response =
      RefusalResponse(absl::UnauthenticatedError("Unauthorized"), MessageFormat::kXml, false);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(Header(response.headers, "WWW-Authenticate"), "<absent>");
  EXPECT_EQ(response.body,
            R"(<webMessage xmlns="http://dhis2.org/schema/dxf/2.0" httpStatus="Unauthorized" )"
            R"(httpStatusCode="401" status="ERROR"><message>Unauthorized</message></webMessage>)");
}

// DHIS2 2.42's ApiTokenResolver: a malformed header or a failed checksum is
// ApiTokenErrors.invalidRequest, which CrudControllerAdvice answers 400 (after
// DhisApiTokenAuthenticationEntryPoint added WWW-Authenticate: ApiToken). The statuses are
// auth::Present's own, as the HTTP door gets them.
TEST(RefusalResponseTest, MalformedTokenAndFailedChecksumAre400AsInDhis2) {
  const std::pair<const char*, const char*> cases[] = {
      {"ApiToken  d2p_x", "Api token is malformed"},
      {"apitoken d2p_x y", "Api token is malformed"},
      {"ApiToken d2p_lyt5j9WqXaVzJsUhvGJ1w0Ea5GL4jkszazPSWo5HWLFC1QnPCj",
       "Checksum validation failed"},
  };
  for (const auto& [authorization, message] : cases) {
    auth::Credentials credentials;
    credentials.transport = auth::Transport::kHttp;
    credentials.authorization = {authorization};
    absl::StatusOr<auth::PresentedCredential> presented = auth::Present(credentials);
    ASSERT_FALSE(presented.ok()) << authorization;
    HttpResponse response = RefusalResponse(presented.status(), MessageFormat::kJson, true);
    EXPECT_EQ(response.status, 400) << authorization;
    EXPECT_EQ(Header(response.headers, "WWW-Authenticate"), "ApiToken");
    EXPECT_EQ(response.body,
              absl::StrCat(R"({"httpStatus":"Bad Request","httpStatusCode":400,"status":"ERROR",)",
                           R"("message":")", message, R"("})"));
    response = RefusalResponse(presented.status(), MessageFormat::kXml, true);
    EXPECT_EQ(response.status, 400);
    EXPECT_EQ(response.body,
              absl::StrCat(R"(<webMessage xmlns="http://dhis2.org/schema/dxf/2.0" )",
                           R"(httpStatus="Bad Request" httpStatusCode="400" status="ERROR">)",
                           "<message>", message, "</message></webMessage>"));
  }
}

// Over HTTP: "Unauthorized" without gRPC's sentence, and WWW-Authenticate only for what the
// token filter refused, whatever else the request carried.
TEST(RefusalResponseTest, HttpRefusalsUseDhis2sWords) {
  auth::Credentials credentials;
  credentials.transport = auth::Transport::kHttp;
  absl::StatusOr<auth::PresentedCredential> presented = auth::Present(credentials);
  ASSERT_FALSE(presented.ok());
  HttpResponse response = RefusalResponse(presented.status(), MessageFormat::kJson, false);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(Header(response.headers, "WWW-Authenticate"), "<absent>");
  EXPECT_EQ(response.body, R"({"httpStatus":"Unauthorized","httpStatusCode":401,"status":"ERROR",)"
                           R"("message":"Unauthorized"})");

  // A Basic refusal of a request that also carried a token after it: no WWW-Authenticate.
  credentials.authorization = {"Basic !!!", "ApiToken d2p_x"};
  presented = auth::Present(credentials);
  ASSERT_FALSE(presented.ok());
  response = RefusalResponse(presented.status(), MessageFormat::kJson, true);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(Header(response.headers, "WWW-Authenticate"), "<absent>");

  // A token's referrer list over HTTP: DHIS2's text, 401, WWW-Authenticate.
  auth::Identity identity;
  identity.principal.method = dhis2::AuthMethod::kApiToken;
  identity.token_rules.allowed_referrers = {"https://apps.example.org/app"};
  const absl::Status status =
      auth::CheckPerCall(identity, "10.0.0.1", std::chrono::system_clock::now(), "GET",
                         std::nullopt, auth::Transport::kHttp);
  response = RefusalResponse(status, MessageFormat::kJson, false);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(Header(response.headers, "WWW-Authenticate"), "ApiToken");
  EXPECT_EQ(response.body,
            R"({"httpStatus":"Unauthorized","httpStatusCode":401,"status":"ERROR","message":)"
            R"("Failed to authenticate API token, request http referrer is missing or not )"
            R"(allowed."})");
}

TEST(WebMessageBodyTest, EscapesJsonStrings) {
  EXPECT_EQ(WebMessageBody(400, "a\"b\\c\nd\x01\xC3(", "", MessageFormat::kJson),
            R"({"httpStatus":"Bad Request","httpStatusCode":400,"status":"ERROR","message":)"
            R"("a\"b\\c\nd\u0001)"
            "\xEF\xBF\xBD"
            R"(("})");
}

TEST(WebMessageBodyTest, EscapesXmlAndReplacesWhatXmlCannotCarry) {
  EXPECT_EQ(WebMessageBody(409, "a&b<c>d\"e\r\tf\n\x01g\xEF\xBF\xBF\xC3(\xC3\xA9", "E2006",
                           MessageFormat::kXml),
            R"(<webMessage xmlns="http://dhis2.org/schema/dxf/2.0" httpStatus="Conflict" )"
            R"(httpStatusCode="409" status="ERROR" errorCode="E2006"><message>)"
            "a&amp;b&lt;c&gt;d&quot;e&#xd;\tf\n\xEF\xBF\xBDg\xEF\xBF\xBD\xEF\xBF\xBD(\xC3\xA9"
            "</message></webMessage>");
}

// --- XML escaping through common/escaped_copy.h -----------------------------------------------

// The WebMessage XML escaper as it was written before it went through common/escaped_copy.h
// (issue 33), kept here as the reference the bytes must still match: &, <, >, " as entities, CR
// as &#xd;, tab and LF raw in text and as &#x9; &#xa; in attributes; U+FFFD for the other
// controls, U+FFFE, U+FFFF and each ill-formed UTF-8 subpart.
void ReferenceXmlEscaped(std::string_view text, bool attribute, std::string* out) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      const common::Utf8Sequence sequence = common::ScanUtf8Sequence(s + i, n - i);
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

// The XML WebMessage with "message" and "error_code" as the reference escaper writes it.
std::string ReferenceXmlBody(int code, std::string_view phrase, std::string_view message,
                             std::string_view error_code) {
  std::string body = "<webMessage xmlns=\"http://dhis2.org/schema/dxf/2.0\" httpStatus=\"";
  ReferenceXmlEscaped(phrase, /*attribute=*/true, &body);
  absl::StrAppend(&body, "\" httpStatusCode=\"", code, "\" status=\"ERROR\"");
  if (!error_code.empty()) {
    body.append(" errorCode=\"");
    ReferenceXmlEscaped(error_code, /*attribute=*/true, &body);
    body.append("\"");
  }
  body.append("><message>");
  ReferenceXmlEscaped(message, /*attribute=*/false, &body);
  body.append("</message></webMessage>");
  return body;
}

TEST(WebMessageBodyTest, XmlEscapesControlsQuotesAmpersandsAndInvalidUtf8) {
  // Text: tab and LF raw, CR as a reference, the other controls as U+FFFD, DEL raw.
  EXPECT_EQ(WebMessageBody(400, "\x01\x08\t\n\x0B\x0C\r\x1F\x7F \"'&<>", "", MessageFormat::kXml),
            "<webMessage xmlns=\"http://dhis2.org/schema/dxf/2.0\" httpStatus=\"Bad Request\" "
            "httpStatusCode=\"400\" status=\"ERROR\"><message>"
            "\xEF\xBF\xBD\xEF\xBF\xBD\t\n\xEF\xBF\xBD\xEF\xBF\xBD&#xd;\xEF\xBF\xBD\x7F "
            "&quot;'&amp;&lt;&gt;</message></webMessage>");
  // An attribute (the error code): tab, LF and CR as references, quotes and ampersands escaped.
  EXPECT_EQ(WebMessageBody(409, "m", "E\t\n\r\"&<>\x01", MessageFormat::kXml),
            "<webMessage xmlns=\"http://dhis2.org/schema/dxf/2.0\" httpStatus=\"Conflict\" "
            "httpStatusCode=\"409\" status=\"ERROR\" "
            "errorCode=\"E&#x9;&#xa;&#xd;&quot;&amp;&lt;&gt;\xEF\xBF\xBD\">"
            "<message>m</message></webMessage>");
  // Ill-formed UTF-8 (a lone continuation byte, a truncated sequence, an overlong form, a
  // surrogate), U+FFFE and U+FFFF become U+FFFD; well-formed characters stay, beyond the BMP too.
  EXPECT_EQ(WebMessageBody(400,
                           "\x80|\xE2\x82|\xC0\xAF|\xED\xA0\x80|\xEF\xBF\xBE|\xEF\xBF\xBF|"
                           "\xEF\xBF\xBD|\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80",
                           "", MessageFormat::kXml),
            ReferenceXmlBody(400, "Bad Request",
                             "\x80|\xE2\x82|\xC0\xAF|\xED\xA0\x80|\xEF\xBF\xBE|\xEF\xBF\xBF|"
                             "\xEF\xBF\xBD|\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80",
                             ""));
  EXPECT_EQ(WebMessageBody(400, "\x80\xEF\xBF\xBE", "", MessageFormat::kXml),
            "<webMessage xmlns=\"http://dhis2.org/schema/dxf/2.0\" httpStatus=\"Bad Request\" "
            "httpStatusCode=\"400\" status=\"ERROR\"><message>"
            "\xEF\xBF\xBD\xEF\xBF\xBD</message></webMessage>");
}

// Every byte pair, at every offset of a 16-byte vector and past it, in the message and in the
// error code: the same bytes as the escaper the WebMessage had before.
TEST(WebMessageBodyTest, XmlIsByteForByteTheFormerEscapersOutput) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string pair{static_cast<char>(a), static_cast<char>(b)};
      for (const std::string& text :
           {pair, std::string(15, 'x') + pair + "tail", std::string(31, 'y') + pair}) {
        ASSERT_EQ(WebMessageBody(409, text, text, MessageFormat::kXml),
                  ReferenceXmlBody(409, "Conflict", text, text))
            << a << " " << b;
      }
    }
  }
  std::mt19937 random(33);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 80);
  for (int i = 0; i < 20000; ++i) {
    std::string text(static_cast<size_t>(length(random)), '\0');
    for (char& c : text) c = static_cast<char>(byte(random));
    ASSERT_EQ(WebMessageBody(400, text, text, MessageFormat::kXml),
              ReferenceXmlBody(400, "Bad Request", text, text));
  }
}

}  // namespace
}  // namespace dvexport::http
