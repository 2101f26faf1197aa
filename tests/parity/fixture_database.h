#ifndef DVEXPORT_TESTS_PARITY_FIXTURE_DATABASE_H_
#define DVEXPORT_TESTS_PARITY_FIXTURE_DATABASE_H_

#include <string>

namespace dvexport::testing {

// A database created for one test run: dvexport_parity_<pid><suffix>,
// holding deploy/demo/schema.sql, tests/parity/fixture.sql and then
// "extra_sql", readable by the reader role of DVEXPORT_TEST_PG. Created with
// DVEXPORT_TEST_PG_ADMIN, dropped by the destructor.
class FixtureDatabase {
 public:
  FixtureDatabase(const std::string& suffix, const std::string& extra_sql);
  ~FixtureDatabase();
  FixtureDatabase(const FixtureDatabase&) = delete;
  FixtureDatabase& operator=(const FixtureDatabase&) = delete;

  // Empty if creating the database failed (the failure is reported).
  const std::string& reader_conninfo() const { return reader_conninfo_; }
  // DVEXPORT_TEST_PG_ADMIN in this database, for tests that write; empty as above.
  const std::string& admin_conninfo() const { return admin_conninfo_; }

 private:
  std::string name_;
  std::string reader_conninfo_;
  std::string admin_conninfo_;
};

}  // namespace dvexport::testing

#endif  // DVEXPORT_TESTS_PARITY_FIXTURE_DATABASE_H_
