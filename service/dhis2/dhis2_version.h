#ifndef DVEXPORT_SERVICE_DHIS2_DHIS2_VERSION_H_
#define DVEXPORT_SERVICE_DHIS2_DHIS2_VERSION_H_

// Which DHIS2 a database belongs to, and whether dvexport serves it: decided from what the
// database shows (db/dhis2_schema reads it) and the operator's flags, without I/O.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::dhis2 {

// The DHIS2 versions dvexport serves: 2.40 to 2.43, each as that version answers.
inline constexpr int kOldestServed = 40;
inline constexpr int kNewestServed = 43;

// "2.40" to "2.43" (a third component, "2.43.1", is allowed and ignored): the minor version.
// Anything else is InvalidArgument naming the versions served.
absl::StatusOr<int> ParseServedVersion(absl::string_view text);

// "2.<minor>".
std::string VersionName(int minor);

// What a database shows of its DHIS2 (db/dhis2_schema.h reads it, in one snapshot).
struct SchemaEvidence {
  // flyway_schema_history exists and the reader may read it.
  bool flyway_readable = false;
  // Its highest successful migration of the form 2.<minor>.<n> ("2.43.64"); empty if none.
  std::string flyway_version;
  // Tables and columns that tell the versions apart where the history is missing or lags.
  bool period_iso = false;                 // period.iso: 2.43 (V2_43_9)
  bool category_option_table = false;      // categoryoption: 2.41 (V2_41_30)
  bool old_category_option_table = false;  // dataelementcategoryoption: before 2.41
  bool user_role_restrictions = false;     // userrolerestrictions: 2.40 (V2_40_8)
  bool setting_translations = false;       // systemsetting.translations: before 2.42 (V2_42_18)
  bool data_value_table = false;           // datavalue: a DHIS2 database at all
};

// What the operator says (server flags).
struct VersionPolicy {
  // --dhis2_version: serve this minor version whatever the database shows.
  std::optional<int> forced;
  // --serve_newer_dhis2: a DHIS2 newer than kNewestServed is served as kNewestServed, with a
  // warning; otherwise it is refused.
  bool serve_newer = false;
};

enum class VersionSource { kFlyway, kSchema, kFlag };
const char* VersionSourceName(VersionSource source);

// The decision for one database.
struct Dhis2Version {
  // The version found (from the history, else the schema), as a minor version; 0: none found
  // (no DHIS2 tables, or a schema older than any the probes know).
  int found = 0;
  // What it was found from, in words for the log: "flyway_schema_history 2.43.64", "the schema
  // (period.iso)", "--dhis2_version".
  std::string evidence;
  VersionSource source = VersionSource::kSchema;
  // The version whose behaviour is served; 0 when refused.
  int served = 0;
  // OK, or FailedPrecondition naming the version found and the versions served.
  absl::Status support;
  // Non-empty when served with a caution (a newer DHIS2 served as the newest known; a history
  // that lags the schema).
  std::string warning;
};

Dhis2Version DecideVersion(const SchemaEvidence& evidence, const VersionPolicy& policy);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_DHIS2_VERSION_H_
