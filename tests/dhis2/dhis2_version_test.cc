// DecideVersion and ParseServedVersion: which DHIS2 a database is, from its history, its tables
// or the operator's flags, and whether it is served.
#include "service/dhis2/dhis2_version.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace dvexport::dhis2 {
namespace {

// A database of DHIS2 2.<minor> with the history "version" and the tables that version has.
SchemaEvidence Flyway(const std::string& version, int minor) {
  SchemaEvidence evidence;
  evidence.flyway_readable = true;
  evidence.flyway_version = version;
  evidence.data_value_table = true;
  evidence.category_option_table = minor >= 41;
  evidence.old_category_option_table = minor < 41;
  evidence.user_role_restrictions = minor >= 40;
  evidence.setting_translations = minor < 42;
  evidence.period_iso = minor >= 43;
  return evidence;
}

TEST(Dhis2VersionTest, HistoryDecidesWithinTheServedRange) {
  for (int minor = kOldestServed; minor <= kNewestServed; ++minor) {
    const Dhis2Version version = DecideVersion(Flyway(absl::StrCat("2.", minor, ".7"), minor), {});
    EXPECT_EQ(version.found, minor);
    EXPECT_EQ(version.served, minor);
    EXPECT_EQ(version.source, VersionSource::kFlyway);
    EXPECT_TRUE(version.support.ok());
    EXPECT_EQ(version.evidence, absl::StrCat("flyway_schema_history 2.", minor, ".7"));
  }
}

TEST(Dhis2VersionTest, WithoutAHistoryTheTablesTell) {
  SchemaEvidence evidence;
  evidence.data_value_table = true;
  evidence.old_category_option_table = true;
  EXPECT_EQ(DecideVersion(evidence, {}).found, 39);
  evidence.user_role_restrictions = true;
  EXPECT_EQ(DecideVersion(evidence, {}).found, 40);
  evidence.old_category_option_table = false;
  evidence.category_option_table = true;
  evidence.setting_translations = true;
  EXPECT_EQ(DecideVersion(evidence, {}).found, 41);
  evidence.setting_translations = false;
  EXPECT_EQ(DecideVersion(evidence, {}).found, 42);
  evidence.period_iso = true;
  const Dhis2Version version = DecideVersion(evidence, {});
  EXPECT_EQ(version.found, 43);
  EXPECT_EQ(version.source, VersionSource::kSchema);
  EXPECT_EQ(version.evidence, "the schema (period.iso; no readable flyway_schema_history)");
}

TEST(Dhis2VersionTest, TablesNewerThanTheHistoryWin) {
  SchemaEvidence evidence = Flyway("2.42.52", 42);
  evidence.period_iso = true;
  const Dhis2Version version = DecideVersion(evidence, {});
  EXPECT_EQ(version.served, 43);
  EXPECT_EQ(
      version.warning,
      "flyway_schema_history stops at 2.42.52 but the schema is at least 2.43's (period.iso): "
      "read as 2.43");
}

TEST(Dhis2VersionTest, AMissingColumnNeverOverridesTheHistory) {
  // A 2.41 whose systemsetting lost its translations column is still 2.41.
  SchemaEvidence evidence = Flyway("2.41.59", 41);
  evidence.setting_translations = false;
  const Dhis2Version version = DecideVersion(evidence, {});
  EXPECT_EQ(version.served, 41);
  EXPECT_TRUE(version.warning.empty()) << version.warning;
}

TEST(Dhis2VersionTest, OlderAndNewerAreRefusedUnlessTheOperatorSays) {
  const Dhis2Version old = DecideVersion(Flyway("2.39.31", 39), {});
  EXPECT_EQ(old.served, 0);
  EXPECT_EQ(old.support.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(old.support.message(),
            "the database is DHIS2 2.39 (flyway_schema_history 2.39.31); dvexport serves DHIS2 "
            "2.40 to 2.43");
  // serve_newer is for newer versions only.
  EXPECT_FALSE(DecideVersion(Flyway("2.39.31", 39), {.forced = std::nullopt, .serve_newer = true})
                   .support.ok());

  const Dhis2Version newer = DecideVersion(Flyway("2.44.3", 44), {});
  EXPECT_EQ(newer.support.code(), absl::StatusCode::kFailedPrecondition);
  const Dhis2Version allowed =
      DecideVersion(Flyway("2.44.3", 44), {.forced = std::nullopt, .serve_newer = true});
  EXPECT_TRUE(allowed.support.ok());
  EXPECT_EQ(allowed.served, 43);
  EXPECT_FALSE(allowed.warning.empty());

  const Dhis2Version forced =
      DecideVersion(Flyway("2.39.31", 39), {.forced = 40, .serve_newer = false});
  EXPECT_TRUE(forced.support.ok());
  EXPECT_EQ(forced.served, 40);
  EXPECT_EQ(forced.source, VersionSource::kFlag);
  EXPECT_EQ(forced.evidence, "--dhis2_version 2.40");
}

TEST(Dhis2VersionTest, NoDhis2AtAllIsRefusedWithWhatWasSeen) {
  SchemaEvidence evidence;
  const Dhis2Version version = DecideVersion(evidence, {});
  EXPECT_EQ(version.found, 0);
  EXPECT_EQ(version.support.message(),
            "the database shows no DHIS2 version dvexport can read (the schema (no datavalue "
            "table; no readable flyway_schema_history)); dvexport serves DHIS2 2.40 to 2.43; "
            "--dhis2_version names the version of a database whose history cannot be read");
}

TEST(Dhis2VersionTest, HistoryVersionsThatAreNotDhis2sAreIgnored) {
  // A history whose highest row is not 2.<minor>.<n> (db/dhis2_schema filters those in SQL; a
  // value that slips through still decides nothing).
  SchemaEvidence evidence = Flyway("2.x.1", 42);
  const Dhis2Version version = DecideVersion(evidence, {});
  EXPECT_EQ(version.source, VersionSource::kSchema);
  EXPECT_EQ(version.found, 42);
}

TEST(Dhis2VersionTest, FlagValues) {
  EXPECT_EQ(*ParseServedVersion("2.40"), 40);
  EXPECT_EQ(*ParseServedVersion("2.43"), 43);
  EXPECT_EQ(*ParseServedVersion("2.43.1"), 43);
  for (const char* bad : {"2.39", "2.44", "43", "2.4", "2.43.1.2", "", "2.43x", "3.43", "2..43"}) {
    const absl::StatusOr<int> parsed = ParseServedVersion(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseServedVersion("2.39").status().message(),
            "--dhis2_version: \"2.39\" is not a DHIS2 version dvexport serves: 2.40, 2.41, "
            "2.42 or 2.43");
}

}  // namespace
}  // namespace dvexport::dhis2
