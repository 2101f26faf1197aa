#ifndef DVEXPORT_TESTS_SUPPORT_API_TOKEN_ROWS_H_
#define DVEXPORT_TESTS_SUPPORT_API_TOKEN_ROWS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "service/dhis2/api_token.h"

namespace dvexport::test_support {

// A personal access token's row in DHIS2 2.42's api_token table, as a test makes one.
struct ApiTokenRow {
  int64_t id = 0;     // apitokenid
  std::string uid;    // api_token.uid: 11 characters
  int64_t owner = 0;  // createdby and lastupdatedby: the owner's userinfoid
  dhis2::ApiTokenType type = dhis2::ApiTokenType::kV2;
  std::optional<int64_t> expire_ms;  // milliseconds since 1970; nullopt: NULL (no expiry)
  std::string attributes = "[]";     // jsonb text: the token's rules (IpAllowedList, ...)
};

// What api_token.type holds for "type": PERSONAL_ACCESS_TOKEN_V1 or PERSONAL_ACCESS_TOKEN_V2.
const char* ApiTokenTypeName(dhis2::ApiTokenType type);

// Milliseconds since 1970 of now + "from_now", for ApiTokenRow::expire_ms.
int64_t ExpireMsFromNow(std::chrono::milliseconds from_now);

// Generates a new token of row.type as DHIS2 does, inserts "row" with the token's key (its
// SHA-256) on a new connection to "admin_conninfo", and returns the token. A failure to
// generate or insert it is a test failure (gtest's EXPECT/ADD_FAILURE).
std::string AddApiToken(const std::string& admin_conninfo, const ApiTokenRow& row);

}  // namespace dvexport::test_support

#endif  // DVEXPORT_TESTS_SUPPORT_API_TOKEN_ROWS_H_
