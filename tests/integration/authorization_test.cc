// DHIS2 2.42's read rules (service/dhis2/sharing, service/db/access_rules) against PostgreSQL,
// through db::ReadSession, with users, groups, roles, org unit assignments and sharing written
// into DHIS2's tables in a database of its own (tests/parity's fixture plus kAuthSql, created and
// dropped through DVEXPORT_TEST_PG_ADMIN). Principals are built from those tables as
// authentication builds them (the reference queries of the user tables).
//
// The fixture's values (parity_test.cc) plus four of deEcho00005 (data set dsSharing03, attribute
// combo ccSharing02), all 202401 at ClinA:
//   11 aocOwned026 (option owned by the partner user, public r-------)
//   12 aocUserE027 (option with the partner user's own entry r-r-----)
//   13 aocNineC028 (option with public "rwrw-----", nine characters)
//   14 aocWrite029 (option with public r--w----, data write only)
// and the fixture's 5 aocAP1x0022 (Partner A + Project 1), 6 aocBP1x0023 (Partner B + Project
// 1), 7 aocAP2x0024 (Partner A + Project 2). Partner A is data-readable through group
// gPartnerA01 only, Partner B by nobody, Project 1 has no sharing at all, Project 2 has
// "public": null.
//
// The randomized test compares, over many generated sharing configurations, what a user's
// export keeps with what DHIS2's own SQL keeps: the clause SpringDataValueSetStore appends
// (JpaQueryUtils text, UIDs inlined) and the metadata-read predicate of its lookups, both calling
// DHIS2's real jsonb_* functions (tests/integration/dhis2_sharing_functions.sql, migration
// V2_36_9) loaded into the test database.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dvexport/v1/export.pb.h"
#include "service/db/connection_pool.h"
#include "service/db/read_session.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/principal.h"
#include "tests/parity/fixture_database.h"

namespace dvexport {
namespace {

using std::chrono::system_clock;

constexpr char kAuthSql[] = R"sql(
INSERT INTO category (categoryid, uid, code, created, lastupdated, name, shortname,
                      datadimensiontype, datadimension, attributevalues) VALUES
  (701, 'caPartner01', 'PARTNER', '2020-01-01', '2020-01-01', 'Partner', 'Partner',
   'ATTRIBUTE', false, '{}'),
  (702, 'caProject01', 'PROJECT', '2020-01-01', '2020-01-01', 'Project', 'Project',
   'ATTRIBUTE', false, '{}'),
  (703, 'caSharing03', 'SHARING', '2020-01-01', '2020-01-01', 'Sharing', 'Sharing',
   'ATTRIBUTE', false, '{}');
INSERT INTO categorycombo (categorycomboid, uid, code, created, lastupdated, name,
                           datadimensiontype, skiptotal) VALUES
  (3, 'ccSharing02', 'CC_SHARING', '2020-01-01', '2020-01-01', 'Sharing rows', 'ATTRIBUTE',
   false);
INSERT INTO categorycombos_categories (categorycomboid, sort_order, categoryid) VALUES
  (2, 1, 701), (2, 2, 702), (3, 1, 703);
INSERT INTO categoryoption (categoryoptionid, uid, code, created, lastupdated, name, shortname)
VALUES
  (16, 'coOwned0016', 'CO_OWNED', '2020-01-01', '2020-01-01', 'Owned', 'Owned'),
  (17, 'coUserE0017', 'CO_USER', '2020-01-01', '2020-01-01', 'User entry', 'User entry'),
  (18, 'coNineC0018', 'CO_NINE', '2020-01-01', '2020-01-01', 'Nine characters', 'Nine'),
  (19, 'coWrite0019', 'CO_WRITE', '2020-01-01', '2020-01-01', 'Write only', 'Write only');
INSERT INTO categories_categoryoptions (categoryid, sort_order, categoryoptionid) VALUES
  (701, 1, 12), (701, 2, 13), (702, 1, 14), (702, 2, 15),
  (703, 1, 16), (703, 2, 17), (703, 3, 18), (703, 4, 19);
INSERT INTO categoryoptioncombo (categoryoptioncomboid, uid, code, created, lastupdated, name,
                                 ignoreapproval, attributevalues) VALUES
  (26, 'aocOwned026', 'AOC_OWNED', '2020-01-01', '2020-01-01', 'Owned', false, '{}'),
  (27, 'aocUserE027', 'AOC_USER', '2020-01-01', '2020-01-01', 'User entry', false, '{}'),
  (28, 'aocNineC028', 'AOC_NINE', '2020-01-01', '2020-01-01', 'Nine characters', false, '{}'),
  (29, 'aocWrite029', 'AOC_WRITE', '2020-01-01', '2020-01-01', 'Write only', false, '{}'),
  (30, 'aocMixed030', 'AOC_MIXED', '2020-01-01', '2020-01-01', 'Read and write', false, '{}');
INSERT INTO categorycombos_optioncombos (categoryoptioncomboid, categorycomboid) VALUES
  (26, 3), (27, 3), (28, 3), (29, 3);
INSERT INTO categoryoptioncombos_categoryoptions (categoryoptioncomboid, categoryoptionid) VALUES
  (26, 16), (27, 17), (28, 18), (29, 19), (30, 17), (30, 19);
INSERT INTO dataelement (dataelementid, uid, code, created, lastupdated, name, shortname,
                         valuetype, domaintype, aggregationtype, categorycomboid,
                         zeroissignificant, attributevalues) VALUES
  (105, 'deEcho00005', 'DE_E', '2020-01-01', '2020-01-01', 'Echo', 'Echo', 'NUMBER',
   'AGGREGATE', 'SUM', 1, false, '{}');
INSERT INTO dataset (datasetid, uid, code, created, lastupdated, name, shortname, periodtypeid,
                     categorycomboid, mobile, attributevalues) VALUES
  (203, 'dsSharing03', 'DS_SHARING', '2020-01-01', '2020-01-01', 'Sharing set', 'Sharing set',
   8, 3, false, '{}');
INSERT INTO datasetelement (datasetelementid, datasetid, dataelementid) VALUES (4, 203, 105);
INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid,
                       attributeoptioncomboid, value, storedby, created, lastupdated, comment,
                       followup, deleted) VALUES
  (105, 601, 402, 21, 26, '11', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00', NULL,
   false, false),
  (105, 601, 402, 21, 27, '12', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00', NULL,
   false, false),
  (105, 601, 402, 21, 28, '13', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00', NULL,
   false, false),
  (105, 601, 402, 21, 29, '14', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00', NULL,
   false, false);

-- Deleted filler of deAlpha0001 that no export here includes (include_deleted is never set),
-- so that the table has enough blocks to be read in slices.
INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid,
                       attributeoptioncomboid, value, storedby, created, lastupdated, comment,
                       followup, deleted)
SELECT 101, p, o, c, a, '0', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00',
       repeat('x', 700), false, true
FROM generate_series(601, 603) p, generate_series(401, 404) o,
     ((SELECT 25, a FROM generate_series(22, 29) a) UNION ALL
      (SELECT 21, a FROM generate_series(25, 29) a)) ca(c, a);
ANALYZE datavalue;
-- A table this small is otherwise read through an index, which the slice plan leaves to one
-- COPY.
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I SET enable_indexscan = off', current_database());
  EXECUTE format('ALTER DATABASE %I SET enable_bitmapscan = off', current_database());
END $$;

-- Users: two superusers (role with ALL; admin has no org units), a district user (data view
-- ClinA, data capture Root: the capture units do not count beside data view units), a capture
-- user (no data view units: capture ClinB counts), a partner (group gPartnerA01), a programme
-- user (group gProgram001), and a user with nothing.
INSERT INTO userinfo (userinfoid, uid, lastupdated, username, surname, firstname) VALUES
  (1001, 'uAdmin00001', '2020-01-01', 'admin', 'Admin', 'A'),
  (1002, 'uSuper00002', '2020-01-01', 'super', 'Super', 'S'),
  (1003, 'uDistrict01', '2020-01-01', 'district', 'District', 'D'),
  (1004, 'uCapture001', '2020-01-01', 'capture', 'Capture', 'C'),
  (1005, 'uPartner001', '2020-01-01', 'partner', 'Partner', 'P'),
  (1006, 'uProgram001', '2020-01-01', 'programme', 'Programme', 'P'),
  (1007, 'uNobody0001', '2020-01-01', 'nobody', 'Nobody', 'N');
INSERT INTO usergroup (usergroupid, uid, created, lastupdated, name) VALUES
  (5001, 'gPartnerA01', '2020-01-01', '2020-01-01', 'Partner A'),
  (5002, 'gProgram001', '2020-01-01', '2020-01-01', 'Programme');
INSERT INTO usergroupmembers (userid, usergroupid) VALUES (1005, 5001), (1006, 5002);
INSERT INTO userrole (userroleid, uid, created, lastupdated, name) VALUES
  (6001, 'rSuperuser1', '2020-01-01', '2020-01-01', 'Superuser'),
  (6002, 'rDataEntry1', '2020-01-01', '2020-01-01', 'Data entry');
INSERT INTO userroleauthorities (userroleid, authority) VALUES
  (6001, 'ALL'), (6002, 'M_dhis-web-aggregate-data-entry'), (6002, 'all');
INSERT INTO userrolemembers (userroleid, userid) VALUES
  (6001, 1001), (6001, 1002), (6002, 1003), (6002, 1004), (6002, 1005), (6002, 1006),
  (6002, 1007);
INSERT INTO userdatavieworgunits (userinfoid, organisationunitid) VALUES
  (1002, 401), (1003, 402), (1005, 401), (1006, 401);
INSERT INTO usermembership (organisationunitid, userinfoid) VALUES (401, 1003), (403, 1004);

-- Sharing, in DHIS2's format.
UPDATE dataset SET sharing = '{"owner": "uAdmin00001", "public": "r-------", "userGroups":
  {"gProgram001": {"id": "gProgram001", "access": "r-r-----"}}}' WHERE datasetid = 201;
UPDATE dataset SET sharing = '{"owner": "uProgram001", "public": "--------"}'
  WHERE datasetid = 202;
UPDATE dataset SET sharing = '{"owner": "uAdmin00001", "public": "r--w----"}'
  WHERE datasetid = 203;
UPDATE dataelement SET sharing = '{"owner": "uAdmin00001", "public": "--------"}'
  WHERE dataelementid = 104;
UPDATE dataelementgroup SET sharing = '{"owner": "uAdmin00001", "public": "--------", "users":
  {"uDistrict01": {"id": "uDistrict01", "access": "r-------"}}}' WHERE dataelementgroupid = 301;
UPDATE orgunitgroup SET sharing = '{"owner": "uAdmin00001", "public": "--------"}'
  WHERE orgunitgroupid = 502;
UPDATE categorycombo SET sharing = '{"owner": "uAdmin00001", "public": "--------", "userGroups":
  {"gPartnerA01": {"id": "gPartnerA01", "access": "r-------"}}}' WHERE categorycomboid = 2;
UPDATE categoryoption SET sharing = '{"owner": "uAdmin00001", "public": "rwrw----"}'
  WHERE categoryoptionid = 11;
UPDATE categoryoption SET sharing = '{"owner": "uAdmin00001", "public": "rw------",
  "userGroups": {"gPartnerA01": {"id": "gPartnerA01", "access": "r-r-----"}}}'
  WHERE categoryoptionid = 12;
UPDATE categoryoption SET sharing = '{"owner": "uAdmin00001", "public": "rw------"}'
  WHERE categoryoptionid = 13;
UPDATE categoryoption SET sharing = '{}' WHERE categoryoptionid = 14;
UPDATE categoryoption SET sharing = '{"owner": "uAdmin00001", "public": null}'
  WHERE categoryoptionid = 15;
UPDATE categoryoption SET sharing = '{"owner": "uPartner001", "public": "r-------"}'
  WHERE categoryoptionid = 16;
UPDATE categoryoption SET sharing = '{"owner": "uAdmin00001", "public": "--------", "users":
  {"uPartner001": {"id": "uPartner001", "access": "r-r-----"}}}' WHERE categoryoptionid = 17;
UPDATE categoryoption SET sharing = '{"owner": "uAdmin00001", "public": "rwrw-----"}'
  WHERE categoryoptionid = 18;
UPDATE categoryoption SET sharing = '{"owner": "uAdmin00001", "public": "r--w----"}'
  WHERE categoryoptionid = 19;
)sql";

std::string ReadSourceFile(const std::string& path) {
  std::ifstream in(absl::StrCat(DVEXPORT_SOURCE_DIR, "/", path));
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first column of every row of "sql" on "conninfo".
std::vector<std::string> Column(const std::string& conninfo, const std::string& sql) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  std::vector<std::string> out;
  for (const pqxx::row& row : tx.exec(sql))
    out.emplace_back(row[0].is_null() ? "" : row[0].c_str());
  return out;
}

void Execute(const std::string& conninfo, const std::string& sql) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  tx.exec(sql);
}

// The principal of "username" as authentication builds it from DHIS2's tables.
dhis2::Principal PrincipalOf(const std::string& conninfo, const std::string& username) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  const pqxx::result user = tx.exec_params(
      "SELECT u.userinfoid, u.uid, EXISTS (SELECT 1 FROM userrolemembers m JOIN "
      "userroleauthorities a ON a.userroleid = m.userroleid WHERE m.userid = u.userinfoid AND "
      "a.authority = 'ALL') FROM userinfo u WHERE u.username = $1",
      username);
  dhis2::Principal principal;
  EXPECT_EQ(user.size(), 1u) << username;
  if (user.size() != 1) return principal;
  principal.user_id = user[0][0].as<int64_t>();
  principal.uid = user[0][1].c_str();
  principal.username = username;
  principal.superuser = user[0][2].as<bool>();
  for (const pqxx::row& row :
       tx.exec_params("SELECT g.uid FROM usergroupmembers m JOIN usergroup g ON g.usergroupid = "
                      "m.usergroupid WHERE m.userid = $1 ORDER BY g.uid",
                      principal.user_id)) {
    principal.group_uids.emplace_back(row[0].c_str());
  }
  return principal;
}

// How a test reads an export.
enum class Read { kOneCopy, kSlices, kCount, kAdx };

struct Outcome {
  absl::Status status;
  std::vector<std::string> values;  // sorted numerically; for kCount, empty
  int64_t count = -1;               // values read, or the count
  std::string change_token;
};

// Requests under the root with its children, all of 2024, for "data_elements".
v1::ExportRequest Everything(std::vector<std::string> data_elements = {
                                 "deAlpha0001", "deBravo0002", "deCharl0003", "deEcho00005"}) {
  v1::ExportRequest request;
  for (const std::string& uid : data_elements) request.add_data_element(uid);
  request.add_org_unit("ouRoot00001");
  request.set_children(true);
  request.set_start_date("2024-01-01");
  request.set_end_date("2024-12-31");
  return request;
}

void SortNumerically(std::vector<std::string>* values) {
  std::sort(values->begin(), values->end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
}

Outcome Export(db::ConnectionPool* pool, const v1::ExportRequest& request,
               const dhis2::Principal* principal, Read how = Read::kOneCopy) {
  Outcome outcome;
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(request);
  if (!params.ok()) {
    outcome.status = params.status();
    return outcome;
  }
  db::ReadSessionOptions options;
  if (how == Read::kSlices) {
    options.read_plan.max_streams = 3;
    options.read_plan.min_rows = 0;
    options.read_plan.slices_per_stream = 4;
    options.read_plan.min_slice_blocks = 1;
  }
  db::ReadSession session(pool, options, system_clock::now() + std::chrono::seconds(60));
  outcome.status = session.Begin(*params, principal);
  if (!outcome.status.ok()) return outcome;
  outcome.change_token = session.change_token();
  std::mutex mu;
  auto add = [&](std::string_view value) {
    std::lock_guard<std::mutex> lock(mu);
    outcome.values.emplace_back(value);
    return true;
  };
  switch (how) {
    case Read::kCount: {
      absl::StatusOr<int64_t> count = session.Count();
      outcome.status = count.status();
      outcome.count = count.value_or(-1);
      break;
    }
    case Read::kAdx: {
      outcome.status =
          session.PrepareAdx({dhis2::IdScheme::Uid(),
                              dhis2::IdScheme{dhis2::IdScheme::Property::kCode, ""}, std::nullopt});
      if (outcome.status.ok()) {
        outcome.status =
            session.ReadAdx([&](const db::AdxRow& row) { return add(row.value.value.bytes); });
      }
      break;
    }
    case Read::kOneCopy:
    case Read::kSlices: {
      absl::StatusOr<int> readers = session.PlanReads(/*keep_available=*/0);
      outcome.status = readers.status();
      if (!readers.ok()) break;
      if (how == Read::kSlices) {
        EXPECT_GT(*readers, 1) << "not read in slices";
      }
      std::vector<std::jthread> threads;
      std::vector<absl::Status> statuses(*readers);
      for (int i = 0; i < *readers; ++i) {
        threads.emplace_back([&, i] {
          statuses[i] = session.Read(
              i, [&](const encode::DataValueRow& row) { return add(row.value.bytes); });
        });
      }
      for (std::jthread& thread : threads) thread.join();
      for (const absl::Status& status : statuses) {
        if (outcome.status.ok()) outcome.status = status;
      }
      break;
    }
  }
  if (outcome.status.ok()) outcome.status = session.Finish();
  SortNumerically(&outcome.values);
  if (how != Read::kCount) outcome.count = static_cast<int64_t>(outcome.values.size());
  return outcome;
}

using Values = std::vector<std::string>;

class AuthorizationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new testing::FixtureDatabase("_authz", kAuthSql);
    if (fixture_->reader_conninfo().empty()) return;
    pool_ = new db::ConnectionPool(fixture_->reader_conninfo(), 4);
  }
  static void TearDownTestSuite() {
    delete pool_;
    delete fixture_;
  }
  void SetUp() override { ASSERT_NE(pool_, nullptr); }

  static dhis2::Principal User(const std::string& username) {
    return PrincipalOf(fixture_->admin_conninfo(), username);
  }
  static Outcome Run(const v1::ExportRequest& request, const std::string& username,
                     Read how = Read::kOneCopy) {
    const dhis2::Principal principal = User(username);
    return Export(pool_, request, &principal, how);
  }

  static testing::FixtureDatabase* fixture_;
  static db::ConnectionPool* pool_;
};

testing::FixtureDatabase* AuthorizationTest::fixture_ = nullptr;
db::ConnectionPool* AuthorizationTest::pool_ = nullptr;

void ExpectStatus(const Outcome& outcome, absl::StatusCode code, const std::string& message) {
  EXPECT_EQ(outcome.status.code(), code) << outcome.status;
  EXPECT_EQ(outcome.status.message(), message);
  EXPECT_TRUE(outcome.values.empty());
}

TEST_F(AuthorizationTest, PrincipalsComeFromTheUserTables) {
  const dhis2::Principal partner = User("partner");
  EXPECT_EQ(partner.user_id, 1005);
  EXPECT_EQ(partner.uid, "uPartner001");
  EXPECT_FALSE(partner.superuser) << "the authority \"all\" is not \"ALL\"";
  EXPECT_EQ(partner.group_uids, std::vector<std::string>{"gPartnerA01"});
  EXPECT_TRUE(User("admin").superuser);
}

// An identifier the user may not read as metadata is not found, with exactly the message of
// one that does not exist, whatever the input id scheme.
TEST_F(AuthorizationTest, UnreadableMetadataIsNotFoundLikeUnknown) {
  auto not_found = [](const std::string& field, const std::string& id,
                      const std::string& scheme = "") {
    return absl::StrCat(field, ": \"", id, "\" does not exist",
                        scheme.empty() ? "" : absl::StrCat(" (id scheme ", scheme, ")"));
  };
  v1::ExportRequest request = Everything({});
  request.add_data_set("dsOther0002");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kNotFound,
               not_found("data_set", "dsOther0002"));
  request.set_data_set(0, "dsUnknown99");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kNotFound,
               not_found("data_set", "dsUnknown99"));

  request = Everything({"deAlpha0001", "deDelta0004"});
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kNotFound,
               not_found("data_element", "deDelta0004"));
  request = Everything({"DE_A", "DE_D"});
  request.set_input_data_element_id_scheme("CODE");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kNotFound,
               not_found("data_element", "DE_D", "CODE"));
  request = Everything({});
  request.add_data_set("Other set");
  request.set_input_data_set_id_scheme("NAME");
  ExpectStatus(Run(request, "district"), absl::StatusCode::kNotFound,
               not_found("data_set", "Other set", "NAME"));

  // Readable only through the district user's own entry.
  request = Everything({});
  request.add_data_element_group("degGroup001");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kNotFound,
               not_found("data_element_group", "degGroup001"));
  request.clear_org_unit();
  request.add_org_unit("ouClinA0001");
  Outcome district = Run(request, "district");
  ASSERT_TRUE(district.status.ok()) << district.status;
  // The group's members are exported whatever their own sharing (deDelta0004's is closed).
  EXPECT_EQ(district.values, (Values{"9"}));
  // The same group by its attribute value (the attribute's UID is a bind parameter before the
  // user's).
  request.set_data_element_group(0, "EXT-DEG");
  request.set_input_data_element_group_id_scheme("ATTRIBUTE:AttrExtId01");
  district = Run(request, "district");
  ASSERT_TRUE(district.status.ok()) << district.status;
  EXPECT_EQ(district.values, (Values{"9"}));
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kNotFound,
               not_found("data_element_group", "EXT-DEG", "ATTRIBUTE:AttrExtId01"));

  request = Everything();
  request.clear_org_unit();
  request.set_children(false);
  request.add_org_unit_group("ougGroup002");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kNotFound,
               not_found("org_unit_group", "ougGroup002"));

  // attributeCombo and attributeOptions (DHIS2 E1110, E1111): looked up with the same rule,
  // with the messages of unknown identifiers.
  request = Everything({"deAlpha0001"});
  request.set_attribute_combo("ccFunding01");
  request.add_attribute_options("coPartnerA1");
  request.add_attribute_options("coProject01");
  ExpectStatus(Run(request, "programme"), absl::StatusCode::kNotFound,
               not_found("attribute_combo", "ccFunding01"));
  Outcome partner = Run(request, "partner");
  ASSERT_TRUE(partner.status.ok()) << partner.status;
  EXPECT_EQ(partner.values, (Values{"5"}));
  request = Everything({"deEcho00005"});
  request.set_attribute_combo("ccSharing02");
  request.add_attribute_options("coUserE0017");
  ExpectStatus(Run(request, "programme"), absl::StatusCode::kNotFound,
               not_found("attribute_options", "coUserE0017"));
  partner = Run(request, "partner");
  ASSERT_TRUE(partner.status.ok()) << partner.status;
  EXPECT_EQ(partner.values, (Values{"12"}));

  // Superusers and --auth none (no principal) find everything.
  request = Everything({"deAlpha0001", "deDelta0004"});
  EXPECT_TRUE(Run(request, "super").status.ok());
  EXPECT_TRUE(Export(pool_, request, nullptr).status.ok());
}

TEST_F(AuthorizationTest, DataSetNeedsDataReadOrDataWrite) {
  v1::ExportRequest request = Everything({});
  request.add_data_set("dsMonthly01");
  // Metadata-readable by everyone (public r-------), data-readable by the programme group only.
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kPermissionDenied,
               "E2010: User is not allowed to read data for data set: `dsMonthly01`");
  Outcome programme = Run(request, "programme");
  ASSERT_TRUE(programme.status.ok()) << programme.status;
  // Values 5-7 have attribute option combos with Partner options: left out.
  EXPECT_EQ(programme.values, (Values{"1", "2", "10"}));

  // Data write alone (public r--w----) grants the read.
  request.set_data_set(0, "dsSharing03");
  EXPECT_TRUE(Run(request, "partner").status.ok());

  // The owner (the programme user owns dsOther0002, public --------) may read its metadata, so
  // it is found, but has no data access in DHIS2's Java check.
  request.set_data_set(0, "dsOther0002");
  ExpectStatus(Run(request, "programme"), absl::StatusCode::kPermissionDenied,
               "E2010: User is not allowed to read data for data set: `dsOther0002`");

  // Several: the first in request order.
  request = Everything({});
  request.add_data_set("dsSharing03");
  request.add_data_set("dsMonthly01");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kPermissionDenied,
               "E2010: User is not allowed to read data for data set: `dsMonthly01`");
  EXPECT_TRUE(Run(request, "super").status.ok());
}

TEST_F(AuthorizationTest, AttributeOptionCombosAsDhis2sJavaChecksThem) {
  auto e2011 = [](const std::string& uid) {
    return absl::StrCat("E2011: User is not allowed to read data for attribute option combo: `",
                        uid, "`");
  };
  v1::ExportRequest request = Everything();
  request.add_attribute_option_combo("aocAP1x0022");
  Outcome partner = Run(request, "partner");
  ASSERT_TRUE(partner.status.ok()) << partner.status;
  EXPECT_EQ(partner.values, (Values{"5"}));
  ExpectStatus(Run(request, "programme"), absl::StatusCode::kPermissionDenied,
               e2011("aocAP1x0022"));

  // Several failing: the first in request order.
  request.add_attribute_option_combo("aocBP1x0023");
  ExpectStatus(Run(request, "programme"), absl::StatusCode::kPermissionDenied,
               e2011("aocAP1x0022"));
  request.clear_attribute_option_combo();
  request.add_attribute_option_combo("aocBP1x0023");
  request.add_attribute_option_combo("aocAP1x0022");
  ExpectStatus(Run(request, "programme"), absl::StatusCode::kPermissionDenied,
               e2011("aocBP1x0023"));
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kPermissionDenied, e2011("aocBP1x0023"));

  // The owner of the only option has no data access in Java: E2011 (its values are exported
  // when the combo is not requested; see AttributeOptionComboFilterRows).
  request.clear_attribute_option_combo();
  request.add_attribute_option_combo("aocOwned026");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kPermissionDenied, e2011("aocOwned026"));
  // The same combo named by attribute_combo and attribute_options goes through E2011 too.
  v1::ExportRequest by_options = Everything();
  by_options.set_attribute_combo("ccSharing02");
  by_options.add_attribute_options("coOwned0016");
  ExpectStatus(Run(by_options, "partner"), absl::StatusCode::kPermissionDenied,
               e2011("aocOwned026"));
  // Nine characters grant nothing.
  request.set_attribute_option_combo(0, "aocNineC028");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kPermissionDenied, e2011("aocNineC028"));
  // One read-only option and one write-only option: neither of the two "all"s holds.
  request.set_attribute_option_combo(0, "aocMixed030");
  ExpectStatus(Run(request, "partner"), absl::StatusCode::kPermissionDenied, e2011("aocMixed030"));
  // Write-only passes the Java check, but the SQL filter (data read only) drops its values.
  request.set_attribute_option_combo(0, "aocWrite029");
  partner = Run(request, "partner");
  ASSERT_TRUE(partner.status.ok()) << partner.status;
  EXPECT_EQ(partner.values, Values{});
  // The default combo always passes.
  request.set_attribute_option_combo(0, "HllvX50cXC0");
  Outcome programme = Run(request, "programme");
  ASSERT_TRUE(programme.status.ok()) << programme.status;
  EXPECT_EQ(programme.values, (Values{"1", "2", "3", "10"}));
  // Superusers pass.
  request.set_attribute_option_combo(0, "aocNineC028");
  Outcome super = Run(request, "super");
  ASSERT_TRUE(super.status.ok()) << super.status;
  EXPECT_EQ(super.values, (Values{"13"}));
}

TEST_F(AuthorizationTest, OrgUnitsInTheDataViewHierarchy) {
  auto e2012 = [](const std::string& uid) {
    return absl::StrCat("E2012: User is not allowed to view org unit: `", uid, "`");
  };
  v1::ExportRequest request = Everything({"deAlpha0001", "deBravo0002"});
  request.clear_org_unit();
  request.set_children(false);
  request.add_org_unit("ouClinA0001");
  // Data view units ClinA; the data capture unit Root does not add to them.
  Outcome district = Run(request, "district");
  ASSERT_TRUE(district.status.ok()) << district.status;
  EXPECT_EQ(district.values, (Values{"1", "2"}));
  request.set_org_unit(0, "ouRoot00001");
  ExpectStatus(Run(request, "district"), absl::StatusCode::kPermissionDenied, e2012("ouRoot00001"));
  // No data view units: the data capture units (ClinB) count.
  request.set_org_unit(0, "ouClinB0002");
  EXPECT_TRUE(Run(request, "capture").status.ok());
  request.set_org_unit(0, "ouClinA0001");
  ExpectStatus(Run(request, "capture"), absl::StatusCode::kPermissionDenied, e2012("ouClinA0001"));
  // Several failing: the first in request order.
  request.add_org_unit("ouClinC0003");
  request.set_org_unit(0, "ouClinC0003");
  request.set_org_unit(1, "ouRoot00001");
  ExpectStatus(Run(request, "district"), absl::StatusCode::kPermissionDenied, e2012("ouClinC0003"));
  // Superusers too: admin has no org units at all.
  request = Everything();
  ExpectStatus(Run(request, "admin"), absl::StatusCode::kPermissionDenied, e2012("ouRoot00001"));
  EXPECT_TRUE(Run(request, "super").status.ok());
  ExpectStatus(Run(request, "nobody"), absl::StatusCode::kPermissionDenied, e2012("ouRoot00001"));
  // No principal (--auth none): no E2012.
  EXPECT_TRUE(Export(pool_, request, nullptr).status.ok());
  // Org unit groups are not checked against the hierarchy, and their members' values are all
  // exported.
  request = Everything({"deAlpha0001", "deBravo0002", "deCharl0003"});
  request.clear_org_unit();
  request.set_children(false);
  request.add_org_unit_group("ougGroup001");
  district = Run(request, "district");
  ASSERT_TRUE(district.status.ok()) << district.status;
  EXPECT_EQ(district.values, (Values{"1", "2", "3"}));
}

// E2010, then E2011, then E2012; each only once the earlier ones pass.
TEST_F(AuthorizationTest, DecisionsInDhis2sOrder) {
  v1::ExportRequest request = Everything({});
  request.add_data_set("dsMonthly01");
  request.add_attribute_option_combo("aocBP1x0023");
  ExpectStatus(Run(request, "nobody"), absl::StatusCode::kPermissionDenied,
               "E2010: User is not allowed to read data for data set: `dsMonthly01`");
  request.set_data_set(0, "dsSharing03");
  ExpectStatus(Run(request, "nobody"), absl::StatusCode::kPermissionDenied,
               "E2011: User is not allowed to read data for attribute option combo: "
               "`aocBP1x0023`");
  request.set_attribute_option_combo(0, "HllvX50cXC0");
  ExpectStatus(Run(request, "nobody"), absl::StatusCode::kPermissionDenied,
               "E2012: User is not allowed to view org unit: `ouRoot00001`");
  // Resolution comes first: an unknown org unit is not found before any decision.
  request.set_data_set(0, "dsMonthly01");
  request.set_org_unit(0, "ouUnknown01");
  ExpectStatus(Run(request, "nobody"), absl::StatusCode::kNotFound,
               "org_unit: \"ouUnknown01\" does not exist");
}

// Which values a non-superuser's export keeps: those whose attribute option combo has no
// category option it cannot data-read by DHIS2's SQL rule.
TEST_F(AuthorizationTest, AttributeOptionComboFilterRows) {
  const v1::ExportRequest request = Everything();
  // 1 2 3 10: default combo (option public rwrw----). 5 and 7: Partner A through the group;
  // Project 1 without sharing, Project 2 with public null. 6: Partner B unreadable (one of two
  // options). 11: the owner (SQL counts it). 12: the user's own entry. 13: nine characters.
  // 14: data write only.
  Outcome partner = Run(request, "partner");
  ASSERT_TRUE(partner.status.ok()) << partner.status;
  EXPECT_EQ(partner.values, (Values{"1", "2", "3", "5", "7", "10", "11", "12"}));
  Outcome programme = Run(request, "programme");
  ASSERT_TRUE(programme.status.ok()) << programme.status;
  EXPECT_EQ(programme.values, (Values{"1", "2", "3", "10"}));
  const Values all = {"1", "2", "3", "5", "6", "7", "10", "11", "12", "13", "14"};
  Outcome super = Run(request, "super");
  ASSERT_TRUE(super.status.ok()) << super.status;
  EXPECT_EQ(super.values, all);
  Outcome none = Export(pool_, request, nullptr);
  ASSERT_TRUE(none.status.ok()) << none.status;
  EXPECT_EQ(none.values, all);
}

// The default option's sharing counts in the SQL filter like any other's, while E2011 always
// accepts the default combo.
TEST_F(AuthorizationTest, DefaultOptionIsFilteredLikeAnyOther) {
  Execute(fixture_->admin_conninfo(),
          "UPDATE categoryoption SET sharing = '{\"owner\": \"uAdmin00001\", \"public\": "
          "\"rw------\"}' WHERE categoryoptionid = 11");
  v1::ExportRequest request = Everything({"deAlpha0001"});
  Outcome partner = Run(request, "partner");
  ASSERT_TRUE(partner.status.ok()) << partner.status;
  EXPECT_EQ(partner.values, (Values{"5", "7"}));
  request.add_attribute_option_combo("HllvX50cXC0");
  Outcome programme = Run(request, "programme");
  ASSERT_TRUE(programme.status.ok()) << programme.status;
  EXPECT_EQ(programme.values, Values{});
  Outcome super = Run(request, "super");
  EXPECT_EQ(super.values, (Values{"1", "10"}));
  Execute(fixture_->admin_conninfo(),
          "UPDATE categoryoption SET sharing = '{\"owner\": \"uAdmin00001\", \"public\": "
          "\"rwrw----\"}' WHERE categoryoptionid = 11");
}

// One COPY, slices on several connections, the count, ADX and a delta: the same rules.
TEST_F(AuthorizationTest, EveryReadAndTheCountAgree) {
  const v1::ExportRequest request = Everything();
  const Values partner_values = {"1", "2", "3", "5", "7", "10", "11", "12"};
  for (const char* user : {"partner", "programme", "super"}) {
    SCOPED_TRACE(user);
    Outcome one = Run(request, user, Read::kOneCopy);
    Outcome sliced = Run(request, user, Read::kSlices);
    Outcome count = Run(request, user, Read::kCount);
    ASSERT_TRUE(one.status.ok()) << one.status;
    ASSERT_TRUE(sliced.status.ok()) << sliced.status;
    ASSERT_TRUE(count.status.ok()) << count.status;
    EXPECT_EQ(sliced.values, one.values);
    EXPECT_EQ(count.count, one.count);
  }
  EXPECT_EQ(Run(request, "partner", Read::kSlices).values, partner_values);
  EXPECT_EQ(Run(request, "partner", Read::kCount).count, 8);

  v1::ExportRequest adx = Everything({});
  adx.add_data_set("dsSharing03");
  Outcome partner_adx = Run(adx, "partner", Read::kAdx);
  ASSERT_TRUE(partner_adx.status.ok()) << partner_adx.status;
  EXPECT_EQ(partner_adx.values, (Values{"11", "12"}));
  Outcome programme_adx = Run(adx, "programme", Read::kAdx);
  ASSERT_TRUE(programme_adx.status.ok()) << programme_adx.status;
  EXPECT_EQ(programme_adx.values, Values{});
  EXPECT_EQ(Run(adx, "super", Read::kAdx).values, (Values{"11", "12", "13", "14"}));
  adx.set_data_set(0, "dsMonthly01");
  ExpectStatus(Run(adx, "partner", Read::kAdx), absl::StatusCode::kPermissionDenied,
               "E2010: User is not allowed to read data for data set: `dsMonthly01`");

  // A delta is judged with the rights of its own call, whoever's export gave the token.
  Outcome base = Run(request, "super");
  ASSERT_TRUE(base.status.ok()) << base.status;
  ASSERT_FALSE(base.change_token.empty());
  Execute(fixture_->admin_conninfo(),
          "INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid, "
          "attributeoptioncomboid, value, storedby, created, lastupdated, comment, followup, "
          "deleted) VALUES (105, 602, 402, 21, 28, '15', 'admin', now(), now(), NULL, false, "
          "false), (105, 602, 402, 21, 27, '16', 'admin', now(), now(), NULL, false, false)");
  v1::ExportRequest delta = request;
  delta.set_changes_since(base.change_token);
  for (Read how : {Read::kOneCopy, Read::kSlices}) {
    Outcome partner_delta = Run(delta, "partner", how);
    ASSERT_TRUE(partner_delta.status.ok()) << partner_delta.status;
    // A delta may repeat older values (never miss new ones): it holds 16, and nothing the
    // partner may not read.
    auto has = [](const Values& values, const char* value) {
      return std::find(values.begin(), values.end(), value) != values.end();
    };
    EXPECT_TRUE(has(partner_delta.values, "16"));
    for (const char* hidden : {"6", "13", "14", "15"}) {
      EXPECT_FALSE(has(partner_delta.values, hidden)) << hidden;
    }
    Outcome super_delta = Run(delta, "super", how);
    ASSERT_TRUE(super_delta.status.ok()) << super_delta.status;
    EXPECT_TRUE(has(super_delta.values, "15"));
    EXPECT_TRUE(has(super_delta.values, "16"));
  }
  Outcome count_delta = Run(delta, "partner", Read::kCount);
  ASSERT_TRUE(count_delta.status.ok());
  EXPECT_EQ(count_delta.count, Run(delta, "partner").count);
  Execute(fixture_->admin_conninfo(), "DELETE FROM datavalue WHERE value IN ('15', '16')");
}

// ---------------------------------------------------------------------------------------------
// Randomized: dvexport against DHIS2's own SQL and functions.

const std::vector<std::string> kUserPool = {"uPartner001", "uProgram001", "uDistrict01",
                                            "uNobody0001"};
const std::vector<std::string> kGroupPool = {"gPartnerA01", "gProgram001", "gOther00003",
                                             "gOther00004"};
const std::vector<const char*> kAccessStrings = {
    "rwrw----", "rw------", "r-------", "--r-----",  "---w----", "r-r-----", "--------",
    "rwr-----", "r--w----", "-wrw----", "rwrw-----", "rwrw",     "",         "__r_____",
    "--r----x", "R-R-----", "r%",       "null",      "--R-----", "rw-w----"};

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& from) {
  return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
}

bool Chance(std::mt19937& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// A random access value: absent (nullopt), JSON null, or a string.
std::optional<nlohmann::json> RandomAccess(std::mt19937& rng) {
  const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
  if (kind == 0) return std::nullopt;
  if (kind == 1) return nlohmann::json(nullptr);
  return nlohmann::json(Pick(rng, kAccessStrings));
}

nlohmann::json RandomEntries(std::mt19937& rng, const std::vector<std::string>& pool) {
  const int kind = std::uniform_int_distribution<int>(0, 5)(rng);
  if (kind == 0) return nlohmann::json(nullptr);
  nlohmann::json entries = nlohmann::json::object();
  if (kind == 1) return entries;
  const int n = std::uniform_int_distribution<int>(1, 3)(rng);
  for (int i = 0; i < n; ++i) {
    const std::string& key = Pick(rng, pool);
    nlohmann::json entry = nlohmann::json::object();
    const int id = std::uniform_int_distribution<int>(0, 9)(rng);
    if (id < 8) entry["id"] = key;
    if (id == 8) entry["id"] = Pick(rng, pool);
    std::optional<nlohmann::json> access = RandomAccess(rng);
    if (access) entry["access"] = *access;
    if (Chance(rng, 0.2)) entry["displayName"] = "Someone";
    entries[key] = entry;
  }
  return entries;
}

// A random "sharing" value as SQL (a jsonb literal or NULL): owners, public strings, users,
// groups, malformed strings, JSON nulls, missing keys.
std::string RandomSharingSql(std::mt19937& rng) {
  if (Chance(rng, 0.06)) return "NULL";
  nlohmann::json sharing = nlohmann::json::object();
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0:
      break;
    case 1:
      sharing["owner"] = nullptr;
      break;
    case 2:
      sharing["owner"] = "null";
      break;
    case 3:
      sharing["owner"] = "uStranger01";
      break;
    default:
      sharing["owner"] = Pick(rng, kUserPool);
  }
  if (!Chance(rng, 0.15)) {
    std::optional<nlohmann::json> access = RandomAccess(rng);
    if (access) sharing["public"] = *access;
  }
  if (Chance(rng, 0.3)) sharing["external"] = false;
  if (Chance(rng, 0.7)) sharing["users"] = RandomEntries(rng, kUserPool);
  if (Chance(rng, 0.7)) sharing["userGroups"] = RandomEntries(rng, kGroupPool);
  std::string text = sharing.dump();
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') quoted += '\'';
    quoted += c;
  }
  return quoted + "'::jsonb";
}

// JpaQueryUtils.generateSQlQueryForSharingCheck, character for character (UIDs of the test's own
// pools: no quoting needed).
std::string Dhis2SharingCheck(const std::string& column, const std::string& user,
                              const std::vector<std::string>& groups, const std::string& access) {
  const std::string ids = groups.empty() ? "" : absl::StrCat("{", absl::StrJoin(groups, ","), "}");
  std::string sql = absl::StrCat(" ( ", column, "->>'owner' is null or ", column, "->>'owner' = '",
                                 user, "') ", " or ", column, "->>'public' like '", access, "' or ",
                                 column, "->>'public' is null ", " or (jsonb_has_user_id( ", column,
                                 ", '", user, "') = true ", " and jsonb_check_user_access( ",
                                 column, ", '", user, "', '", access, "' ) = true )  ");
  if (!ids.empty()) {
    absl::StrAppend(&sql, " or ( jsonb_has_user_group_ids( ", column, ", '", ids,
                    "') = true  and jsonb_check_user_groups_access( ", column, ", '", access,
                    "', '", ids, "') = true )");
  }
  return sql;
}

// SpringDataValueSetStore.getAttributeOptionComboClause for a non-superuser.
std::string Dhis2AttributeOptionComboClause(const std::string& user,
                                            const std::vector<std::string>& groups) {
  return absl::StrCat(
      " and dv.attributeoptioncomboid not in (select distinct(cocco.categoryoptioncomboid) from "
      "categoryoptioncombos_categoryoptions as cocco where cocco.categoryoptionid not in ( "
      "select co.categoryoptionid from categoryoption co   where ",
      Dhis2SharingCheck("co.sharing", user, groups, "__r_____"), ") )");
}

// InternalHibernateGenericStoreImpl.getSharingPredicates with "r%", as SQL on "o".
std::string Dhis2MetadataPredicate(const std::string& user,
                                   const std::vector<std::string>& groups) {
  std::string sql = absl::StrCat(
      "(o.sharing->>'public' LIKE 'r%' OR o.sharing->>'public' = 'null' OR "
      "o.sharing->>'public' IS NULL OR o.sharing->>'owner' IS NULL OR o.sharing->>'owner' = "
      "'null' OR o.sharing->>'owner' = '",
      user, "' OR (jsonb_has_user_id(o.sharing, '", user,
      "') = true AND jsonb_check_user_access(o.sharing, '", user, "', 'r%') = true)");
  if (!groups.empty()) {
    const std::string ids = absl::StrCat("{", absl::StrJoin(groups, ","), "}");
    absl::StrAppend(&sql, " OR (jsonb_has_user_group_ids(o.sharing, '", ids,
                    "') = true AND jsonb_check_user_groups_access(o.sharing, 'r%', '", ids,
                    "') = true)");
  }
  return sql + ")";
}

class RandomizedAuthorizationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Every user may view the root: E2012 plays no part here.
    fixture_ = new testing::FixtureDatabase(
        "_authz_random",
        absl::StrCat(kAuthSql, ReadSourceFile("tests/integration/dhis2_sharing_functions.sql"),
                     "; DELETE FROM userdatavieworgunits; "
                     "INSERT INTO userdatavieworgunits (userinfoid, organisationunitid) "
                     "SELECT userinfoid, 401 FROM userinfo"));
    if (fixture_->reader_conninfo().empty()) return;
    pool_ = new db::ConnectionPool(fixture_->reader_conninfo(), 4);
  }
  static void TearDownTestSuite() {
    delete pool_;
    delete fixture_;
  }
  void SetUp() override { ASSERT_NE(pool_, nullptr); }

  static testing::FixtureDatabase* fixture_;
  static db::ConnectionPool* pool_;
};

testing::FixtureDatabase* RandomizedAuthorizationTest::fixture_ = nullptr;
db::ConnectionPool* RandomizedAuthorizationTest::pool_ = nullptr;

struct Shareable {
  const char* table;
  const char* id_column;
  int64_t id;
  const char* uid;
};

TEST_F(RandomizedAuthorizationTest, ExportsKeepWhatDhis2sSqlKeeps) {
  const std::string admin = fixture_->admin_conninfo();
  const std::vector<Shareable> metadata = {
      {"dataset", "datasetid", 201, "dsMonthly01"},
      {"dataset", "datasetid", 202, "dsOther0002"},
      {"dataset", "datasetid", 203, "dsSharing03"},
      {"dataelement", "dataelementid", 101, "deAlpha0001"},
      {"dataelement", "dataelementid", 102, "deBravo0002"},
      {"dataelement", "dataelementid", 103, "deCharl0003"},
      {"dataelement", "dataelementid", 104, "deDelta0004"},
      {"dataelement", "dataelementid", 105, "deEcho00005"},
      {"dataelementgroup", "dataelementgroupid", 301, "degGroup001"},
      {"orgunitgroup", "orgunitgroupid", 501, "ougGroup001"},
      {"orgunitgroup", "orgunitgroupid", 502, "ougGroup002"},
  };
  const unsigned seed = 20260;  // fixed, so that a failure can be replayed
  std::mt19937 rng(seed);
  const std::vector<std::string> usernames = {"partner", "programme", "district", "nobody"};
  int compared_exports = 0, kept_values = 0, dropped_values = 0, found = 0, hidden = 0;
  for (int round = 0; round < 120; ++round) {
    SCOPED_TRACE(absl::StrCat("seed ", seed, " round ", round));
    std::string updates;
    for (int64_t option = 11; option <= 19; ++option) {
      absl::StrAppend(&updates, "UPDATE categoryoption SET sharing = ", RandomSharingSql(rng),
                      " WHERE categoryoptionid = ", option, "; ");
    }
    for (const Shareable& object : metadata) {
      absl::StrAppend(&updates, "UPDATE ", object.table, " SET sharing = ", RandomSharingSql(rng),
                      " WHERE ", object.id_column, " = ", object.id, "; ");
    }
    Execute(admin, updates);
    dhis2::Principal principal = PrincipalOf(admin, Pick(rng, usernames));
    // The groups the principal carries, whatever usergroupmembers says (the rules read the
    // principal's).
    principal.group_uids.clear();
    for (const std::string& group : kGroupPool) {
      if (Chance(rng, 0.4)) principal.group_uids.push_back(group);
    }
    std::sort(principal.group_uids.begin(), principal.group_uids.end());

    // The metadata-read predicate, object by object.
    const std::string predicate = Dhis2MetadataPredicate(principal.uid, principal.group_uids);
    std::vector<std::string> readable_elements;
    for (const Shareable& object : metadata) {
      const bool readable =
          !Column(admin, absl::StrCat("SELECT 1 FROM ", object.table, " o WHERE o.",
                                      object.id_column, " = ", object.id, " AND ", predicate))
               .empty();
      if (readable && std::string(object.table) == "dataelement") {
        readable_elements.push_back(object.uid);
      }
      // In a random input id scheme: UID, CODE (when the object has one) or NAME.
      const std::vector<std::string> names =
          Column(admin, absl::StrCat("SELECT coalesce(code, '') || '|' || name FROM ", object.table,
                                     " WHERE ", object.id_column, " = ", object.id));
      const std::string code = names.front().substr(0, names.front().find('|'));
      const std::string name = names.front().substr(names.front().find('|') + 1);
      std::string scheme = Pick(rng, std::vector<std::string>{"UID", "CODE", "NAME"});
      if (scheme == "CODE" && code.empty()) scheme = "UID";
      const std::string id = scheme == "UID" ? object.uid : scheme == "CODE" ? code : name;
      v1::ExportRequest request = Everything({});
      const std::string table = object.table;
      if (table == "dataset") request.add_data_set(id);
      if (table == "dataelement") request.add_data_element(id);
      if (table == "dataelementgroup") request.add_data_element_group(id);
      if (table == "orgunitgroup") {
        // Any readable data set works: only whether the group is found counts.
        request.add_data_set("dsSharing03");
        request.set_input_data_set_id_scheme("UID");
        request.clear_org_unit();
        request.set_children(false);
        request.add_org_unit_group(id);
      }
      // Org unit groups take input_id_scheme; the others their own, which wins over it.
      request.set_input_id_scheme(scheme);
      const Outcome outcome = Export(pool_, request, &principal, Read::kCount);
      const bool not_found =
          outcome.status.code() == absl::StatusCode::kNotFound &&
          outcome.status.message().find(absl::StrCat("\"", id, "\"")) != absl::string_view::npos;
      if (table == "orgunitgroup" && outcome.status.code() == absl::StatusCode::kNotFound &&
          !not_found) {
        continue;  // dsSharing03 itself was not readable
      }
      EXPECT_EQ(!not_found, readable) << object.uid << " as " << id << ": " << outcome.status;
      (readable ? found : hidden)++;
    }
    if (readable_elements.empty()) continue;

    // The values: the readable data elements' (DHIS2 drops the others silently; dvexport
    // refuses them, tested above), all of them under the root in 2024.
    const v1::ExportRequest request = Everything(readable_elements);
    Outcome outcome = Export(pool_, request, &principal, Read::kOneCopy);
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    std::vector<std::string> quoted;
    for (const std::string& uid : readable_elements) quoted.push_back(absl::StrCat("'", uid, "'"));
    const std::string base = absl::StrCat(
        "SELECT dv.value FROM datavalue dv JOIN dataelement de ON de.dataelementid = "
        "dv.dataelementid WHERE de.uid IN (",
        absl::StrJoin(quoted, ","), ") AND dv.deleted = false");
    Values expected = Column(admin, absl::StrCat(base, Dhis2AttributeOptionComboClause(
                                                           principal.uid, principal.group_uids)));
    SortNumerically(&expected);
    EXPECT_EQ(outcome.values, expected) << "groups " << absl::StrJoin(principal.group_uids, ",");
    const size_t all = Column(admin, base).size();
    kept_values += static_cast<int>(expected.size());
    dropped_values += static_cast<int>(all - expected.size());
    EXPECT_EQ(Export(pool_, request, &principal, Read::kCount).count,
              static_cast<int64_t>(expected.size()));
    ++compared_exports;
  }
  std::printf("compared %d exports (%d values kept, %d dropped); %d identifiers found, %d hidden\n",
              compared_exports, kept_values, dropped_values, found, hidden);
  // The generator must exercise both outcomes of both rules.
  EXPECT_GT(compared_exports, 50);
  EXPECT_GT(kept_values, 0);
  EXPECT_GT(dropped_values, 0);
  EXPECT_GT(found, 0);
  EXPECT_GT(hidden, 0);
}

}  // namespace
}  // namespace dvexport
