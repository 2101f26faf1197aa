#ifndef DVEXPORT_TESTS_DB_DB_TEST_SUPPORT_H_
#define DVEXPORT_TESTS_DB_DB_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <string>
#include <vector>

namespace dvexport::db {

// DVEXPORT_TEST_PG (read-only role) or DVEXPORT_TEST_PG_ADMIN (superuser), as
// scripts/test sets them; fails the calling test when missing.
inline std::string TestConninfo(bool admin = false) {
  const char* name = admin ? "DVEXPORT_TEST_PG_ADMIN" : "DVEXPORT_TEST_PG";
  const char* conninfo = std::getenv(name);
  if (conninfo == nullptr) {
    ADD_FAILURE() << name << " is not set: run the tests through scripts/test";
    return "";
  }
  return conninfo;
}

// The first column of the first row of "sql", run by the admin.
inline std::string AdminQuery(const std::string& sql) {
  pqxx::connection conn(TestConninfo(/*admin=*/true));
  pqxx::nontransaction tx(conn);
  const pqxx::result result = tx.exec(sql);
  return result.empty() || result.columns() == 0 ? "" : result[0][0].c_str();
}

// The first column of every row of "sql", run by the admin.
inline std::vector<std::string> AdminColumn(const std::string& sql) {
  pqxx::connection conn(TestConninfo(/*admin=*/true));
  pqxx::nontransaction tx(conn);
  std::vector<std::string> column;
  for (const pqxx::row& row : tx.exec(sql)) column.push_back(row[0].c_str());
  return column;
}

// Holds ACCESS EXCLUSIVE on datavalue from an admin connection while alive.
class DataValueLock {
 public:
  DataValueLock()
      : conn_(std::make_unique<pqxx::connection>(TestConninfo(/*admin=*/true))), tx_(*conn_) {
    tx_.exec("BEGIN; LOCK TABLE datavalue IN ACCESS EXCLUSIVE MODE");
  }
  ~DataValueLock() {
    try {
      tx_.exec("ROLLBACK");
    } catch (const std::exception&) {
      // Closing the connection ends the transaction anyway.
    }
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
  pqxx::nontransaction tx_;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_TESTS_DB_DB_TEST_SUPPORT_H_
