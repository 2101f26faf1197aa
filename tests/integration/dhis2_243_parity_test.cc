// DHIS2 2.43 parity with DHIS2's own SQL: for each request of a table (a superuser's), DHIS2
// 2.43.1's query (createExportQuery's template after QueryBuilder's erasure, dhis2_243_query.cc)
// runs on the demo in 2.43's schema (DVEXPORT_TEST_PG_243), and dvexport's StreamDataValues of
// the same request must hold the same multiset of values (every column DHIS2 reads), in an order
// whose ORDER BY keys are DHIS2's sequence of keys (ties may differ: DHIS2's order is not unique).
// Pages (limit, offset) must be DHIS2's page exactly once dvexport's tie-break, the value's key,
// follows DHIS2's ORDER BY columns.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/integration/dhis2_243_query.h"
#include "tests/integration/dhis2_243_support.h"

namespace dvexport::testing {
namespace {

using v1::EXPORT_ORDER_AOC;
using v1::EXPORT_ORDER_CREATED;
using v1::EXPORT_ORDER_DE;
using v1::EXPORT_ORDER_OU;
using v1::EXPORT_ORDER_PE;

// The demo's two roots and every data set (with the group of the data elements no data set has):
// every value of the demo.
const std::vector<std::string> kRoots = {"ImspTQPwCqd", "EqZQbZsbFhc"};
const std::vector<std::string> kDataSets = {"QfF9ZANatcj", "av9SOZj6FcK", "IF4YaBzxNHa",
                                            "Se00xj4OCO2", "JurnHCkmDCn"};

Dhis2Request WholeWindow() {
  Dhis2Request request;
  request.data_sets = kDataSets;
  request.data_element_groups = {"u52faNiLSwY"};
  request.org_units = kRoots;
  request.children = true;
  request.start_date = "2000-01-01";
  request.end_date = "2030-12-31";
  return request;
}

struct Case {
  std::string name;
  Dhis2Request request;
};

std::vector<Case> FilterCases() {
  std::vector<Case> cases;
  auto add = [&](const std::string& name, auto change) {
    Dhis2Request request = WholeWindow();
    change(request);
    cases.push_back({name, request});
  };
  add("whole window, default order", [](Dhis2Request&) {});
  add("one data set", [](Dhis2Request& r) {
    r.data_sets = {"QfF9ZANatcj"};
    r.data_element_groups.clear();
  });
  add("data elements and a group: the union", [](Dhis2Request& r) {
    r.data_sets.clear();
    r.data_elements = {"AnPfie4tAuZ", "Hxz3gHWsCOj"};
    r.data_element_groups = {"tBkFx3WBVQB"};
  });
  add("period list", [](Dhis2Request& r) {
    r.start_date.reset();
    r.end_date.reset();
    r.periods = {"202401", "2024Q1", "2024FriW6", "2024Feb", "2023April", "2024W1"};
  });
  add("start and end dates", [](Dhis2Request& r) {
    r.start_date = "2024-01-01";
    r.end_date = "2024-06-30";
  });
  add("period and start date only", [](Dhis2Request& r) {
    r.periods = {"202312", "202401", "2024", "2023Q4", "2024Q1"};
    r.start_date = "2024-01-01";
    r.end_date.reset();
  });
  add("children of a level 2 unit", [](Dhis2Request& r) { r.org_units = {"O6uvpzGd5pu"}; });
  add("org units without children", [](Dhis2Request& r) {
    r.org_units = {"O6uvpzGd5pu", "Lo1Dv9LY5Jd", "CZvP1scFYut"};
    r.children = false;
  });
  add("org unit groups", [](Dhis2Request& r) {
    r.org_units.clear();
    r.children = false;
    r.org_unit_groups = {"aQnB1okRtYS", "zhTV09e7ldw"};
  });
  add("org unit and group", [](Dhis2Request& r) {
    r.org_units = {"PSbY0tydMJz"};
    r.children = false;
    r.org_unit_groups = {"FGDfCn4laRJ"};
  });
  add("level 4", [](Dhis2Request& r) { r.level = 4; });
  add("level 2", [](Dhis2Request& r) { r.level = 2; });
  add("one category option combo",
      [](Dhis2Request& r) { r.category_option_combos = {"C6QY274f15G"}; });
  add("category option combos", [](Dhis2Request& r) {
    r.category_option_combos = {"C6QY274f15G", "pq2XI5kz2BY", "HllvX50cXC0"};
  });
  add("one attribute option combo",
      [](Dhis2Request& r) { r.attribute_option_combos = {"X4SIDdvi2xP"}; });
  add("attribute option combos", [](Dhis2Request& r) {
    r.attribute_option_combos = {"X4SIDdvi2xP", "MWgIvh8NyUb", "lNvDRdYjWUW"};
  });
  add("unknown UIDs beside known ones match nothing", [](Dhis2Request& r) {
    r.data_sets = {"AAAAAAAAAAA"};
    r.data_elements = {"AnPfie4tAuZ"};
    r.org_units = {"BBBBBBBBBBB", "O6uvpzGd5pu"};
    r.attribute_option_combos = {"CCCCCCCCCCC", "MWgIvh8NyUb"};
  });
  add("include deleted", [](Dhis2Request& r) { r.include_deleted = true; });
  add("last updated by its date", [](Dhis2Request& r) {
    r.last_updated = "2024-08-08T12:00:00";
    r.last_updated_date = "2024-08-08";
  });
  add("last updated, a date", [](Dhis2Request& r) {
    r.last_updated = "2024-12-05";
    r.last_updated_date = "2024-12-05";
    r.include_deleted = true;
  });
  return cases;
}

std::vector<Case> OrderCases() {
  std::vector<Case> cases;
  auto add = [&](const std::string& name, auto change) {
    Dhis2Request request = WholeWindow();
    request.include_deleted = true;
    change(request);
    cases.push_back({name, request});
  };
  add("order OU,DE", [](Dhis2Request& r) { r.order = {EXPORT_ORDER_OU, EXPORT_ORDER_DE}; });
  add("order AOC", [](Dhis2Request& r) { r.order = {EXPORT_ORDER_AOC}; });
  add("order DE,OU,DE (first kept)", [](Dhis2Request& r) {
    r.order = {EXPORT_ORDER_DE, EXPORT_ORDER_OU, EXPORT_ORDER_DE};
  });
  add("order CREATED", [](Dhis2Request& r) { r.order = {EXPORT_ORDER_CREATED}; });
  add("orderByPeriod alone: PE only", [](Dhis2Request& r) { r.order_by_period = true; });
  add("orderByPeriod with OU,DE: PE first", [](Dhis2Request& r) {
    r.order = {EXPORT_ORDER_OU, EXPORT_ORDER_DE};
    r.order_by_period = true;
  });
  add("orderByPeriod with DE,PE: unchanged", [](Dhis2Request& r) {
    r.order = {EXPORT_ORDER_DE, EXPORT_ORDER_PE};
    r.order_by_period = true;
  });
  return cases;
}

std::vector<Case> PageCases() {
  std::vector<Case> cases;
  auto add = [&](const std::string& name, auto change) {
    Dhis2Request request = WholeWindow();
    change(request);
    cases.push_back({name, request});
  };
  add("limit 100 offset 250", [](Dhis2Request& r) {
    r.limit = 100;
    r.offset = 250;
  });
  add("limit 50 offset 10, order OU,DE", [](Dhis2Request& r) {
    r.limit = 50;
    r.offset = 10;
    r.order = {EXPORT_ORDER_OU, EXPORT_ORDER_DE};
  });
  add("offset 10000 alone, order AOC", [](Dhis2Request& r) {
    r.offset = 10000;
    r.order = {EXPORT_ORDER_AOC};
  });
  add("limit 7 alone, orderByPeriod", [](Dhis2Request& r) {
    r.limit = 7;
    r.order_by_period = true;
  });
  add("limit 30 offset -40 (absolute), one data set", [](Dhis2Request& r) {
    r.data_sets = {"JurnHCkmDCn"};
    r.data_element_groups.clear();
    r.limit = 30;
    r.offset = -40;
  });
  add("limit 20 offset 5, level 4 and a coc", [](Dhis2Request& r) {
    r.level = 4;
    r.category_option_combos = {"gomgkNs2L8e"};
    r.limit = 20;
    r.offset = 5;
  });
  return cases;
}

class Dhis2243ParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = Conninfo243();
    if (conninfo_.empty()) {
      GTEST_SKIP() << "DVEXPORT_TEST_PG_243 is not set: the demo in DHIS2 2.43's schema is "
                      "needed (scripts/test, or `source /work/dev/env`)";
    }
  }

  // dvexport's stream against DHIS2's query for "c": the multiset, and the ORDER BY keys.
  void ExpectParity(Server243& server, const OrderKeys& keys, const Case& c) {
    SCOPED_TRACE(c.name);
    const std::vector<ExportRow> want = QueryDhis2Rows(conninfo_, Dhis2Sql(c.request, false));
    EXPECT_FALSE(want.empty()) << "a request that matches nothing tests nothing";
    absl::StatusOr<std::vector<ExportRow>> got = server.Stream(ToExportRequest(c.request));
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSameMultiset(*got, FollowupNullAsFalse(want), c.name);
    const std::vector<v1::ExportOrder> orders = Dhis2Orders(c.request);
    EXPECT_TRUE(keys.Of(*got, orders) == keys.Of(want, orders))
        << c.name << ": dvexport's order is not DHIS2's (ORDER BY "
        << absl::StrJoin(Dhis2OrderColumns(orders), ", ") << ")";
  }

  std::string conninfo_;
};

TEST_F(Dhis2243ParityTest, FiltersMatchDhis2Sql) {
  Server243 server(conninfo_);
  const OrderKeys keys(conninfo_);
  for (const Case& c : FilterCases()) ExpectParity(server, keys, c);
}

TEST_F(Dhis2243ParityTest, OrdersMatchDhis2Sql) {
  Server243 server(conninfo_);
  const OrderKeys keys(conninfo_);
  for (const Case& c : OrderCases()) ExpectParity(server, keys, c);
}

// Slices that dvexport sorts (periods or data elements leading), whatever their size: one
// group each and then a few (a target of one byte grows them by at most four times a slice),
// and slices that outgrow their bound, read again sorted by PostgreSQL.
TEST_F(Dhis2243ParityTest, OrdersMatchDhis2SqlWhateverTheSlices) {
  db::ReadPlanOptions small_slices;
  small_slices.sorted_slice_target_bytes = 1;
  db::ReadPlanOptions outgrown;
  outgrown.max_sorted_slice_bytes = 4096;
  for (const db::ReadPlanOptions& read_plan : {small_slices, outgrown}) {
    SCOPED_TRACE(read_plan.max_sorted_slice_bytes);
    Server243 server(conninfo_, read_plan);
    const OrderKeys keys(conninfo_);
    for (const Case& c : OrderCases()) ExpectParity(server, keys, c);
    for (const Case& c : PageCases()) {
      SCOPED_TRACE(c.name);
      const std::vector<ExportRow> want =
          FollowupNullAsFalse(QueryDhis2Rows(conninfo_, Dhis2Sql(c.request, true)));
      absl::StatusOr<std::vector<ExportRow>> got = server.Stream(ToExportRequest(c.request));
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectSameSequence(*got, want, c.name);
    }
  }
}

// A page is a sequence: DHIS2's with dvexport's tie-break, exactly.
TEST_F(Dhis2243ParityTest, PagesAreDhis2PagesWithTheTieBreak) {
  Server243 server(conninfo_);
  for (const Case& c : PageCases()) {
    SCOPED_TRACE(c.name);
    const std::vector<ExportRow> want =
        FollowupNullAsFalse(QueryDhis2Rows(conninfo_, Dhis2Sql(c.request, true)));
    EXPECT_FALSE(want.empty());
    absl::StatusOr<std::vector<ExportRow>> got = server.Stream(ToExportRequest(c.request));
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSameSequence(*got, want, c.name);
  }
}

// The tests' DHIS2 query is DHIS2's: the builder gives the texts of DHIS2's own
// DataExportQueryBuilderTest (2.43.1) for the same parameters, whitespace aside.
std::string Squeezed(const std::string& sql) {
  return absl::StrJoin(absl::StrSplit(sql, absl::ByAnyChar(" \n\t"), absl::SkipEmpty()), " ");
}

constexpr char kSelectList[] =
    "SELECT de.uid AS deid, pe.iso, ou.uid AS ouid, coc.uid AS cocid, aoc.uid AS aocid, "
    "de.valuetype, dv.value, dv.comment, dv.followup, dv.storedby, dv.created, dv.lastupdated, "
    "dv.deleted FROM datavalue dv ";
constexpr char kJoins[] =
    "JOIN dataelement de ON dv.dataelementid = de.dataelementid "
    "JOIN period pe ON dv.periodid = pe.periodid "
    "JOIN organisationunit ou ON dv.sourceid = ou.organisationunitid "
    "JOIN categoryoptioncombo coc ON dv.categoryoptioncomboid = coc.categoryoptioncomboid "
    "JOIN categoryoptioncombo aoc ON dv.attributeoptioncomboid = aoc.categoryoptioncomboid ";
constexpr char kDefaultOrder[] = "ORDER BY pe.startdate, pe.enddate, dv.created, deid";

TEST(Dhis2243QueryTest, BuilderGivesDhis2sOwnTestTexts) {
  Dhis2Request all;
  all.include_deleted = true;
  EXPECT_EQ(Squeezed(Dhis2QueryText(all)),
            absl::StrCat(kSelectList, kJoins, "WHERE 1=1 ", kDefaultOrder));

  Dhis2Request period;
  period.periods = {"2020"};
  EXPECT_EQ(Squeezed(Dhis2QueryText(period)),
            absl::StrCat("WITH pe_ids AS ( SELECT periodid FROM period WHERE iso = :pe ) ",
                         kSelectList, "JOIN pe_ids ON dv.periodid = pe_ids.periodid ", kJoins,
                         "WHERE dv.deleted = :deleted ", kDefaultOrder));

  Dhis2Request children;
  children.org_units = {"ou123456789", "ou987654321"};
  children.children = true;
  EXPECT_EQ(
      Squeezed(Dhis2QueryText(children)),
      absl::StrCat(
          "WITH ou_ids AS ( SELECT organisationunitid FROM ( (SELECT cast(NULL as bigint) AS "
          "organisationunitid WHERE false) UNION (SELECT ou.organisationunitid FROM "
          "organisationunit ou WHERE ou.uid = ANY(:ou)) ) ou_all WHERE organisationunitid IS NOT "
          "NULL ), ou_with_descendants_ids AS ( SELECT DISTINCT ou.organisationunitid FROM "
          "ou_ids JOIN organisationunit root USING (organisationunitid) JOIN organisationunit ou "
          "ON ou.path LIKE root.path || '%' ) ",
          kSelectList,
          "JOIN ou_with_descendants_ids ON dv.sourceid = "
          "ou_with_descendants_ids.organisationunitid ",
          kJoins, "WHERE dv.deleted = :deleted ", kDefaultOrder));

  Dhis2Request group;
  group.data_element_groups = {"deg23456789"};
  EXPECT_EQ(Squeezed(Dhis2QueryText(group)),
            absl::StrCat("WITH de_ids AS ( SELECT dataelementid FROM ( (SELECT cast(NULL as "
                         "bigint) AS dataelementid WHERE false) UNION (SELECT degm.dataelementid "
                         "FROM dataelementgroupmembers degm JOIN dataelementgroup deg ON "
                         "degm.dataelementgroupid = deg.dataelementgroupid WHERE deg.uid = "
                         "ANY(:deg)) ) de_all WHERE dataelementid IS NOT NULL ) ",
                         kSelectList, "JOIN de_ids ON dv.dataelementid = de_ids.dataelementid ",
                         kJoins, "WHERE dv.deleted = :deleted ", kDefaultOrder));
}

}  // namespace
}  // namespace dvexport::testing
