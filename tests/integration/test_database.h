#ifndef DVEXPORT_TESTS_INTEGRATION_TEST_DATABASE_H_
#define DVEXPORT_TESTS_INTEGRATION_TEST_DATABASE_H_

#include <optional>
#include <string>
#include <vector>

namespace dvexport::testing {

// The conninfo of the test database (DVEXPORT_TEST_PG, set by scripts/test);
// fails the calling test when it is missing.
std::string TestConninfo();

// A row of text columns; nullopt is SQL NULL.
using SqlRow = std::vector<std::optional<std::string>>;

// Runs "sql" on a fresh connection to the test database and returns every
// row as text. Fails the calling test on error.
std::vector<SqlRow> QueryAll(const std::string& sql);

// The first column of every row.
std::vector<std::string> QueryColumn(const std::string& sql);

}  // namespace dvexport::testing

#endif  // DVEXPORT_TESTS_INTEGRATION_TEST_DATABASE_H_
