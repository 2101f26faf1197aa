#ifndef DVEXPORT_SERVICE_DB_DHIS2_SCHEMA_H_
#define DVEXPORT_SERVICE_DB_DHIS2_SCHEMA_H_

#include <pqxx/transaction_base>

#include "service/dhis2/dhis2_version.h"

namespace dvexport::db {

// What one database connection knows of its DHIS2, read once when it is set up
// (DatabaseConnection::SetUp): the version served (or why none is) and the names of the tables
// and columns that differ between the versions served. Every query that reads such a table
// takes its name from here, so that none fails on any version's schema.
struct Dhis2Schema {
  dhis2::Dhis2Version version;
  // period.iso (2.43): the period's id as DHIS2 stored it.
  bool period_iso = false;
  // The category tables: category and categoryoption since 2.41 (V2_41_30),
  // dataelementcategory and dataelementcategoryoption before. Names of ours, never read from
  // the database.
  const char* category_table = "category";
  const char* category_option_table = "categoryoption";
  // userinfo.twofactortype exists (else 2FA is read as not enabled).
  bool user_two_factor_type = true;
};

// Reads the evidence of "tx"'s database (two statements, neither of which fails on any schema,
// DHIS2's or not: a missing or unreadable flyway_schema_history is evidence too) and decides
// with "policy". Throws what libpqxx throws when the database fails.
Dhis2Schema ReadDhis2Schema(pqxx::transaction_base& tx, const dhis2::VersionPolicy& policy);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_DHIS2_SCHEMA_H_
