// Paging through DHIS2 2.43's order on the demo in 2.43's schema (DVEXPORT_TEST_PG_243): pages of
// N values by limit and offset, concatenated, are the whole export in the same order (no value
// twice, none missing), which is also DHIS2's query's order with dvexport's tie-break; limit=0,
// an offset past the end and a negative offset (its absolute value, as DHIS2 takes it).

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/integration/dhis2_243_query.h"
#include "tests/integration/dhis2_243_support.h"

namespace dvexport::testing {
namespace {

using v1::EXPORT_ORDER_DE;
using v1::EXPORT_ORDER_OU;

// Every value of the small demo's window, deleted ones included.
Dhis2Request WholeDemo() {
  Dhis2Request request;
  request.data_sets = {"QfF9ZANatcj", "av9SOZj6FcK", "IF4YaBzxNHa", "Se00xj4OCO2", "JurnHCkmDCn"};
  request.data_element_groups = {"u52faNiLSwY"};
  request.org_units = {"ImspTQPwCqd", "EqZQbZsbFhc"};
  request.children = true;
  request.start_date = "2000-01-01";
  request.end_date = "2030-12-31";
  request.include_deleted = true;
  return request;
}

using ValueKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;

ValueKey KeyOf(const ExportRow& row) {
  return {row.data_element, row.period, row.org_unit, row.category_option_combo,
          row.attribute_option_combo};
}

class Dhis2243PagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conninfo_ = Conninfo243();
    if (conninfo_.empty()) {
      GTEST_SKIP() << "DVEXPORT_TEST_PG_243 is not set: the demo in DHIS2 2.43's schema is "
                      "needed (scripts/test, or `source /work/dev/env`)";
    }
    server_ = std::make_unique<Server243>(conninfo_);
  }

  std::vector<ExportRow> StreamOrFail(const Dhis2Request& request) {
    absl::StatusOr<std::vector<ExportRow>> rows = server_->Stream(ToExportRequest(request));
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *rows : std::vector<ExportRow>();
  }

  // Pages of "size" over "request" until a short page, concatenated.
  std::vector<ExportRow> Paged(Dhis2Request request, int size) {
    std::vector<ExportRow> all;
    request.limit = size;
    for (int offset = 0;; offset += size) {
      request.offset = offset;
      const std::vector<ExportRow> page = StreamOrFail(request);
      EXPECT_LE(page.size(), static_cast<size_t>(size));
      all.insert(all.end(), page.begin(), page.end());
      if (page.size() < static_cast<size_t>(size) || offset > 1000000) break;
    }
    return all;
  }

  void ExpectPagesAreTheWhole(const Dhis2Request& request, int size) {
    const std::vector<ExportRow> whole = StreamOrFail(request);
    ASSERT_GT(whole.size(), static_cast<size_t>(3 * size)) << "too few values to page";
    const std::vector<ExportRow> paged = Paged(request, size);
    std::set<ValueKey> keys;
    for (const ExportRow& row : paged) {
      EXPECT_TRUE(keys.insert(KeyOf(row)).second) << "twice: " << Describe(row);
    }
    ExpectSameSequence(paged, whole, absl::StrCat("pages of ", size, " against the whole"));
    // And the whole is DHIS2's order with the value's key as tie-break.
    ExpectSameSequence(whole,
                       FollowupNullAsFalse(QueryDhis2Rows(conninfo_, Dhis2Sql(request, true))),
                       "the whole against DHIS2's query with the tie-break");
  }

  std::string conninfo_;
  std::unique_ptr<Server243> server_;
};

TEST_F(Dhis2243PagingTest, PagesByOuDeAreTheWholeExport) {
  Dhis2Request request = WholeDemo();
  request.order = {EXPORT_ORDER_OU, EXPORT_ORDER_DE};
  ExpectPagesAreTheWhole(request, 997);
}

TEST_F(Dhis2243PagingTest, PagesByDefaultOrderAreTheWholeExport) {
  ExpectPagesAreTheWhole(WholeDemo(), 1500);
}

// Small pages over a slice with many ties under OU,DE (one unit's values of one data set).
TEST_F(Dhis2243PagingTest, SmallPagesAcrossTiesAreTheWholeExport) {
  Dhis2Request request = WholeDemo();
  request.data_sets = {"JurnHCkmDCn"};
  request.data_element_groups.clear();
  request.org_units = {"Lo1Dv9LY5Jd"};
  request.children = false;
  request.order = {EXPORT_ORDER_OU, EXPORT_ORDER_DE};
  ExpectPagesAreTheWhole(request, 3);
}

TEST_F(Dhis2243PagingTest, LimitZeroIsEmpty) {
  Dhis2Request request = WholeDemo();
  request.limit = 0;
  absl::StatusOr<std::vector<ExportRow>> rows = server_->Stream(ToExportRequest(request));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_TRUE(rows->empty()) << rows->size() << " values";
  request.offset = 5;
  rows = server_->Stream(ToExportRequest(request));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_TRUE(rows->empty()) << rows->size() << " values";
  // The JSON document of DHIS2's empty export.
  absl::StatusOr<std::string> file = server_->ExportFile(ToExportRequest(request), v1::FORMAT_JSON);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(*file, R"({"dataValues":[]})");
}

TEST_F(Dhis2243PagingTest, OffsetPastTheEndIsEmpty) {
  Dhis2Request request = WholeDemo();
  const size_t total = StreamOrFail(request).size();
  ASSERT_GT(total, 0u);
  for (const std::optional<int> limit : {std::optional<int>(), std::optional<int>(10)}) {
    SCOPED_TRACE(limit ? "with a limit" : "without a limit");
    request.limit = limit;
    request.offset = static_cast<int>(total);
    EXPECT_TRUE(StreamOrFail(request).empty());
    request.offset = static_cast<int>(total) + 1000;
    EXPECT_TRUE(StreamOrFail(request).empty());
    // One before the end: the last value.
    request.offset = static_cast<int>(total) - 1;
    EXPECT_EQ(StreamOrFail(request).size(), 1u);
  }
}

TEST_F(Dhis2243PagingTest, NegativeOffsetIsItsAbsoluteValue) {
  Dhis2Request request = WholeDemo();
  request.order = {EXPORT_ORDER_OU, EXPORT_ORDER_DE};
  request.limit = 25;
  request.offset = 123;
  const std::vector<ExportRow> positive = StreamOrFail(request);
  ASSERT_EQ(positive.size(), 25u);
  request.offset = -123;
  ExpectSameSequence(StreamOrFail(request), positive, "offset -123 against offset 123");
  // Negative limits are refused before (E2009), as in DHIS2: not a page.
  request.limit = -25;
  absl::StatusOr<std::vector<ExportRow>> refused = server_->Stream(ToExportRequest(request));
  EXPECT_FALSE(refused.ok());
}

}  // namespace
}  // namespace dvexport::testing
