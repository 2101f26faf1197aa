// DHIS2 2.42's Java sharing decisions (AccessStringHelper, DefaultAclService), case by case.

#include "service/dhis2/sharing.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace dvexport::dhis2 {
namespace {

Principal User(std::vector<std::string> groups = {}) {
  Principal p;
  p.user_id = 7;
  p.uid = "uUser000001";
  p.username = "user";
  p.group_uids = std::move(groups);
  return p;
}

Sharing Public(std::optional<std::string> access) {
  Sharing s;
  s.public_access = std::move(access);
  return s;
}

TEST(AccessEnabledTest, NullEnablesEverything) {
  for (Permission p :
       {Permission::kRead, Permission::kWrite, Permission::kDataRead, Permission::kDataWrite}) {
    EXPECT_TRUE(AccessEnabled(std::nullopt, p));
  }
}

TEST(AccessEnabledTest, EachPositionAndLetter) {
  EXPECT_TRUE(AccessEnabled("r-------", Permission::kRead));
  EXPECT_FALSE(AccessEnabled("r-------", Permission::kDataRead));
  EXPECT_TRUE(AccessEnabled("-w------", Permission::kWrite));
  EXPECT_TRUE(AccessEnabled("--r-----", Permission::kDataRead));
  EXPECT_FALSE(AccessEnabled("--r-----", Permission::kDataWrite));
  EXPECT_TRUE(AccessEnabled("---w----", Permission::kDataWrite));
  EXPECT_FALSE(AccessEnabled("---w----", Permission::kDataRead));
  EXPECT_TRUE(AccessEnabled("rwrw----", Permission::kDataRead));
}

// Strict: 8 characters ending in "----", [r-][w-][r-][w-]; anything else grants nothing (the SQL
// LIKE '__r_____' is looser).
TEST(AccessEnabledTest, MalformedStringsGrantNothing) {
  for (const char* access : {"", "rwrw", "rwrw-----", "rwrwx---", "__r_____", "--r----x",
                             "R-R-----", "w-r-----", "-rr-----", "--rr----"}) {
    EXPECT_FALSE(AccessEnabled(std::string(access), Permission::kDataRead)) << access;
    EXPECT_FALSE(AccessEnabled(std::string(access), Permission::kRead)) << access;
  }
}

TEST(SharingAllowsTest, PublicGroupOrUser) {
  const Principal user = User({"gGroup00001", "gGroup00002"});
  EXPECT_TRUE(SharingAllows(user, Public("--r-----"), Permission::kDataRead));
  EXPECT_TRUE(SharingAllows(user, Sharing(), Permission::kDataRead)) << "no public string";
  Sharing s = Public("--------");
  EXPECT_FALSE(SharingAllows(user, s, Permission::kDataRead));
  s.user_groups.push_back({"gGroup00002", "r-r-----"});
  EXPECT_TRUE(SharingAllows(user, s, Permission::kDataRead));
  s = Public("--------");
  s.users.push_back({"uUser000001", "--r-----"});
  EXPECT_TRUE(SharingAllows(user, s, Permission::kDataRead));
}

TEST(SharingAllowsTest, ForeignEntriesGrantNothing) {
  const Principal user = User({"gGroup00001"});
  Sharing s = Public("--------");
  s.user_groups.push_back({"gOther00001", "rwrw----"});
  s.users.push_back({"uOther00001", "rwrw----"});
  EXPECT_FALSE(SharingAllows(user, s, Permission::kDataRead));
}

// Java compares the entry's "id", not its key; an entry without "access" is enabled.
TEST(SharingAllowsTest, EntryIdAndNullAccess) {
  const Principal user = User({"gGroup00001"});
  Sharing s = Public("--------");
  s.users.push_back({std::nullopt, "rwrw----"});
  EXPECT_FALSE(SharingAllows(user, s, Permission::kDataRead)) << "no id: no match";
  s.users.push_back({"uUser000001", std::nullopt});
  EXPECT_TRUE(SharingAllows(user, s, Permission::kDataRead)) << "null access counts as enabled";
}

// Group entries only count for a user with groups.
TEST(SharingAllowsTest, NoGroupsNoGroupAccess) {
  Sharing s = Public("--------");
  s.user_groups.push_back({"gGroup00001", "rwrw----"});
  EXPECT_FALSE(SharingAllows(User(), s, Permission::kDataRead));
  EXPECT_TRUE(SharingAllows(User({"gGroup00001"}), s, Permission::kDataRead));
}

TEST(CanDataReadDataSetTest, WriteAloneGrantsReadAndOwnerGetsNothing) {
  const Principal user = User();
  EXPECT_TRUE(CanDataReadDataSet(user, Public("---w----")));
  EXPECT_TRUE(CanDataReadDataSet(user, Public("--r-----")));
  EXPECT_FALSE(CanDataReadDataSet(user, Public("rw------")));
  Sharing owned = Public("rw------");
  owned.owner = user.uid;
  EXPECT_FALSE(CanDataReadDataSet(user, owned)) << "the owner has no implicit data access";
  Principal super = user;
  super.superuser = true;
  EXPECT_TRUE(CanDataReadDataSet(super, Public("--------")));
}

TEST(CanDataReadOptionComboTest, TwoSeparateAlls) {
  const Principal user = User();
  EXPECT_TRUE(CanDataReadOptionCombo(user, false, {Public("--r-----"), Public("rwr-----")}));
  EXPECT_TRUE(CanDataReadOptionCombo(user, false, {Public("---w----"), Public("rw-w----")}));
  // One read-only option and one write-only option: neither "all" holds.
  EXPECT_FALSE(CanDataReadOptionCombo(user, false, {Public("--r-----"), Public("---w----")}));
  EXPECT_FALSE(CanDataReadOptionCombo(user, false, {Public("--r-----"), Public("--------")}));
}

TEST(CanDataReadOptionComboTest, DefaultEmptyAndSuperuserPass) {
  const Principal user = User();
  EXPECT_TRUE(CanDataReadOptionCombo(user, /*is_default=*/true, {Public("--------")}));
  EXPECT_TRUE(CanDataReadOptionCombo(user, false, {}));
  Principal super = user;
  super.superuser = true;
  EXPECT_TRUE(CanDataReadOptionCombo(super, false, {Public("--------")}));
}

TEST(InDataViewHierarchyTest, PathSubstring) {
  const std::string path = "/ouRoot00001/ouDistr0001/ouClinA0001";
  EXPECT_TRUE(InDataViewHierarchy(path, {"ouDistr0001"}));
  EXPECT_TRUE(InDataViewHierarchy(path, {"ouOther0001", "ouClinA0001"})) << "the unit itself";
  EXPECT_FALSE(InDataViewHierarchy(path, {"ouOther0001"}));
  EXPECT_FALSE(InDataViewHierarchy("/ouRoot00001", {"ouClinA0001"})) << "not upwards";
  EXPECT_FALSE(InDataViewHierarchy(path, {})) << "no units: nothing";
}

}  // namespace
}  // namespace dvexport::dhis2
