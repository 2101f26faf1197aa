#include "tests/support/api_token_rows.h"

#include <gtest/gtest.h>

#include <exception>
#include <pqxx/connection>
#include <pqxx/nontransaction>

#include "absl/status/statusor.h"

namespace dvexport::test_support {

const char* ApiTokenTypeName(dhis2::ApiTokenType type) {
  return type == dhis2::ApiTokenType::kV1 ? "PERSONAL_ACCESS_TOKEN_V1" : "PERSONAL_ACCESS_TOKEN_V2";
}

int64_t ExpireMsFromNow(std::chrono::milliseconds from_now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             (std::chrono::system_clock::now() + from_now).time_since_epoch())
      .count();
}

std::string AddApiToken(const std::string& admin_conninfo, const ApiTokenRow& row) {
  absl::StatusOr<std::string> token =
      dhis2::GenerateApiToken(dhis2::RandomApiTokenCode(row.type), row.type);
  EXPECT_TRUE(token.ok()) << token.status();
  try {
    pqxx::connection conn(admin_conninfo);
    pqxx::nontransaction tx(conn);
    tx.exec_params(
        "INSERT INTO api_token (apitokenid, uid, created, lastupdated, lastupdatedby, createdby, "
        "version, type, expire, key, attributes) "
        "VALUES ($1, $2, now(), now(), $3, $3, 1, $4, $5, $6, $7::jsonb)",
        row.id, row.uid, row.owner, ApiTokenTypeName(row.type), row.expire_ms,
        dhis2::ApiTokenKey(*token), row.attributes);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "inserting api_token " << row.uid << " failed: " << e.what();
  }
  return *token;
}

}  // namespace dvexport::test_support
