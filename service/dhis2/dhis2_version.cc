#include "service/dhis2/dhis2_version.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dvexport::dhis2 {
namespace {

// A whole non-negative number of at most 4 digits; nullopt otherwise.
std::optional<int> SmallNumber(absl::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The minor version of "2.<minor>" or "2.<minor>.<n>"; nullopt for anything else.
std::optional<int> MinorOf(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (parts.size() < 2 || parts.size() > 3 || parts[0] != "2") return std::nullopt;
  for (absl::string_view part : parts) {
    if (!SmallNumber(part).has_value()) return std::nullopt;
  }
  return SmallNumber(parts[1]);
}

std::string ServedRange() {
  return absl::StrCat("dvexport serves DHIS2 ", VersionName(kOldestServed), " to ",
                      VersionName(kNewestServed));
}

// The version the tables and columns show, and which of them told; 0 if none.
int VersionFromSchema(const SchemaEvidence& evidence, std::string* clue) {
  if (evidence.period_iso) {
    *clue = "period.iso";
    return 43;
  }
  if (evidence.category_option_table) {
    *clue = evidence.setting_translations ? "categoryoption, systemsetting.translations"
                                          : "categoryoption, no systemsetting.translations";
    return evidence.setting_translations ? 41 : 42;
  }
  if (evidence.old_category_option_table) {
    *clue = evidence.user_role_restrictions ? "dataelementcategoryoption, userrolerestrictions"
                                            : "dataelementcategoryoption, no userrolerestrictions";
    return evidence.user_role_restrictions ? 40 : 39;
  }
  *clue = evidence.data_value_table ? "datavalue, no category option table" : "no datavalue table";
  return 0;
}

// The oldest version the tables prove, for a history that may lag them: only what a migration
// made for good (period.iso in 2.43, the category renames of 2.41), never a column's absence.
int SchemaFloor(const SchemaEvidence& evidence) {
  if (evidence.period_iso) return 43;
  if (evidence.category_option_table) return 41;
  return 0;
}

}  // namespace

absl::StatusOr<int> ParseServedVersion(absl::string_view text) {
  const std::optional<int> minor = MinorOf(text);
  if (!minor.has_value() || *minor < kOldestServed || *minor > kNewestServed) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dhis2_version: \"", text,
                     "\" is not a DHIS2 version dvexport serves: 2.40, 2.41, 2.42 or 2.43"));
  }
  return *minor;
}

std::string VersionName(int minor) { return absl::StrCat("2.", minor); }

const char* VersionSourceName(VersionSource source) {
  switch (source) {
    case VersionSource::kFlyway:
      return "flyway";
    case VersionSource::kSchema:
      return "schema";
    case VersionSource::kFlag:
      return "flag";
  }
  return "schema";
}

Dhis2Version DecideVersion(const SchemaEvidence& evidence, const VersionPolicy& policy) {
  Dhis2Version version;
  std::string clue;
  const int from_schema = VersionFromSchema(evidence, &clue);
  const std::optional<int> from_flyway =
      evidence.flyway_version.empty() ? std::nullopt : MinorOf(evidence.flyway_version);
  if (from_flyway.has_value()) {
    version.found = *from_flyway;
    version.source = VersionSource::kFlyway;
    version.evidence = absl::StrCat("flyway_schema_history ", evidence.flyway_version);
    const int floor = SchemaFloor(evidence);
    if (floor > *from_flyway) {
      // Tables of a later version than the history records: the schema is what is read.
      version.found = floor;
      version.source = VersionSource::kSchema;
      version.warning = absl::StrCat("flyway_schema_history stops at ", evidence.flyway_version,
                                     " but the schema is at least ", VersionName(floor), "'s (",
                                     clue, "): read as ", VersionName(floor));
      version.evidence = absl::StrCat("the schema (", clue, ")");
    }
  } else {
    version.found = from_schema;
    version.source = VersionSource::kSchema;
    version.evidence =
        absl::StrCat("the schema (", clue,
                     evidence.flyway_readable ? "" : "; no readable flyway_schema_history", ")");
  }

  if (policy.forced.has_value()) {
    version.served = *policy.forced;
    version.source = VersionSource::kFlag;
    if (version.found != 0 && version.found != *policy.forced) {
      version.warning = absl::StrCat("the database shows DHIS2 ", VersionName(version.found), " (",
                                     version.evidence, "); served as ", VersionName(*policy.forced),
                                     " as --dhis2_version says");
    }
    version.evidence = absl::StrCat("--dhis2_version ", VersionName(*policy.forced));
    version.support = absl::OkStatus();
    return version;
  }
  if (version.found >= kOldestServed && version.found <= kNewestServed) {
    version.served = version.found;
    return version;
  }
  if (version.found > kNewestServed && policy.serve_newer) {
    version.served = kNewestServed;
    version.warning = absl::StrCat("DHIS2 ", VersionName(version.found), " (", version.evidence,
                                   ") is newer than dvexport knows; served as ",
                                   VersionName(kNewestServed), " (--serve_newer_dhis2)");
    return version;
  }
  version.served = 0;
  if (version.found > kNewestServed) {
    version.support = absl::FailedPreconditionError(absl::StrCat(
        "the database is DHIS2 ", VersionName(version.found), " (", version.evidence,
        "), newer than dvexport knows; ", ServedRange(), ". --serve_newer_dhis2 serves it as ",
        VersionName(kNewestServed), " at the operator's risk"));
  } else if (version.found > 0) {
    version.support = absl::FailedPreconditionError(
        absl::StrCat("the database is DHIS2 ", VersionName(version.found), " (", version.evidence,
                     "); ", ServedRange()));
  } else {
    version.support = absl::FailedPreconditionError(
        absl::StrCat("the database shows no DHIS2 version dvexport can read (", version.evidence,
                     "); ", ServedRange(),
                     "; --dhis2_version names the version of a database whose history "
                     "cannot be read"));
  }
  return version;
}

}  // namespace dvexport::dhis2
