// DHIS2 2.43's request decoding and validation (ValidateExportRequest with dhis2 43), and the
// refusal of 2.43's parameters on earlier versions. Cases follow dhis2-core's own tests at 2.43.1
// and the 2.43 branch (DataExportServiceExportTest, DefaultDataExportServiceTest,
// DataValueSetControllerTest, UIDBindingTest) where they exist.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "service/dhis2/export_error.h"
#include "service/dhis2/export_request_validator.h"

namespace dvexport::dhis2 {
namespace {

using dvexport::v1::ExportRequest;

constexpr char kDataSet[] = "pBOMPrpg1QX";
constexpr char kOrgUnit[] = "DiszpKrYNg8";
constexpr char kOrgUnitGroup[] = "CXw2yu5fodb";
constexpr char kAttributeCombo[] = "bjDvmb4bfuf";
constexpr char kAttributeOption[] = "xYerKDKCefk";
constexpr char kUidText[] =
    "UID must be an alphanumeric string of 11 characters starting with a letter, but was: ";

// One data set, one period, one org unit: valid.
ExportRequest ValidRequest() {
  ExportRequest request;
  request.add_data_set(kDataSet);
  request.add_period("202201");
  request.add_org_unit(kOrgUnit);
  return request;
}

absl::StatusOr<ExportParams> Validate43(const ExportRequest& request) {
  return ValidateExportRequest(request, RuleOrder::kFirstFailure, 43);
}

absl::Status Refusal(const ExportRequest& request) {
  absl::StatusOr<ExportParams> params = Validate43(request);
  EXPECT_FALSE(params.ok());
  return params.ok() ? absl::OkStatus() : params.status();
}

// The status's message, after checking it is InvalidArgument.
std::string Message(const ExportRequest& request) {
  const absl::Status status = Refusal(request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

// The HTTP status and text DHIS2 2.43 answers with (no payload: {0, ""}).
std::pair<int, std::string> HttpRefusal(const ExportRequest& request) {
  const std::optional<Dhis2HttpRefusal> refusal = Dhis2HttpRefusalOf(Refusal(request));
  if (!refusal) return {0, ""};
  return {refusal->http_status, refusal->message};
}

TEST(ExportRequestValidator243Test, AcceptsValidRequestWith243Defaults) {
  absl::StatusOr<ExportParams> params = Validate43(ValidRequest());
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->dhis2, 43);
  EXPECT_TRUE(params->last_updated_date_only);
  EXPECT_EQ(params->order,
            (std::vector<OrderKey>{OrderKey::kPe, OrderKey::kCreated, OrderKey::kDe}));
  EXPECT_FALSE(params->offset.has_value());
  EXPECT_FALSE(params->level.has_value());
  EXPECT_FALSE(params->input_use_code_fallback);
  EXPECT_EQ(params->period_texts, 1u);
  ASSERT_EQ(params->periods.size(), 1u);
  EXPECT_EQ(params->periods[0].type, PeriodType::kMonthly);
}

TEST(ExportRequestValidator243Test, KeepsWellFormedUnknownIds) {
  ExportRequest request = ValidRequest();
  request.set_org_unit(0, "ou123456789");  // DataValueSetControllerTest's unknown org unit
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->org_units.values, std::vector<std::string>{"ou123456789"});
}

TEST(ExportRequestValidator243Test, RefusesMalformedUidWith243Text) {
  ExportRequest request = ValidRequest();
  request.add_data_set("abc");
  EXPECT_EQ(Message(request), std::string("data_set: ") + kUidText + "abc");
  EXPECT_EQ(HttpRefusal(request), std::make_pair(400, std::string(kUidText) + "abc"));
}

TEST(ExportRequestValidator243Test, DecodesFieldsIn243Order) {
  ExportRequest request = ValidRequest();
  request.add_period("2024X1");
  request.add_attribute_option_combo("aoc");
  request.add_category_option_combo("coc");
  request.add_org_unit_group("oug");
  request.add_org_unit("ou");
  request.add_data_element("de");
  request.add_data_element_group("deg");
  request.add_data_set("ds");
  const char* expected[] = {
      "data_set",       "data_element_group",    "data_element",           "org_unit",
      "org_unit_group", "category_option_combo", "attribute_option_combo", "period"};
  for (const char* field : expected) {
    const std::string message = Message(request);
    EXPECT_EQ(message.substr(0, message.find(':')), field);
    if (std::string(field) == "data_set") request.mutable_data_set()->RemoveLast();
    if (std::string(field) == "data_element_group") request.clear_data_element_group();
    if (std::string(field) == "data_element") request.clear_data_element();
    if (std::string(field) == "org_unit") request.mutable_org_unit()->RemoveLast();
    if (std::string(field) == "org_unit_group") request.clear_org_unit_group();
    if (std::string(field) == "category_option_combo") request.clear_category_option_combo();
    if (std::string(field) == "attribute_option_combo") request.clear_attribute_option_combo();
  }
  EXPECT_EQ(
      HttpRefusal(request),
      std::make_pair(400, std::string("Invalid Period `2024X1`, expected one of [W, Q, S] at "
                                      "index 4 for a ISO period of length 6 but found: `X1`")));
}

TEST(ExportRequestValidator243Test, BindsParametersBeforeDecoding) {
  ExportRequest request = ValidRequest();
  request.add_data_set("bad");
  request.set_attribute_combo("combo");
  EXPECT_EQ(HttpRefusal(request),
            std::make_pair(400, std::string("Value 'combo' is not valid for parameter "
                                            "attributeCombo. ") +
                                    kUidText + "combo"));
  EXPECT_EQ(Message(request).substr(0, 17), "attribute_combo: ");
}

TEST(ExportRequestValidator243Test, BindsInSpringsAlphabeticalOrder) {
  ExportRequest request = ValidRequest();
  request.set_start_date("2024-13-01");
  request.set_org_unit_id_scheme("nope");
  request.set_input_org_unit_id_scheme("nope");
  request.set_input_id_scheme("nope");
  request.set_id_scheme("nope");
  request.add_attribute_options("opt");
  EXPECT_EQ(
      HttpRefusal(request).second,
      std::string("Value 'opt' is not valid for parameter attributeOptions. ") + kUidText + "opt");
  request.clear_attribute_options();
  EXPECT_EQ(HttpRefusal(request).second,
            "Value 'nope' is not valid for parameter idScheme. Invalid ID scheme: nope\n\tUse UID, "
            "CODE, NAME, ATTRIBUTE:<uid>");
  request.clear_id_scheme();
  EXPECT_EQ(HttpRefusal(request).second,
            "Value 'nope' is not valid for parameter inputIdScheme. Valid values are: [ID, UID, "
            "UUID, NAME, CODE, ATTRIBUTE]");
  request.clear_input_id_scheme();
  EXPECT_EQ(Message(request).substr(0, 26), "input_org_unit_id_scheme: ");
  request.clear_input_org_unit_id_scheme();
  EXPECT_EQ(Message(request).substr(0, 20), "org_unit_id_scheme: ");
  request.clear_org_unit_id_scheme();
  EXPECT_EQ(Message(request).substr(0, 12), "start_date: ");
}

TEST(ExportRequestValidator243Test, ReadsOutputIdSchemesAsIdProperty) {
  ExportRequest request = ValidRequest();
  request.set_id_scheme("id");
  request.set_org_unit_id_scheme("attribute:AbcdefGhij1");
  request.set_data_element_id_scheme("Code");
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->output.category_option_combo, IdScheme::Uid());
  EXPECT_EQ(params->output.org_unit.property, IdScheme::Property::kAttribute);
  EXPECT_EQ(params->output.org_unit.attribute, "AbcdefGhij1");
  EXPECT_EQ(params->output.data_element.property, IdScheme::Property::kCode);
  request.set_org_unit_id_scheme("ATTRIBUTE:1bcdefGhij1");
  EXPECT_EQ(HttpRefusal(request).second,
            std::string("Value 'ATTRIBUTE:1bcdefGhij1' is not valid for parameter "
                        "orgUnitIdScheme. ") +
                kUidText + "1bcdefGhij1");
}

TEST(ExportRequestValidator243Test, InputSchemesAreIdentifiablePropertyNames) {
  ExportRequest request = ValidRequest();
  request.set_input_id_scheme("ATTRIBUTE:AbcdefGhij1");
  EXPECT_EQ(HttpRefusal(request).second,
            "Value 'ATTRIBUTE:AbcdefGhij1' is not valid for parameter inputIdScheme. Valid values "
            "are: [ID, UID, UUID, NAME, CODE, ATTRIBUTE]");
  request.set_input_id_scheme("attribute");
  EXPECT_EQ(HttpRefusal(request),
            std::make_pair(400, std::string("Attribute must be used with the attribute ID")));
  EXPECT_EQ(Message(request), "data_set: Attribute must be used with the attribute ID");
  request.set_input_id_scheme("uuid");
  EXPECT_EQ(HttpRefusal(request),
            std::make_pair(500, std::string("UUID is not supported for this operation")));
  request.set_input_id_scheme("Id");
  EXPECT_TRUE(Validate43(request).ok());
  // Only a field with values is decoded.
  request.set_input_id_scheme("uid");
  request.set_input_data_element_group_id_scheme("ATTRIBUTE");
  EXPECT_TRUE(Validate43(request).ok());
}

TEST(ExportRequestValidator243Test, CodeSchemesKeepCodes) {
  ExportRequest request = ValidRequest();
  request.set_input_id_scheme("CODE");
  request.set_data_set(0, "DS_CODE");
  request.add_category_option_combo("COC_CODE");
  request.set_org_unit(0, "OU1");
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->data_sets.scheme.property, IdScheme::Property::kCode);
  EXPECT_EQ(params->category_option_combos.scheme.property, IdScheme::Property::kCode);
  EXPECT_EQ(params->category_option_combos.values, std::vector<std::string>{"COC_CODE"});
  request.set_org_unit(0, std::string("a\0b", 3));
  EXPECT_EQ(HttpRefusal(request).first, 0);  // dvexport's own message
}

TEST(ExportRequestValidator243Test, CodeFallbackAppliesWhereNoSchemeIsGiven) {
  ExportRequest request = ValidRequest();
  request.set_input_use_code_fallback(true);
  request.add_data_set("DS_CODE");
  request.set_input_org_unit_id_scheme("code");
  request.set_org_unit(0, "OU1");
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_TRUE(params->input_use_code_fallback);
  EXPECT_TRUE(params->data_sets.code_fallback);
  EXPECT_EQ(params->data_sets.scheme, IdScheme::Uid());
  EXPECT_EQ(params->data_sets.values, (std::vector<std::string>{kDataSet, "DS_CODE"}));
  EXPECT_FALSE(params->org_units.code_fallback);
  EXPECT_EQ(params->org_units.scheme.property, IdScheme::Property::kCode);
  // An input_id_scheme turns it off.
  request.set_input_id_scheme("UID");
  EXPECT_EQ(Message(request), std::string("data_set: ") + kUidText + "DS_CODE");
  request.clear_input_id_scheme();
  request.set_input_use_code_fallback(false);
  EXPECT_EQ(Message(request), std::string("data_set: ") + kUidText + "DS_CODE");
}

TEST(ExportRequestValidator243Test, DedupesPeriodsByCanonicalId) {
  ExportRequest request = ValidRequest();
  request.add_period("2022-01");
  request.add_period("202201");
  request.add_period("2024FriW6");
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  ASSERT_EQ(params->periods.size(), 2u);
  EXPECT_EQ(params->periods[1].type, PeriodType::kWeeklyFriday);
  EXPECT_EQ(params->period_texts, 3u);
}

TEST(ExportRequestValidator243Test, RefusesPeriodsThatDoNotExist) {
  ExportRequest request = ValidRequest();
  request.add_period("2024FriW54");
  EXPECT_EQ(Message(request),
            "period: Invalid Period `2024FriW54`, failed to create date interval");
  request.set_period(1, "0000");
  EXPECT_EQ(HttpRefusal(request).first, 0);
  EXPECT_EQ(Message(request).substr(0, 46), "period: \"0000\" is not a valid ISO period: it r");
}

TEST(ExportRequestValidator243Test, DatesAreEachOptional) {
  ExportRequest request = ValidRequest();
  request.set_start_date("2022-01-01");
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_TRUE(params->start_date.has_value());
  EXPECT_FALSE(params->end_date.has_value());
  request.clear_period();
  // One date is no period filter.
  EXPECT_EQ(Message(request),
            "E2002: At least one period, start/end dates, last updated or last updated duration "
            "must be specified");
  request.set_end_date("2022-12-31");
  EXPECT_TRUE(Validate43(request).ok());
}

// DataExportServiceExportTest at 2.43 (the codes) with ErrorCode's texts.
TEST(ExportRequestValidator243Test, ReportsEachRule) {
  ExportRequest request = ValidRequest();
  request.clear_data_set();
  EXPECT_EQ(Message(request),
            "E2001: At least one data element, data set or data element group must be specified");
  request = ValidRequest();
  request.clear_period();
  EXPECT_EQ(Message(request).substr(0, 6), "E2002:");
  request = ValidRequest();
  request.set_start_date("2019-01-01");
  request.set_end_date("2019-01-31");
  EXPECT_EQ(Message(request), "E2003: Both periods and start/end date cannot be specified");
  request.clear_period();
  request.set_start_date("2019-03-01");
  EXPECT_EQ(Message(request), "E2004: Start date must be before end date");
  request = ValidRequest();
  request.clear_org_unit();
  EXPECT_EQ(Message(request),
            "E2006: At least one organisation unit or organisation unit group must be specified");
  request.add_org_unit_group(kOrgUnitGroup);
  request.set_children(true);
  EXPECT_EQ(Message(request),
            "E2007: Organisation unit children cannot be included for organisation unit groups");
  request = ValidRequest();
  request.set_limit(-2);
  EXPECT_EQ(Message(request), "E2009: Limit cannot be less than zero: `-2`");
  request.set_limit(-1000);
  EXPECT_EQ(Message(request), "E2009: Limit cannot be less than zero: `-1,000`");
  EXPECT_FALSE(Dhis2HttpRefusalOf(Refusal(request)).has_value());
}

TEST(ExportRequestValidator243Test, FirstFailingRuleWins) {
  // No parameters at all: E2001 (2.42 reported E2006, its last failure).
  EXPECT_EQ(ValidateExportRequest(ExportRequest(), RuleOrder::kLastFailure, 43)
                .status()
                .message()
                .substr(0, 5),
            "E2001");
  // E2006 comes before E2003 and E2004.
  ExportRequest request = ValidRequest();
  request.clear_org_unit();
  request.set_start_date("2019-03-01");
  request.set_end_date("2019-01-31");
  EXPECT_EQ(Message(request).substr(0, 5), "E2006");
  request.add_org_unit(kOrgUnit);
  EXPECT_EQ(Message(request).substr(0, 5), "E2003");
  request.clear_period();
  request.set_limit(-1);
  EXPECT_EQ(Message(request).substr(0, 5), "E2004");
}

TEST(ExportRequestValidator243Test, ChildrenWithoutOrgUnitsIsE2006NotE2008) {
  ExportRequest request = ValidRequest();
  request.clear_org_unit();
  request.set_children(true);
  EXPECT_EQ(Message(request).substr(0, 5), "E2006");
}

// 2.43.2 (DHIS2-21821): lastUpdated or lastUpdatedDuration alone satisfy E2002.
TEST(ExportRequestValidator243Test, LastUpdatedAloneIsATimeFilter) {
  ExportRequest request = ValidRequest();
  request.clear_period();
  request.set_last_updated("2024-01-05T10:00:00");
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->last_updated_micros, int64_t{1704448800} * 1000000);
  request.clear_last_updated();
  request.set_last_updated_duration("10000d");
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->last_updated_duration_micros, int64_t{10000} * 86400 * 1000000);
}

// DefaultDataExportServiceTest on the 2.43 branch (2.43.2).
TEST(ExportRequestValidator243Test, InvalidDurationIsE2005) {
  ExportRequest request = ValidRequest();
  request.set_last_updated_duration("-5d");
  EXPECT_EQ(Message(request), "E2005: Duration is not valid: `-5d`");
  request.set_last_updated_duration("abc");
  EXPECT_EQ(Message(request), "E2005: Duration is not valid: `abc`");
  request.set_last_updated_duration("0d");
  EXPECT_TRUE(Validate43(request).ok());
  request.set_last_updated_duration(" ");
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_FALSE(params->last_updated_duration_micros.has_value());
  // Java's $ matches before a final line terminator.
  request.set_last_updated_duration("5d\n");
  EXPECT_TRUE(Validate43(request).ok());
  request.set_last_updated_duration("99999999999999999999d");
  EXPECT_EQ(HttpRefusal(request),
            std::make_pair(400, std::string("For input string: \"99999999999999999999\"")));
  // E2005 comes after the decoding of periods.
  request.set_last_updated_duration("abc");
  request.add_period("2024W54");
  EXPECT_EQ(Message(request).substr(0, 8), "period: ");
}

TEST(ExportRequestValidator243Test, BlankDurationIsNoTimeFilter) {
  ExportRequest request = ValidRequest();
  request.clear_period();
  request.set_last_updated_duration(" \t");
  EXPECT_EQ(Message(request).substr(0, 5), "E2002");
}

TEST(ExportRequestValidator243Test, OffsetIsTakenAsItsAbsoluteValue) {
  ExportRequest request = ValidRequest();
  request.set_offset(-5);
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->offset, 5);
  request.set_offset(std::numeric_limits<int32_t>::min());
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->offset, int64_t{2147483648});
  request.set_limit(0);
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->limit, 0);
}

TEST(ExportRequestValidator243Test, OrderKeepsFirstOccurrences) {
  ExportRequest request = ValidRequest();
  request.add_order(v1::EXPORT_ORDER_OU);
  request.add_order(v1::EXPORT_ORDER_DE);
  request.add_order(v1::EXPORT_ORDER_OU);
  request.add_order(v1::EXPORT_ORDER_AOC);
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->order, (std::vector<OrderKey>{OrderKey::kOu, OrderKey::kDe, OrderKey::kAoc}));
  request.set_order_by_period(true);
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->order,
            (std::vector<OrderKey>{OrderKey::kPe, OrderKey::kOu, OrderKey::kDe, OrderKey::kAoc}));
  request.add_order(v1::EXPORT_ORDER_PE);
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->order.front(), OrderKey::kOu);
  // orderByPeriod alone: PE only (resolveOrders), not the default.
  request.clear_order();
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->order, std::vector<OrderKey>{OrderKey::kPe});
  request.add_order(v1::EXPORT_ORDER_UNSPECIFIED);
  EXPECT_EQ(Message(request),
            "order: EXPORT_ORDER_UNSPECIFIED is not an order key (DE, OU, PE, CREATED or AOC)");
}

TEST(ExportRequestValidator243Test, KeepsLevelCategoryOptionCombosAndExclusions) {
  ExportRequest request = ValidRequest();
  request.set_level(0);
  request.add_category_option_combo("HllvX50cXC0");
  request.set_exclude_default_coc(true);
  request.set_exclude_default_aoc(true);
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->level, 0);
  EXPECT_EQ(params->category_option_combos.values, std::vector<std::string>{"HllvX50cXC0"});
  EXPECT_TRUE(params->exclude_default_coc);
  EXPECT_TRUE(params->exclude_default_aoc);
}

// 2.43 has no E2040: attributeOptions alone use the default combo, attributeCombo alone nothing.
TEST(ExportRequestValidator243Test, AttributeComboAndOptionsNeedNotComeTogether) {
  ExportRequest request = ValidRequest();
  request.add_attribute_options(kAttributeOption);
  absl::StatusOr<ExportParams> params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->attribute_combo, "");
  EXPECT_EQ(params->attribute_options, std::vector<std::string>{kAttributeOption});
  request.clear_attribute_options();
  request.set_attribute_combo(kAttributeCombo);
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->attribute_combo, "");
  request.add_attribute_options(kAttributeOption);
  params = Validate43(request);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->attribute_combo, kAttributeCombo);
}

TEST(ExportRequestValidator243Test, ChangeTrackingRefusesAnOffset) {
  ExportRequest request = ValidRequest();
  request.set_start_change_stream(true);
  request.set_offset(0);
  EXPECT_TRUE(Validate43(request).ok());
  request.set_offset(10);
  EXPECT_EQ(Message(request).substr(0, 48), "start_change_stream: cannot be combined with off");
  request.set_start_change_stream(false);
  request.set_changes_since("x");
  EXPECT_EQ(Message(request).substr(0, 42), "changes_since: cannot be combined with off");
}

TEST(ExportRequestValidatorBefore243Test, RefusesEach243Parameter) {
  struct Case {
    const char* field;
    void (*set)(ExportRequest*);
  };
  const Case cases[] = {
      {"offset", [](ExportRequest* r) { r->set_offset(0); }},
      {"order", [](ExportRequest* r) { r->add_order(v1::EXPORT_ORDER_PE); }},
      {"order_by_period", [](ExportRequest* r) { r->set_order_by_period(true); }},
      {"level", [](ExportRequest* r) { r->set_level(2); }},
      {"category_option_combo", [](ExportRequest* r) { r->add_category_option_combo(kDataSet); }},
      {"input_use_code_fallback", [](ExportRequest* r) { r->set_input_use_code_fallback(false); }},
      {"exclude_default_coc", [](ExportRequest* r) { r->set_exclude_default_coc(true); }},
      {"exclude_default_aoc", [](ExportRequest* r) { r->set_exclude_default_aoc(true); }},
  };
  for (const Case& c : cases) {
    ExportRequest request = ValidRequest();
    c.set(&request);
    for (int dhis2 : {40, 42}) {
      absl::StatusOr<ExportParams> params =
          ValidateExportRequest(request, RuleOrder::kFirstFailure, dhis2);
      ASSERT_FALSE(params.ok()) << c.field;
      EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(params.status().message(),
                std::string(c.field) + ": a DHIS2 2.43 parameter; this export answers as DHIS2 2." +
                    std::to_string(dhis2));
    }
    EXPECT_TRUE(Validate43(request).ok()) << c.field;
  }
  absl::StatusOr<ExportParams> params = ValidateExportRequest(ValidRequest());
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->dhis2, 42);
  EXPECT_FALSE(params->last_updated_date_only);
}

}  // namespace
}  // namespace dvexport::dhis2
