// DHIS2 2.43's JSON document through the HTTP door (GET /api/43/dataValueSets.json) on the demo
// in 2.43's schema (DVEXPORT_TEST_PG_243), parsed and compared with DHIS2's query's rows as
// DataExportOutput.toJson and DefaultDataExportService.encodeGroup (2.43.1) write them: the
// header's dataSet, period, orgUnit and attributeOptionCombo for single ones, per-value keys left
// out where the header has them, excludeDefaultCoc/Aoc, and null members left out (a NULL
// followup, a NULL value, a NULL or empty storedBy or comment), key order included.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "tests/integration/dhis2_243_query.h"
#include "tests/integration/dhis2_243_support.h"
#include "tests/support/postgres_timestamp.h"

namespace dvexport::testing {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kDefaultCombo[] = "HllvX50cXC0";

// What a request makes DHIS2's JSON hold.
struct Shape {
  std::string query;  // the URL's query string
  Dhis2Request request;
  std::optional<std::string> data_set, period, org_unit, attribute_option_combo;  // single ones
  bool exclude_default_coc = false;
  bool exclude_default_aoc = false;
};

// DateUtils.toLongGmtDate of a timestamp (milliseconds, truncated, as java.util.Date has them).
std::string LongGmtDate(const std::string& postgres_text) {
  const int64_t millis = test_support::PostgresTimestampMicros(postgres_text) / 1000;
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3S+0000", absl::FromUnixMillis(millis),
                          absl::UTCTimeZone());
}

Json ExpectedValue(const ExportRow& row, const Shape& shape) {
  Json value = Json::object();
  value["dataElement"] = row.data_element;
  if (!shape.period) value["period"] = row.period;
  if (!shape.org_unit) value["orgUnit"] = row.org_unit;
  if (!(shape.exclude_default_coc && row.category_option_combo == kDefaultCombo)) {
    value["categoryOptionCombo"] = row.category_option_combo;
  }
  if (!shape.attribute_option_combo &&
      !(shape.exclude_default_aoc && row.attribute_option_combo == kDefaultCombo)) {
    value["attributeOptionCombo"] = row.attribute_option_combo;
  }
  if (row.value) value["value"] = *row.value;
  if (row.stored_by && !row.stored_by->empty()) value["storedBy"] = *row.stored_by;
  value["created"] = LongGmtDate(row.created);
  value["lastUpdated"] = LongGmtDate(row.last_updated);
  if (row.comment && !row.comment->empty()) value["comment"] = *row.comment;
  if (row.followup) value["followup"] = *row.followup;
  if (row.deleted) value["deleted"] = true;
  return value;
}

Json ExpectedDocument(const std::vector<ExportRow>& rows, const Shape& shape) {
  Json document = Json::object();
  if (shape.data_set) document["dataSet"] = *shape.data_set;
  if (shape.period) document["period"] = *shape.period;
  if (shape.org_unit) document["orgUnit"] = *shape.org_unit;
  if (shape.attribute_option_combo &&
      !(shape.exclude_default_aoc && *shape.attribute_option_combo == kDefaultCombo)) {
    document["attributeOptionCombo"] = *shape.attribute_option_combo;
  }
  document["dataValues"] = Json::array();
  for (const ExportRow& row : rows) document["dataValues"].push_back(ExpectedValue(row, shape));
  return document;
}

std::vector<std::string> Keys(const Json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  return keys;
}

std::vector<Shape> Shapes() {
  std::vector<Shape> shapes;
  Shape single;
  single.query = "dataSet=JurnHCkmDCn&period=202401&orgUnit=Lo1Dv9LY5Jd";
  single.request.data_sets = {"JurnHCkmDCn"};
  single.request.periods = {"202401"};
  single.request.org_units = {"Lo1Dv9LY5Jd"};
  single.data_set = "JurnHCkmDCn";
  single.period = "202401";
  single.org_unit = "Lo1Dv9LY5Jd";
  shapes.push_back(single);

  Shape excluded;
  excluded.query =
      "dataSet=JurnHCkmDCn&dataSet=QfF9ZANatcj&startDate=2024-01-01&"
      "endDate=2024-12-31&orgUnit=O6uvpzGd5pu&children=true&"
      "excludeDefaultCoc=true&excludeDefaultAoc=true&includeDeleted=true";
  excluded.request.data_sets = {"JurnHCkmDCn", "QfF9ZANatcj"};
  excluded.request.start_date = "2024-01-01";
  excluded.request.end_date = "2024-12-31";
  excluded.request.org_units = {"O6uvpzGd5pu"};
  excluded.request.children = true;
  excluded.request.include_deleted = true;
  excluded.exclude_default_coc = excluded.exclude_default_aoc = true;
  shapes.push_back(excluded);

  Shape aoc;
  aoc.query =
      "dataSet=QfF9ZANatcj&period=202403&orgUnit=ImspTQPwCqd&children=true&"
      "attributeOptionCombo=X4SIDdvi2xP";
  aoc.request.data_sets = {"QfF9ZANatcj"};
  aoc.request.periods = {"202403"};
  aoc.request.org_units = {"ImspTQPwCqd"};
  aoc.request.children = true;
  aoc.request.attribute_option_combos = {"X4SIDdvi2xP"};
  aoc.data_set = "QfF9ZANatcj";
  aoc.period = "202403";
  aoc.attribute_option_combo = "X4SIDdvi2xP";
  shapes.push_back(aoc);

  Shape default_aoc;
  default_aoc.query =
      "dataElement=tHuvWumpdSZ&dataElement=MV1cwc9kJp4&period=202402&"
      "period=2024FriW6&orgUnit=ImspTQPwCqd&children=true&"
      "attributeOptionCombo=HllvX50cXC0&excludeDefaultAoc=true";
  default_aoc.request.data_elements = {"tHuvWumpdSZ", "MV1cwc9kJp4"};
  default_aoc.request.periods = {"202402", "2024FriW6"};
  default_aoc.request.org_units = {"ImspTQPwCqd"};
  default_aoc.request.children = true;
  default_aoc.request.attribute_option_combos = {kDefaultCombo};
  default_aoc.attribute_option_combo = kDefaultCombo;
  default_aoc.exclude_default_aoc = true;
  shapes.push_back(default_aoc);
  return shapes;
}

class Dhis2243JsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = Conninfo243();
    if (conninfo_.empty()) {
      GTEST_SKIP() << "DVEXPORT_TEST_PG_243 is not set: the demo in DHIS2 2.43's schema is "
                      "needed (scripts/test, or `source /work/dev/env`)";
    }
    server_ = std::make_unique<Server243>(conninfo_);
  }

  // The document at "target", parsed; null (and a failure) when it is not a 200 with JSON.
  Json Get(const std::string& target) {
    const auto [status, body] = server_->HttpGet(target);
    EXPECT_EQ(status, 200) << target << "\n" << body.substr(0, 2000);
    if (status != 200) return nullptr;
    Json document = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(document.is_discarded()) << "not JSON: " << body.substr(0, 2000);
    return document.is_discarded() ? Json(nullptr) : document;
  }

  void ExpectDocument(const Shape& shape) {
    SCOPED_TRACE(shape.query);
    const std::vector<ExportRow> rows = QueryDhis2Rows(conninfo_, Dhis2Sql(shape.request, false));
    ASSERT_FALSE(rows.empty()) << "a request that matches nothing tests nothing";
    const Json got = Get("/api/43/dataValueSets.json?" + shape.query);
    ASSERT_TRUE(got.is_object());
    const Json want = ExpectedDocument(rows, shape);
    EXPECT_EQ(absl::StrJoin(Keys(got), ","), absl::StrJoin(Keys(want), ","));
    for (const char* key : {"dataSet", "period", "orgUnit", "attributeOptionCombo"}) {
      EXPECT_EQ(got.value(key, Json()), want.value(key, Json())) << key;
    }
    const Json& values = got["dataValues"];
    ASSERT_TRUE(values.is_array());
    ASSERT_EQ(values.size(), want["dataValues"].size());
    int differences = 0;
    for (size_t i = 0; i < values.size() && differences < 5; ++i) {
      // dump(): key order counts, as in DHIS2's bytes.
      if (values[i].dump() == want["dataValues"][i].dump()) continue;
      ++differences;
      ADD_FAILURE() << "value " << i << "\n  dvexport: " << values[i].dump()
                    << "\n  DHIS2:    " << want["dataValues"][i].dump();
    }
  }

  std::string conninfo_;
  std::unique_ptr<Server243> server_;
};

TEST_F(Dhis2243JsonTest, DocumentsMatchDhis2sOutputOfItsQuery) {
  for (const Shape& shape : Shapes()) ExpectDocument(shape);
}

// A NULL followup leaves the key out; false and true stay (the demo has all three).
TEST_F(Dhis2243JsonTest, NullFollowupLeavesTheKeyOut) {
  Shape shape;
  shape.query =
      "dataSet=Se00xj4OCO2&dataSet=av9SOZj6FcK&startDate=2023-01-01&"
      "endDate=2024-12-31&orgUnit=ImspTQPwCqd&children=true&includeDeleted=true";
  shape.request.data_sets = {"Se00xj4OCO2", "av9SOZj6FcK"};
  shape.request.start_date = "2023-01-01";
  shape.request.end_date = "2024-12-31";
  shape.request.org_units = {"ImspTQPwCqd"};
  shape.request.children = true;
  shape.request.include_deleted = true;
  const std::vector<ExportRow> rows = QueryDhis2Rows(conninfo_, Dhis2Sql(shape.request, false));
  size_t nulls = 0, trues = 0;
  for (const ExportRow& row : rows) {
    nulls += !row.followup.has_value();
    trues += row.followup.value_or(false);
  }
  ASSERT_GT(nulls, 0u) << "the demo has no NULL followup here: pick another request";
  ASSERT_GT(trues, 0u);
  const Json got = Get("/api/43/dataValueSets.json?" + shape.query);
  ASSERT_TRUE(got.is_object());
  size_t without = 0, with_true = 0;
  for (const Json& value : got["dataValues"]) {
    without += !value.contains("followup");
    with_true += value.value("followup", false);
  }
  EXPECT_EQ(without, nulls);
  EXPECT_EQ(with_true, trues);
  ExpectDocument(shape);
}

// The code of each UID of "table" (organisationunit or categoryoptioncombo) in the 2.43 demo.
std::map<std::string, std::string> CodesOf(const std::string& conninfo, const std::string& table) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  std::map<std::string, std::string> codes;
  for (const pqxx::row& row :
       tx.exec("SELECT uid, code FROM " + table + " WHERE code IS NOT NULL")) {
    codes[row[0].c_str()] = row[1].c_str();
  }
  return codes;
}

// With an org unit scheme other than UID, encodeGroup (2.43.1) finds the header's orgUnit from
// the values when they all share one (here: children of a leaf), and with an attribute option
// combo scheme other than UID, the header's attributeOptionCombo when the export (the page) has
// exactly one value; the values then leave those keys out.
TEST_F(Dhis2243JsonTest, NonUidSchemesTakeTheSharedOrgUnitAndComboFromTheValues) {
  const std::map<std::string, std::string> ou_codes = CodesOf(conninfo_, "organisationunit");
  const std::map<std::string, std::string> coc_codes = CodesOf(conninfo_, "categoryoptioncombo");
  const std::string window = "dataSet=JurnHCkmDCn&startDate=2024-01-01&endDate=2024-12-31";
  Dhis2Request request;
  request.data_sets = {"JurnHCkmDCn"};
  request.start_date = "2024-01-01";
  request.end_date = "2024-12-31";
  request.children = true;
  struct Case {
    std::string org_unit;
    std::string extra;  // more of the query string
    std::optional<int> limit;
    bool shares;  // what the demo's values make of it: a header member found from them
  };
  for (const Case& c :
       {Case{"JhqLZoNBxt6", "&orgUnitIdScheme=CODE", std::nullopt, true},
        Case{"O6uvpzGd5pu", "&orgUnitIdScheme=CODE", std::nullopt, false},
        Case{"O6uvpzGd5pu", "&orgUnitIdScheme=CODE&order=OU&limit=2", 2, true},
        Case{"O6uvpzGd5pu", "&attributeOptionComboIdScheme=CODE&limit=1", 1, true},
        Case{"O6uvpzGd5pu", "&attributeOptionComboIdScheme=CODE&limit=2", 2, false}}) {
    const std::string query =
        absl::StrCat(window, "&orgUnit=", c.org_unit, "&children=true", c.extra);
    SCOPED_TRACE(query);
    request.org_units = {c.org_unit};
    request.limit = c.limit;
    request.order.clear();
    if (c.extra.find("order=OU") != std::string::npos) request.order = {v1::EXPORT_ORDER_OU};
    const std::vector<ExportRow> rows = QueryDhis2Rows(conninfo_, Dhis2Sql(request, true));
    ASSERT_FALSE(rows.empty());
    std::set<std::string> org_units;
    for (const ExportRow& row : rows) org_units.insert(row.org_unit);
    const bool ou_scheme = c.extra.find("orgUnitIdScheme") != std::string::npos;
    const bool shared_ou = ou_scheme && org_units.size() == 1;
    const bool shared_aoc = !ou_scheme && rows.size() == 1;
    ASSERT_EQ(shared_ou || shared_aoc, c.shares) << "the demo changed: pick another case";
    const Json got = Get("/api/43/dataValueSets.json?" + query);
    ASSERT_TRUE(got.is_object());
    if (shared_ou) {
      EXPECT_EQ(got.value("orgUnit", Json()), ou_codes.at(rows.front().org_unit));
    } else {
      EXPECT_FALSE(got.contains("orgUnit"));
    }
    if (shared_aoc) {
      EXPECT_EQ(got.value("attributeOptionCombo", Json()),
                coc_codes.at(rows.front().attribute_option_combo));
    } else {
      EXPECT_FALSE(got.contains("attributeOptionCombo"));
    }
    ASSERT_EQ(got["dataValues"].size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const Json& value = got["dataValues"][i];
      EXPECT_EQ(value.contains("orgUnit"), !shared_ou) << value.dump();
      if (!shared_ou && ou_scheme) {
        EXPECT_EQ(value.value("orgUnit", Json()), ou_codes.at(rows[i].org_unit));
      }
      EXPECT_EQ(value.contains("attributeOptionCombo"), !shared_aoc) << value.dump();
    }
  }
}

}  // namespace
}  // namespace dvexport::testing
