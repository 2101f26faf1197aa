#include "tests/integration/test_database.h"

#include <gtest/gtest.h>

#include <cstdlib>

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
  PGconn* conn = PQconnectdb(TestConninfo().c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << "cannot connect to the test database: " << PQerrorMessage(conn);
    PQfinish(conn);
    return rows;
  }
  PQsetClientEncoding(conn, "UTF8");
  PGresult* result = PQexec(conn, sql.c_str());
  if (PQresultStatus(result) != PGRES_TUPLES_OK) {
    ADD_FAILURE() << "query failed: " << PQresultErrorMessage(result) << "\n" << sql;
  } else {
    for (int r = 0; r < PQntuples(result); ++r) {
      SqlRow row;
      for (int c = 0; c < PQnfields(result); ++c) {
        if (PQgetisnull(result, r, c)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(PQgetvalue(result, r, c), PQgetlength(result, r, c)));
        }
      }
      rows.push_back(std::move(row));
    }
  }
  PQclear(result);
  PQfinish(conn);
  return rows;
}

std::vector<std::string> QueryColumn(const std::string& sql) {
  std::vector<std::string> column;
  for (const SqlRow& row : QueryAll(sql)) column.push_back(row.at(0).value_or(""));
  return column;
}

}  // namespace dvexport::testing
