#include "service/db/dhis2_schema.h"

#include <pqxx/result>
#include <string>

namespace dvexport::db {
namespace {

// One row: the tables and columns that tell the versions apart, in the connection's schema
// (search_path), as DHIS2 finds its own. pg_attribute, not information_schema: a column is seen
// whatever the reader's privileges on it.
constexpr const char* kEvidence =
    "WITH c(name, attribute) AS (VALUES ('period', 'iso'), ('userinfo', 'twofactortype'), "
    "  ('systemsetting', 'translations')) "
    "SELECT to_regclass('flyway_schema_history') IS NOT NULL "
    "  AND has_table_privilege(to_regclass('flyway_schema_history'), 'SELECT'), "
    "  to_regclass('categoryoption') IS NOT NULL, "
    "  to_regclass('dataelementcategoryoption') IS NOT NULL, "
    "  to_regclass('category') IS NOT NULL, "
    "  to_regclass('dataelementcategory') IS NOT NULL, "
    "  to_regclass('userrolerestrictions') IS NOT NULL, "
    "  to_regclass('datavalue') IS NOT NULL, "
    "  array(SELECT c.name || '.' || c.attribute FROM c JOIN pg_attribute a "
    "    ON a.attrelid = to_regclass(c.name) AND a.attname = c.attribute AND NOT a.attisdropped "
    "    ORDER BY 1)::text";

// The highest successful migration of DHIS2's numbering (2.<minor>.<n>); Flyway's baseline
// ("1"), repeatable migrations (no version) and failed ones do not count.
constexpr const char* kFlywayVersion =
    "SELECT version FROM flyway_schema_history "
    "WHERE success AND version ~ '^2\\.[0-9]{1,4}\\.[0-9]{1,4}$' "
    "ORDER BY string_to_array(version, '.')::int[] DESC LIMIT 1";

bool True(const pqxx::field& field) { return !field.is_null() && field.c_str()[0] == 't'; }

}  // namespace

Dhis2Schema ReadDhis2Schema(pqxx::transaction_base& tx, const dhis2::VersionPolicy& policy) {
  const pqxx::row row = tx.exec1(kEvidence);
  dhis2::SchemaEvidence evidence;
  evidence.flyway_readable = True(row[0]);
  evidence.category_option_table = True(row[1]);
  evidence.old_category_option_table = True(row[2]);
  const bool category_table = True(row[3]);
  const bool old_category_table = True(row[4]);
  evidence.user_role_restrictions = True(row[5]);
  evidence.data_value_table = True(row[6]);
  const std::string columns = row[7].is_null() ? "" : row[7].c_str();
  evidence.period_iso = columns.find("period.iso") != std::string::npos;
  evidence.setting_translations = columns.find("systemsetting.translations") != std::string::npos;
  if (evidence.flyway_readable) {
    const pqxx::result version = tx.exec(kFlywayVersion);
    if (!version.empty() && !version[0][0].is_null()) {
      evidence.flyway_version = version[0][0].c_str();
    }
  }

  Dhis2Schema schema;
  schema.version = dhis2::DecideVersion(evidence, policy);
  schema.period_iso = evidence.period_iso;
  if (!evidence.category_option_table && evidence.old_category_option_table) {
    schema.category_option_table = "dataelementcategoryoption";
  }
  if (!category_table && old_category_table) schema.category_table = "dataelementcategory";
  schema.user_two_factor_type = columns.find("userinfo.twofactortype") != std::string::npos;
  return schema;
}

}  // namespace dvexport::db
