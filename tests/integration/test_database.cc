#include "tests/integration/test_database.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>

namespace dvexport::testing {

std::string TestConninfo() {
  const char* conninfo = std::getenv("DVEXPORT_TEST_PG");
  if (conninfo == nullptr) {
    ADD_FAILURE() << "DVEXPORT_TEST_PG is not set: run the tests through scripts/test, which "
                     "starts PostgreSQL and loads the demo database";
    return "";
  }
  return conninfo;
}

std::vector<SqlRow> QueryAll(const std::string& sql) {
  std::vector<SqlRow> rows;
  try {
    pqxx::connection conn(TestConninfo());
    conn.set_client_encoding("UTF8");
    pqxx::nontransaction tx(conn);
    const pqxx::result result = tx.exec(sql);
    for (const pqxx::row& r : result) {
      SqlRow row;
      for (const pqxx::field& f : r) {
        if (f.is_null()) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(f.c_str(), f.size()));
        }
      }
      rows.push_back(std::move(row));
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "query failed: " << e.what() << "\n" << sql;
  }
  return rows;
}

std::vector<std::string> QueryColumn(const std::string& sql) {
  std::vector<std::string> column;
  for (const SqlRow& row : QueryAll(sql)) column.push_back(row.at(0).value_or(""));
  return column;
}

}  // namespace dvexport::testing
