// libFuzzer target: the HTTP door's request parsing (service/http/data_value_sets_request.h, with
// content_negotiation.h and web_message.h) on arbitrary request targets and Accept headers, the
// hostile input of GET /api/dataValueSets, as a DHIS2 2.42 or 2.43 database's door parses them
// (the first byte's high bit says which).
// Parsing must never crash or read past the target (it is handed a heap buffer of exactly its
// size, without a NUL, as the connection's parser hands it), must either accept or refuse, and
// whatever it writes must be safe to send: no CR, LF or NUL in a header (no header injection from
// `attachment` or a file name), a refusal status of 4xx, and a JSON WebMessage that is valid
// JSON (RFC 8259, well-formed UTF-8, whatever bytes the request held) or a well-formed XML one
// (expat), whatever the message held.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/http/data_value_sets_request.h"
#include "service/http/web_message.h"
#include "tests/encode/strict_json_parser.h"
#include "tests/support/strict_xml_parser.h"

namespace {

using dvexport::http::HttpResponse;
using dvexport::http::MessageFormat;

void Check(bool condition) {
  if (!condition) std::abort();
}

// Mostly plausible targets, so that parsing gets past the route and into the parameters.
std::string Target(FuzzedDataProvider& in) {
  static const char* const kPaths[] = {
      "/api/dataValueSets",     "/api/dataValueSets.json",     "/api/41/dataValueSets",
      "/api/dataValueSets.csv", "/api/dataValueSets.xml",      "/api/dataValueSets.adx.xml",
      "/api/dataValueSets/",    "/api/dataValueSets.adx+xml",  "/api/dataValueSets.json.gz",
      "/api/43/dataValueSets",  "/api/dataValueSets.adx%2Bxml"};
  static const char* const kKeys[] = {
      "dataSet",    "orgUnit", "period",      "startDate",          "endDate",
      "children",   "format",  "compression", "attachment",         "includeDeleted",
      "idScheme",   "limit",   "lastUpdated", "compressionLevel",   "changesSince",
      "orgUnit%20", "%zz",     "dataElement", "lastUpdatedDuration"};
  // DHIS2 2.43's parameters.
  static const char* const kKeys243[] = {"order",
                                         "offset",
                                         "level",
                                         "orderByPeriod",
                                         "unfoldOptionCombos",
                                         "inputUseCodeFallback",
                                         "excludeDefaultCoc",
                                         "categoryOptionCombo"};
  if (!in.ConsumeBool()) return in.ConsumeRandomLengthString(512);
  std::string target = kPaths[in.ConsumeIntegralInRange<size_t>(0, std::size(kPaths) - 1)];
  const int parameters = in.ConsumeIntegralInRange(0, 6);
  for (int i = 0; i < parameters; ++i) {
    target += i == 0 ? '?' : '&';
    const size_t key =
        in.ConsumeIntegralInRange<size_t>(0, std::size(kKeys) + std::size(kKeys243) - 1);
    target += key < std::size(kKeys) ? kKeys[key] : kKeys243[key - std::size(kKeys)];
    target += '=';
    target += in.ConsumeRandomLengthString(40);
  }
  return target;
}

void CheckHeaders(const std::vector<std::pair<std::string, std::string>>& headers) {
  for (const auto& [name, value] : headers) {
    Check(!name.empty());
    for (const std::string* text : {&name, &value}) {
      Check(text->find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
    }
  }
}

void CheckResponse(const HttpResponse& response, MessageFormat format) {
  CheckHeaders(response.headers);
  if (format == MessageFormat::kJson) {
    Check(dvexport::encode::test_support::ParseJsonStrictly(response.body).ok());
  } else {
    Check(response.body.rfind("<webMessage", 0) == 0);
    Check(dvexport::test_support::ParseXmlStrictly(response.body).ok());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int dhis2 = size > 0 && (data[0] & 0x80) != 0 ? 43 : 42;
  FuzzedDataProvider in(data, size);
  const std::string accept = in.ConsumeBool() ? in.ConsumeRandomLengthString(80) : "";
  const std::string target = Target(in);
  // Exactly the target's bytes on the heap: a read past them is an AddressSanitizer report.
  const std::unique_ptr<char[]> buffer(new char[target.size() + 1]);
  std::memcpy(buffer.get(), target.data(), target.size());
  const dvexport::http::ParsedRequest parsed = dvexport::http::ParseDataValueSetsRequest(
      std::string_view(buffer.get(), target.size()), accept, dhis2);
  Check(parsed.request.has_value() != parsed.refusal.has_value());
  if (parsed.refusal.has_value()) {
    Check(parsed.refusal->status >= 400 && parsed.refusal->status < 500);
    // The message format of a refusal is not returned; the body says which it is.
    const bool xml = !parsed.refusal->body.empty() && parsed.refusal->body[0] == '<';
    CheckResponse(*parsed.refusal, xml ? MessageFormat::kXml : MessageFormat::kJson);
  } else {
    CheckHeaders(parsed.request->headers);
    // Every refusal the pipeline could give this request is a safe response too, the message
    // holding whatever the request held (a DHIS2 E-code, or a message naming a parameter).
    const std::string message = in.ConsumeRandomLengthString(200);
    for (const absl::Status& status :
         {absl::InvalidArgumentError("E2001: " + message), absl::InvalidArgumentError(message),
          absl::PermissionDeniedError(message), absl::UnauthenticatedError(message),
          absl::ResourceExhaustedError(message), absl::InternalError(message)}) {
      CheckResponse(
          dvexport::http::RefusalResponse(status, parsed.request->message_format, in.ConsumeBool()),
          parsed.request->message_format);
    }
  }
  return 0;
}
