#ifndef DVEXPORT_SERVICE_DB_ACCESS_RULES_H_
#define DVEXPORT_SERVICE_DB_ACCESS_RULES_H_

// DHIS2 2.42's read rules for one caller, on the database side: the SQL of its two sharing
// predicates (metadata read in identifier lookups, data read of category options in the data
// query), written with jsonb operators and bind parameters (DHIS2 inlines the UIDs and calls its
// own jsonb_* functions, which a dvexport database need not have), and the reads that the Java
// decisions of service/dhis2/sharing need (E2010, E2011, E2012).

#include <cstdint>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "service/dhis2/principal.h"

namespace dvexport::db {

struct ExportScope;

// The metadata-read sharing predicate of DHIS2's lookups (InternalHibernateGenericStoreImpl
// getSharingPredicates with "r%") on "<alias>.sharing": public like 'r%', the text 'null' or
// absent; owner absent, the text 'null' or the user; the user's entry (by key) like 'r%'; an entry
// (by key) of one of the user's groups like 'r%'. $<user_param>: the user's UID;
// $<groups_param>: its group UIDs as a text[] literal (PgTextArray). Only for non-superusers.
std::string MetadataReadableSql(const char* alias, int user_param, int groups_param);

// The data-read predicate on "co.sharing" of DHIS2's category option filter (JpaQueryUtils
// generateSQlQueryForSharingCheck with "__r_____"): owner absent or the user; public like
// '__r_____' or absent; the user's entry (by key) like '__r_____'; an entry (by key) of one of
// the user's groups like '__r_____'. Same parameters as MetadataReadableSql.
std::string CategoryOptionDataReadableSql(int user_param, int groups_param);

// The same data-read predicate on "<alias>.sharing" ("alias" is a constant of the caller's).
std::string DataReadableSql(const char* alias, int user_param, int groups_param);

// "values" as a PostgreSQL text[] literal, each element quoted.
std::string PgTextArray(const std::vector<std::string>& values);

// The attribute option combos a non-superuser's export leaves out (SpringDataValueSetStore
// getAttributeOptionComboClause): those with at least one category option that
// CategoryOptionDataReadableSql rejects, the options read from "category_option_table" (the
// database's DHIS2's: ExportScope). Sorted. Database errors are libpqxx's exceptions.
std::vector<int64_t> UnreadableAttributeOptionCombos(pqxx::transaction_base& tx,
                                                     const char* category_option_table,
                                                     const dhis2::Principal& reader);

// DefaultDataValueSetService.decideAccess on the resolved "scope": E2010 for the first requested
// data set (request order) that the principal can neither data-read nor data-write, then E2011
// for the first requested attribute option combo it cannot data-read, then E2012 for the first
// requested org unit outside its data view units (else its data capture units), superusers
// included, as PERMISSION_DENIED with DHIS2's message and the object's UID. Database errors are
// libpqxx's exceptions.
absl::Status DecideDataReadAccess(pqxx::transaction_base& tx, const ExportScope& scope,
                                  const dhis2::Principal& reader);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_ACCESS_RULES_H_
