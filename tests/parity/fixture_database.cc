#include "tests/parity/fixture_database.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace dvexport::testing {
namespace {

std::string ReadSourceFile(const std::string& path) {
  std::ifstream in(absl::StrCat(DVEXPORT_SOURCE_DIR, "/", path));
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Drops the replication slots of database "name" (ours: dvexport_parity_...), which a change
// stream left, so that the database can be dropped.
std::string DropSlotsSql(const std::string& name) {
  return absl::StrCat(
      "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = '",
      name, "'");
}

// Runs "sql" (any number of statements) on a new connection; false and a
// test failure on error.
bool Execute(const std::string& conninfo, const std::string& sql) {
  try {
    pqxx::connection conn(conninfo);
    // DROP DATABASE IF EXISTS notices are expected; keep them out of the log.
    pqxx::quiet_errorhandler quiet(conn);
    pqxx::nontransaction tx(conn);
    tx.exec(sql);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "SQL failed: " << e.what();
    return false;
  }
  return true;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    ADD_FAILURE() << name << " is not set: run the tests through scripts/test";
    return "";
  }
  return value;
}

}  // namespace

FixtureDatabase::FixtureDatabase(const std::string& suffix, const std::string& extra_sql)
    : name_(absl::StrCat("dvexport_parity_", getpid(), suffix)) {
  const std::string admin = Env("DVEXPORT_TEST_PG_ADMIN");
  const std::string reader = Env("DVEXPORT_TEST_PG");
  if (admin.empty() || reader.empty()) return;
  // A keyword given twice in a conninfo takes its last value.
  const std::string admin_here = absl::StrCat(admin, " dbname=", name_);
  if (!Execute(admin, DropSlotsSql(name_)) ||
      !Execute(admin, absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)")) ||
      !Execute(admin, absl::StrCat("CREATE DATABASE ", name_)) ||
      !Execute(admin_here, ReadSourceFile("deploy/demo/schema.sql")) ||
      !Execute(admin_here, ReadSourceFile("tests/parity/fixture.sql")) ||
      (!extra_sql.empty() && !Execute(admin_here, extra_sql)) ||
      !Execute(admin_here,
               "GRANT USAGE ON SCHEMA public TO dvexport_reader; "
               "GRANT SELECT ON ALL TABLES IN SCHEMA public TO dvexport_reader")) {
    return;
  }
  reader_conninfo_ = absl::StrCat(reader, " dbname=", name_);
  admin_conninfo_ = admin_here;
}

FixtureDatabase::~FixtureDatabase() {
  const char* admin = std::getenv("DVEXPORT_TEST_PG_ADMIN");
  if (admin == nullptr) return;
  // A database with logical replication slots (change streams) cannot be dropped.
  Execute(admin, DropSlotsSql(name_));
  Execute(admin, absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)"));
}

}  // namespace dvexport::testing
