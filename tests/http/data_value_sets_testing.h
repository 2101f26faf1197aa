#ifndef DVEXPORT_TESTS_HTTP_DATA_VALUE_SETS_TESTING_H_
#define DVEXPORT_TESTS_HTTP_DATA_VALUE_SETS_TESTING_H_

// What the tests of the DHIS2 route (its binding, content negotiation, WebMessages) share.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "service/http/data_value_sets_request.h"
#include "service/http/web_message.h"

namespace dvexport::http::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

inline constexpr char kBrowserAccept[] =
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
inline constexpr char kJsonType[] = "application/json;charset=UTF-8";
inline constexpr char kXmlType[] = "application/xml;charset=UTF-8";

// The request "target" parses into on a DHIS2 2.<dhis2> database; fails the test when refused.
inline DataValueSetsRequest Accepted(std::string_view target, std::string_view accept = "",
                                     int dhis2 = 42) {
  ParsedRequest parsed = ParseDataValueSetsRequest(target, accept, dhis2);
  EXPECT_TRUE(parsed.request.has_value())
      << target << " refused: " << (parsed.refusal ? parsed.refusal->body : "");
  EXPECT_FALSE(parsed.refusal.has_value());
  return parsed.request.value_or(DataValueSetsRequest());
}

// The refusal of "target" on a DHIS2 2.<dhis2> database; fails the test when accepted.
inline HttpResponse Refused(std::string_view target, std::string_view accept = "", int dhis2 = 42) {
  ParsedRequest parsed = ParseDataValueSetsRequest(target, accept, dhis2);
  EXPECT_TRUE(parsed.refusal.has_value()) << target << " accepted";
  EXPECT_FALSE(parsed.request.has_value());
  HttpResponse none;
  none.status = 0;
  return parsed.refusal.value_or(none);
}

// The value of header "name", or "<absent>".
inline std::string Header(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return "<absent>";
}

inline dvexport::v1::Format FormatOf(std::string_view target, std::string_view accept = "",
                                     int dhis2 = 42) {
  return Accepted(target, accept, dhis2).export_request.format();
}

}  // namespace dvexport::http::testing

#endif  // DVEXPORT_TESTS_HTTP_DATA_VALUE_SETS_TESTING_H_
