#include "service/dhis2/export_request_validator.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_error.h"

namespace dvexport::dhis2 {
namespace {

using dvexport::v1::ExportRequest;

constexpr char kDataSet[] = "pBOMPrpg1QX";
constexpr char kDataSet2[] = "QX4ZTUbOt3a";
constexpr char kDataElement[] = "fbfJHSPpUQD";
constexpr char kDataElement2[] = "cYeuwXTCPkU";
constexpr char kOrgUnit[] = "DiszpKrYNg8";
constexpr char kOrgUnit2[] = "ImspTQPwCqd";
constexpr char kUidRule[] = " is not a valid UID (11 characters, a letter then letters or digits)";

// One data set, one period, one org unit: valid.
ExportRequest ValidRequest() {
  ExportRequest request;
  request.add_data_set(kDataSet);
  request.add_period("202401");
  request.add_org_unit(kOrgUnit);
  return request;
}

std::string ErrorMessage(const ExportRequest& request) {
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  EXPECT_FALSE(params.ok());
  EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(params.status().message());
}

TEST(ExportRequestValidatorTest, AcceptsValidRequest) {
  ExportRequest request = ValidRequest();
  request.set_children(true);
  request.set_include_deleted(true);
  request.set_limit(10);
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->data_sets.values, std::vector<std::string>{kDataSet});
  EXPECT_TRUE(params->data_elements.empty());
  EXPECT_EQ(params->org_units.values, std::vector<std::string>{kOrgUnit});
  ASSERT_EQ(params->periods.size(), 1u);
  EXPECT_EQ(params->periods[0].type, PeriodType::kMonthly);
  EXPECT_EQ(FormatDate(params->periods[0].start), "2024-01-01");
  EXPECT_EQ(FormatDate(params->periods[0].end), "2024-01-31");
  EXPECT_FALSE(params->start_date.has_value());
  EXPECT_FALSE(params->end_date.has_value());
  EXPECT_TRUE(params->children);
  EXPECT_TRUE(params->include_deleted);
  EXPECT_EQ(params->limit, 10);
}

TEST(ExportRequestValidatorTest, LeavesUnsetOptionsUnset) {
  absl::StatusOr<ExportParams> params = ValidateExportRequest(ValidRequest());
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_FALSE(params->children);
  EXPECT_FALSE(params->include_deleted);
  EXPECT_FALSE(params->limit.has_value());
}

TEST(ExportRequestValidatorTest, AcceptsZeroLimit) {
  ExportRequest request = ValidRequest();
  request.set_limit(0);
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->limit, 0);
}

TEST(ExportRequestValidatorTest, AcceptsDataElementsWithoutDataSets) {
  ExportRequest request;
  request.add_data_element(kDataElement);
  request.add_period("2024Q1");
  request.add_org_unit(kOrgUnit);
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->data_elements.values, std::vector<std::string>{kDataElement});
}

TEST(ExportRequestValidatorTest, AcceptsStartAndEndDatesInAnyDhis2Form) {
  ExportRequest request = ValidRequest();
  request.clear_period();
  request.set_start_date("20240101");
  request.set_end_date("2024-06");
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_TRUE(params->periods.empty());
  ASSERT_TRUE(params->start_date.has_value());
  ASSERT_TRUE(params->end_date.has_value());
  EXPECT_EQ(FormatDate(*params->start_date), "2024-01-01");
  EXPECT_EQ(FormatDate(*params->end_date), "2024-06-01");
}

TEST(ExportRequestValidatorTest, AcceptsEqualStartAndEndDates) {
  ExportRequest request = ValidRequest();
  request.clear_period();
  request.set_start_date("2024-01-31");
  request.set_end_date("2024-01-31");
  EXPECT_TRUE(ValidateExportRequest(request).ok());
}

TEST(ExportRequestValidatorTest, RemovesDuplicatesKeepingFirstSeenOrder) {
  ExportRequest request;
  for (const char* uid : {kDataSet2, kDataSet, kDataSet2}) request.add_data_set(uid);
  for (const char* uid : {kDataElement, kDataElement2, kDataElement}) request.add_data_element(uid);
  for (const char* uid : {kOrgUnit2, kOrgUnit2, kOrgUnit}) request.add_org_unit(uid);
  for (const char* iso : {"20240105", "202401", "2024-01-05", "2024-01", "2024W1"}) {
    request.add_period(iso);
  }
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->data_sets.values, (std::vector<std::string>{kDataSet2, kDataSet}));
  EXPECT_EQ(params->data_elements.values, (std::vector<std::string>{kDataElement, kDataElement2}));
  EXPECT_EQ(params->org_units.values, (std::vector<std::string>{kOrgUnit2, kOrgUnit}));
  ASSERT_EQ(params->periods.size(), 3u);
  EXPECT_EQ(params->periods[0].type, PeriodType::kDaily);
  EXPECT_EQ(params->periods[1].type, PeriodType::kMonthly);
  EXPECT_EQ(params->periods[2].type, PeriodType::kWeekly);
}

TEST(ExportRequestValidatorTest, NamesFieldAndValueOfMalformedIdentifiers) {
  ExportRequest request = ValidRequest();
  request.add_data_set("abc");
  EXPECT_EQ(ErrorMessage(request), std::string("data_set: \"abc\"") + kUidRule);

  request = ValidRequest();
  request.add_data_element("");
  EXPECT_EQ(ErrorMessage(request), std::string("data_element: \"\"") + kUidRule);

  request = ValidRequest();
  request.add_org_unit("DiszpKrYNg8 ");
  EXPECT_EQ(ErrorMessage(request), std::string("org_unit: \"DiszpKrYNg8 \"") + kUidRule);

  request = ValidRequest();
  request.add_data_set("1iszpKrYNg8");
  EXPECT_EQ(ErrorMessage(request), std::string("data_set: \"1iszpKrYNg8\"") + kUidRule);
}

TEST(ExportRequestValidatorTest, NamesFieldAndValueOfMalformedPeriodsAndDates) {
  ExportRequest request = ValidRequest();
  request.add_period("2024X1");
  EXPECT_EQ(ErrorMessage(request), "period: \"2024X1\" is not a valid ISO period");

  request = ValidRequest();
  request.add_period("2024W54");
  EXPECT_EQ(ErrorMessage(request), "period: \"2024W54\" is not a valid ISO period");

  request = ValidRequest();
  request.add_period("");
  EXPECT_EQ(ErrorMessage(request), "period: \"\" is not a valid ISO period");

  request = ValidRequest();
  request.clear_period();
  request.set_start_date("2024-13-01");
  request.set_end_date("2024-12-31");
  EXPECT_EQ(ErrorMessage(request), "start_date: \"2024-13-01\" is not a valid date (yyyy-MM-dd)");

  request.set_start_date("2024-01-01");
  request.set_end_date("2023-02-29");
  EXPECT_EQ(ErrorMessage(request), "end_date: \"2023-02-29\" is not a valid date (yyyy-MM-dd)");
}

TEST(ExportRequestValidatorTest, NamesFieldOfYearZeroPeriodsAndDates) {
  ExportRequest request = ValidRequest();
  request.add_period("0000W1");
  EXPECT_EQ(ErrorMessage(request),
            "period: \"0000W1\" is not a valid ISO period: it runs from 0000-01-03 to "
            "0000-01-09, and periods must lie within the years 1 to 9999");

  request = ValidRequest();
  request.clear_period();
  request.set_start_date("0000-01-01");
  request.set_end_date("2024-12-31");
  EXPECT_EQ(ErrorMessage(request),
            "start_date: \"0000-01-01\" is not a valid date: years run from 1 to 9999");

  request.set_start_date("0001-01-01");
  request.set_end_date("0000");
  EXPECT_EQ(ErrorMessage(request),
            "end_date: \"0000\" is not a valid date: years run from 1 to 9999");

  request = ValidRequest();
  request.clear_period();
  request.set_last_updated("0000-06-01T00:00:00Z");
  EXPECT_EQ(ErrorMessage(request),
            "last_updated: \"0000-06-01T00:00:00Z\" is not a valid date: years run from 1 to "
            "9999");
}

TEST(ExportRequestValidatorTest, RequiresStartAndEndDateTogether) {
  ExportRequest request = ValidRequest();
  request.clear_period();
  request.set_start_date("2024-01-01");
  EXPECT_EQ(ErrorMessage(request), "start_date and end_date must be given together");

  request.clear_start_date();
  request.set_end_date("2024-01-01");
  EXPECT_EQ(ErrorMessage(request), "start_date and end_date must be given together");
}

TEST(ExportRequestValidatorTest, QuotesValuesEscapedAndShortened) {
  ExportRequest request = ValidRequest();
  request.add_period("20\"24\n");
  EXPECT_EQ(ErrorMessage(request), "period: \"20\\\"24\\n\" is not a valid ISO period");

  request = ValidRequest();
  request.add_data_element(std::string(100000, 'a'));
  EXPECT_EQ(ErrorMessage(request),
            "data_element: \"" + std::string(64, 'a') + "...\" (100000 bytes)" + kUidRule);
}

TEST(ExportRequestValidatorTest, ReportsMalformedValuesBeforeDhis2Rules) {
  // No data set or data element (E2001) and no org unit (E2006) as well.
  ExportRequest request;
  request.add_period("2024X1");
  EXPECT_EQ(ErrorMessage(request), "period: \"2024X1\" is not a valid ISO period");

  // Periods and dates (E2003) with a malformed end date.
  request = ValidRequest();
  request.set_start_date("2024-01-01");
  request.set_end_date("2024-02-30");
  EXPECT_EQ(ErrorMessage(request), "end_date: \"2024-02-30\" is not a valid date (yyyy-MM-dd)");

  // Negative limit (E2009) with a malformed org unit.
  request = ValidRequest();
  request.set_limit(-1);
  request.add_org_unit("x");
  EXPECT_EQ(ErrorMessage(request), std::string("org_unit: \"x\"") + kUidRule);
}

TEST(ExportRequestValidatorTest, ReportsMalformedFieldsInProtoOrder) {
  ExportRequest request;
  request.add_org_unit("bad-org-unit");
  request.set_start_date("bad-date");
  request.add_period("bad-period");
  request.add_data_element("bad-element");
  request.add_data_set("bad-set");
  EXPECT_EQ(ErrorMessage(request), std::string("data_set: \"bad-set\"") + kUidRule);
  request.clear_data_set();
  EXPECT_EQ(ErrorMessage(request), std::string("data_element: \"bad-element\"") + kUidRule);
  request.clear_data_element();
  EXPECT_EQ(ErrorMessage(request), "period: \"bad-period\" is not a valid ISO period");
  request.clear_period();
  EXPECT_EQ(ErrorMessage(request), "start_date: \"bad-date\" is not a valid date (yyyy-MM-dd)");
  request.set_start_date("2024-01-01");
  EXPECT_EQ(ErrorMessage(request), "start_date and end_date must be given together");
  request.set_end_date("2024-01-31");
  EXPECT_EQ(ErrorMessage(request), std::string("org_unit: \"bad-org-unit\"") + kUidRule);
}

TEST(ExportRequestValidatorTest, ReportsEachDhis2RuleWithItsMessage) {
  ExportRequest request = ValidRequest();
  request.clear_data_set();
  EXPECT_EQ(ErrorMessage(request),
            "E2001: At least one data element, data set or data element group must be specified");

  request = ValidRequest();
  request.clear_period();
  EXPECT_EQ(ErrorMessage(request),
            "E2002: At least one period, start/end dates, last updated or last updated duration "
            "must be specified");

  request = ValidRequest();
  request.set_start_date("2024-01-01");
  request.set_end_date("2024-01-31");
  EXPECT_EQ(ErrorMessage(request), "E2003: Both periods and start/end date cannot be specified");

  request = ValidRequest();
  request.clear_period();
  request.set_start_date("2024-02-01");
  request.set_end_date("2024-01-31");
  EXPECT_EQ(ErrorMessage(request), "E2004: Start date must be before end date");

  request = ValidRequest();
  request.clear_org_unit();
  EXPECT_EQ(ErrorMessage(request),
            "E2006: At least one organisation unit or organisation unit group must be specified");

  request = ValidRequest();
  request.set_limit(-1);
  EXPECT_EQ(ErrorMessage(request), "E2009: Limit cannot be less than zero: `-1`");
}

// Java's MessageFormat writes a number argument with grouping separators.
TEST(ExportRequestValidatorTest, FormatsNegativeLimitAsDhis2Does) {
  ExportRequest request = ValidRequest();
  request.set_limit(-999);
  EXPECT_EQ(ErrorMessage(request), "E2009: Limit cannot be less than zero: `-999`");
  request.set_limit(-1000);
  EXPECT_EQ(ErrorMessage(request), "E2009: Limit cannot be less than zero: `-1,000`");
  request.set_limit(std::numeric_limits<int32_t>::min());
  EXPECT_EQ(ErrorMessage(request), "E2009: Limit cannot be less than zero: `-2,147,483,648`");
}

// With org units as the only org unit filter, E2008 (children without org
// units) is always preceded by E2006, as in DHIS2's order.
TEST(ExportRequestValidatorTest, ChildrenWithoutOrgUnitsReportsE2006) {
  ExportRequest request = ValidRequest();
  request.clear_org_unit();
  request.set_children(true);
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2006));
}

TEST(ExportRequestValidatorTest, ReportsFirstFailingRuleInDhis2Order) {
  // Fails E2001, E2003, E2004, E2006 and E2009 at once.
  ExportRequest request;
  request.add_period("202401");
  request.set_start_date("2024-02-01");
  request.set_end_date("2024-01-01");
  request.set_children(true);
  request.set_limit(-5);
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2001));

  request.add_data_set(kDataSet);
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2003));

  request.clear_period();
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2004));

  request.set_end_date("2024-02-01");
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2006));

  request.add_org_unit(kOrgUnit);
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2009, "-5"));

  request.clear_limit();
  EXPECT_TRUE(ValidateExportRequest(request).ok());

  // No period and no dates: E2002 comes before E2006.
  request.clear_start_date();
  request.clear_end_date();
  request.clear_org_unit();
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2002));
}

std::string LastRuleMessage(const ExportRequest& request) {
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request, RuleOrder::kLastFailure);
  EXPECT_FALSE(params.ok());
  EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(params.status().message());
}

// DHIS2's validate(): each failing check overwrites the previous one.
TEST(ExportRequestValidatorTest, ReportsLastFailingRuleWhenAskedAsDhis2Does) {
  // GET /api/dataValueSets without parameters: E2006, not E2001 (DHIS2's ApiTokenAuthTest).
  EXPECT_EQ(LastRuleMessage(ExportRequest()), ExportErrorMessage(ExportError::kE2006));
  EXPECT_EQ(ErrorMessage(ExportRequest()), ExportErrorMessage(ExportError::kE2001));

  // Fails E2001, E2003, E2004, E2006 and E2009 at once: the last one wins.
  ExportRequest request;
  request.add_period("202401");
  request.set_start_date("2024-02-01");
  request.set_end_date("2024-01-01");
  request.set_limit(-5);
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2009, "-5"));
  request.clear_limit();
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2006));
  request.add_org_unit(kOrgUnit);
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2004));
  request.set_end_date("2024-02-01");
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2003));
  request.clear_period();
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2001));
  request.add_data_set(kDataSet);
  EXPECT_TRUE(ValidateExportRequest(request, RuleOrder::kLastFailure).ok());

  // E2005 after E2002 and E2001.
  request = ExportRequest();
  request.add_org_unit(kOrgUnit);
  request.set_last_updated_duration("2w");
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2005, "2w"));
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2001));
}

// E2008 (children without org units), unreachable in first-failure order, overwrites E2006 and
// E2007 as in DHIS2.
TEST(ExportRequestValidatorTest, LastFailureReachesE2008) {
  ExportRequest request = ValidRequest();
  request.clear_org_unit();
  request.set_children(true);
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2008));
  request.add_org_unit_group("CXw2yu5fodb");
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2007));
  EXPECT_EQ(LastRuleMessage(request), ExportErrorMessage(ExportError::kE2008));
}

// Malformed values come before any rule, whatever the order.
TEST(ExportRequestValidatorTest, LastFailureStillReportsMalformedValuesFirst) {
  ExportRequest request;
  request.set_limit(-1);
  request.add_org_unit("not-a-uid");
  EXPECT_EQ(LastRuleMessage(request), std::string("org_unit: \"not-a-uid\"") + kUidRule);
  request = ExportRequest();
  request.add_period("2024X1");
  EXPECT_EQ(LastRuleMessage(request), "period: \"2024X1\" is not a valid ISO period");
}

TEST(ExportParamsTest, SingleDataValueSetNeedsOneDataSetPeriodAndOrgUnit) {
  absl::StatusOr<ExportParams> params = ValidateExportRequest(ValidRequest());
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_TRUE(params->IsSingleDataValueSet());

  // Duplicates collapse to one, and data elements may be added.
  ExportRequest request = ValidRequest();
  request.add_data_set(kDataSet);
  request.add_period("2024-01");
  request.add_org_unit(kOrgUnit);
  request.add_data_element(kDataElement);
  params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_TRUE(params->IsSingleDataValueSet());

  request = ValidRequest();
  request.add_data_set(kDataSet2);
  EXPECT_FALSE(ValidateExportRequest(request)->IsSingleDataValueSet());

  request = ValidRequest();
  request.add_period("202402");
  EXPECT_FALSE(ValidateExportRequest(request)->IsSingleDataValueSet());

  request = ValidRequest();
  request.add_org_unit(kOrgUnit2);
  EXPECT_FALSE(ValidateExportRequest(request)->IsSingleDataValueSet());

  request = ValidRequest();
  request.clear_data_set();
  request.add_data_element(kDataElement);
  EXPECT_FALSE(ValidateExportRequest(request)->IsSingleDataValueSet());

  request = ValidRequest();
  request.clear_period();
  request.set_start_date("2024-01-01");
  request.set_end_date("2024-01-31");
  EXPECT_FALSE(ValidateExportRequest(request)->IsSingleDataValueSet());
}

TEST(ExportErrorTest, TableHoldsDhis2CodesAndMessagesVerbatim) {
  struct Expected {
    ExportError error;
    const char* message;
    absl::StatusCode code;
  };
  const Expected expected[] = {
      {ExportError::kE2000, "E2000: Query parameters cannot be null",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2001,
       "E2001: At least one data element, data set or data element group must be specified",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2002,
       "E2002: At least one period, start/end dates, last updated or last updated duration must "
       "be specified",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2003, "E2003: Both periods and start/end date cannot be specified",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2004, "E2004: Start date must be before end date",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2005, "E2005: Duration is not valid: `x`",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2006,
       "E2006: At least one organisation unit or organisation unit group must be specified",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2007,
       "E2007: Organisation unit children cannot be included for organisation unit groups",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2008,
       "E2008: At least one organisation unit must be specified when children are included",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2009, "E2009: Limit cannot be less than zero: `x`",
       absl::StatusCode::kInvalidArgument},
      {ExportError::kE2010, "E2010: User is not allowed to read data for data set: `x`",
       absl::StatusCode::kPermissionDenied},
      {ExportError::kE2011,
       "E2011: User is not allowed to read data for attribute option combo: `x`",
       absl::StatusCode::kPermissionDenied},
      {ExportError::kE2012, "E2012: User is not allowed to view org unit: `x`",
       absl::StatusCode::kPermissionDenied},
  };
  ASSERT_EQ(kExportErrors.size(), std::size(expected));
  for (std::size_t i = 0; i < kExportErrors.size(); ++i) {
    EXPECT_EQ(kExportErrors[i].error, expected[i].error) << i;
    EXPECT_EQ(ExportErrorMessage(expected[i].error, "x"), expected[i].message);
    const absl::Status status = ExportErrorStatus(expected[i].error, "x");
    EXPECT_EQ(status.code(), expected[i].code) << expected[i].message;
    EXPECT_EQ(status.message(), expected[i].message);
  }
}

}  // namespace
}  // namespace dvexport::dhis2

namespace dvexport::dhis2 {
namespace {

TEST(ExportRequestValidatorSchemesTest, InputSchemesFollowDhis2Precedence) {
  ExportRequest request;
  request.set_input_id_scheme("CODE");
  request.set_input_org_unit_id_scheme("NAME");
  request.set_input_data_element_id_scheme("ATTRIBUTE:AttrExtId01");
  request.add_data_set("DS_1");
  request.add_data_element("EXT-1");
  request.add_data_element_group("DEG_1");
  request.add_org_unit("Clinic, \"North\"");
  request.add_org_unit_group("OUG_1");
  request.add_attribute_option_combo("AOC_1");
  request.add_period("202401");
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->data_sets.scheme.property, IdScheme::Property::kCode);
  EXPECT_EQ(params->data_element_groups.scheme.property, IdScheme::Property::kCode);
  EXPECT_EQ(params->data_elements.scheme.property, IdScheme::Property::kAttribute);
  EXPECT_EQ(params->data_elements.scheme.attribute, "AttrExtId01");
  EXPECT_EQ(params->org_units.scheme.property, IdScheme::Property::kName);
  // Org unit groups and attribute option combos only follow input_id_scheme.
  EXPECT_EQ(params->org_unit_groups.scheme.property, IdScheme::Property::kCode);
  EXPECT_EQ(params->attribute_option_combos.scheme.property, IdScheme::Property::kCode);
  EXPECT_EQ(params->org_units.values, std::vector<std::string>{"Clinic, \"North\""});

  request.clear_input_id_scheme();
  request.clear_org_unit_group();
  request.add_org_unit_group("OUG_1");
  params = ValidateExportRequest(request);
  EXPECT_EQ(params.status().message(),
            "data_set: \"DS_1\" is not a valid UID (11 characters, a letter then letters or "
            "digits)");
}

TEST(ExportRequestValidatorSchemesTest, OutputSchemesFollowDhis2Precedence) {
  ExportRequest request = ValidRequest();
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->output.data_element, IdScheme::Uid());
  EXPECT_EQ(params->output.data_set, IdScheme::Uid());

  request.set_id_scheme("NAME");
  request.set_org_unit_id_scheme("code");
  request.set_attribute_option_combo_id_scheme("ATTRIBUTE:AttrExtId01");
  params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->output.data_element.property, IdScheme::Property::kName);
  EXPECT_EQ(params->output.category_option_combo.property, IdScheme::Property::kName);
  EXPECT_EQ(params->output.data_set.property, IdScheme::Property::kName);
  EXPECT_EQ(params->output.org_unit.property, IdScheme::Property::kCode);
  EXPECT_EQ(params->output.attribute_option_combo.property, IdScheme::Property::kAttribute);
}

TEST(ExportRequestValidatorSchemesTest, RejectsUnusableIdentifiersUnderAnyScheme) {
  ExportRequest request = ValidRequest();
  request.set_input_id_scheme("CODE");
  request.clear_org_unit();
  request.add_org_unit(std::string("OU\0X", 4));
  EXPECT_EQ(ErrorMessage(request),
            "org_unit: \"OU\\x00X\" is not a valid CODE identifier (not empty, UTF-8, no NUL "
            "character)");
  request.set_org_unit(0, "\xC3(");
  EXPECT_EQ(ErrorMessage(request),
            "org_unit: \"\\xc3(\" is not a valid CODE identifier (not empty, UTF-8, no NUL "
            "character)");
  request.set_org_unit(0, "");
  EXPECT_EQ(ErrorMessage(request),
            "org_unit: \"\" is not a valid CODE identifier (not empty, UTF-8, no NUL character)");
  request.set_org_unit(0, "Ça va \xF0\x9F\x98\x80");
  EXPECT_TRUE(ValidateExportRequest(request).ok());
}

TEST(ExportRequestValidatorSchemesTest, LastUpdatedAndDuration) {
  ExportRequest request = ValidRequest();
  request.clear_period();
  request.set_last_updated("2024-03-01T11:00:00.1239+01:00");
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  // 2024-03-01T10:00:00.123Z
  EXPECT_EQ(*params->last_updated_micros, 1709287200123000);

  request.clear_last_updated();
  for (const auto& [text, micros] : std::vector<std::pair<std::string, int64_t>>{
           {"0s", 0},
           {"90s", 90000000},
           {"15m", 900000000},
           {"2h", 7200000000},
           {"1d", 86400000000},
           {"99999999999999999d", std::numeric_limits<int64_t>::max()}}) {
    request.set_last_updated_duration(text);
    params = ValidateExportRequest(request);
    ASSERT_TRUE(params.ok()) << text << ": " << params.status();
    EXPECT_EQ(*params->last_updated_duration_micros, micros) << text;
  }
  for (const char* text : {"1w", "d", "-1d", "1.5h", "1D", " 1d", "1d ", "99999999999999999999d"}) {
    request.set_last_updated_duration(text);
    EXPECT_EQ(ErrorMessage(request).substr(0, 30), "E2005: Duration is not valid: ") << text;
  }
  request.set_last_updated_duration("1w");
  EXPECT_EQ(ErrorMessage(request), "E2005: Duration is not valid: `1w`");
}

TEST(ExportRequestValidatorSchemesTest, OrgUnitGroupRules) {
  ExportRequest request = ValidRequest();
  request.clear_org_unit();
  request.add_org_unit_group("ougGroup001");
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_FALSE(params->IsSingleDataValueSet());
  request.set_children(true);
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2007));
  request.add_org_unit(kOrgUnit);
  EXPECT_EQ(ErrorMessage(request), ExportErrorMessage(ExportError::kE2007));
}

TEST(ExportRequestValidatorSchemesTest, DataElementGroupSatisfiesE2001AndDropsHeader) {
  ExportRequest request = ValidRequest();
  request.clear_data_set();
  request.add_data_element_group("degGroup001");
  EXPECT_TRUE(ValidateExportRequest(request).ok());
  request.add_data_set(kDataSet);
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok());
  EXPECT_FALSE(params->IsSingleDataValueSet());
}

TEST(ExportRequestValidatorSchemesTest, AttributeComboNeedsOptions) {
  ExportRequest request = ValidRequest();
  request.set_attribute_combo("ccFunding01");
  EXPECT_EQ(ErrorMessage(request),
            "E2040: Both category combination and category options must be specified");
  request.add_attribute_options("coPartnerA1");
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->attribute_combo, "ccFunding01");
  EXPECT_EQ(params->attribute_options, std::vector<std::string>{"coPartnerA1"});
  // An explicit attribute option combo wins, as in DHIS2.
  request.add_attribute_option_combo("aocAP1x0022");
  params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok());
  EXPECT_TRUE(params->attribute_combo.empty());
  request.set_attribute_combo("bad");
  EXPECT_EQ(ErrorMessage(request),
            "attribute_combo: \"bad\" is not a valid UID (11 characters, a letter then letters "
            "or digits)");
}

TEST(ExportRequestValidatorTest, DecodesChangesSince) {
  ChangeToken token;
  token.system_identifier = 42;
  token.database_oid = 16384;
  token.database_name_hash = DatabaseNameHash("dhis2");
  token.xmin = 1000;
  token.wal_lsn = 5000;
  ExportRequest request = ValidRequest();
  request.set_changes_since(EncodeChangeToken(token));
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  ASSERT_TRUE(params->changes_since.has_value());
  EXPECT_EQ(*params->changes_since, token);
  EXPECT_FALSE(ValidateExportRequest(ValidRequest())->changes_since.has_value());
}

TEST(ExportRequestValidatorTest, RefusesMalformedChangesSince) {
  ExportRequest request = ValidRequest();
  request.set_changes_since("2024-01-01");
  EXPECT_EQ(ErrorMessage(request),
            "changes_since: not a change token of dvexport (10 characters, not 52); pass the "
            "change_token of an earlier export unchanged");
}

TEST(ExportRequestValidatorTest, RefusesChangesSinceWithLimit) {
  ExportRequest request = ValidRequest();
  request.set_changes_since(EncodeChangeToken(ChangeToken{1, 2, 3, 4, 5}));
  request.set_limit(10);
  EXPECT_EQ(ErrorMessage(request),
            "changes_since: cannot be combined with limit (a limited export is incomplete, so "
            "the next token would skip what it left out)");
}

TEST(ExportRequestValidatorTest, StartChangeStreamNeedsACompleteFirstExport) {
  ExportRequest request = ValidRequest();
  request.set_start_change_stream(true);
  absl::StatusOr<ExportParams> params = ValidateExportRequest(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_TRUE(params->start_change_stream);
  EXPECT_FALSE(ValidateExportRequest(ValidRequest())->start_change_stream);

  request.set_limit(10);
  EXPECT_EQ(ErrorMessage(request),
            "start_change_stream: cannot be combined with limit (a stream starts with a "
            "complete export)");
  request.clear_limit();
  request.set_changes_since(EncodeChangeToken(ChangeToken{1, 2, 3, 4, 5}));
  EXPECT_EQ(ErrorMessage(request),
            "start_change_stream: cannot be combined with changes_since (a delta continues the "
            "stream or snapshot its token names; a new stream starts with a full export)");
}

}  // namespace
}  // namespace dvexport::dhis2
