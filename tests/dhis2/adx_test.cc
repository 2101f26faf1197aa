#include "service/dhis2/adx.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/dhis2/period.h"

namespace dvexport::dhis2 {
namespace {

using ::testing::HasSubstr;

TEST(AdxTest, EveryPeriodTypeHasDhisDuration) {
  const std::pair<PeriodType, std::string_view> kExpected[] = {
      {PeriodType::kDaily, "P1D"},           {PeriodType::kWeekly, "P7D"},
      {PeriodType::kWeeklyWednesday, "P7D"}, {PeriodType::kWeeklyThursday, "P7D"},
      {PeriodType::kWeeklySaturday, "P7D"},  {PeriodType::kWeeklySunday, "P7D"},
      {PeriodType::kBiWeekly, "P14D"},       {PeriodType::kMonthly, "P1M"},
      {PeriodType::kBiMonthly, "P2M"},       {PeriodType::kQuarterly, "P3M"},
      {PeriodType::kQuarterlyNov, "P3M"},    {PeriodType::kSixMonthly, "P6M"},
      {PeriodType::kSixMonthlyApril, "P6M"}, {PeriodType::kSixMonthlyNov, "P6M"},
      {PeriodType::kYearly, "P1Y"},          {PeriodType::kFinancialApril, "P1Y"},
      {PeriodType::kFinancialJuly, "P1Y"},   {PeriodType::kFinancialSep, "P1Y"},
      {PeriodType::kFinancialOct, "P1Y"},    {PeriodType::kFinancialNov, "P1Y"}};
  ASSERT_EQ(std::size(kExpected), kAllPeriodTypes.size());
  for (const auto& [type, duration] : kExpected) {
    EXPECT_EQ(AdxPeriodDuration(PeriodTypeName(type)), duration) << PeriodTypeName(type);
  }
  EXPECT_EQ(AdxPeriodDuration("TwoYearly"), "P2Y");
  // 2.43's new types, found only in a 2.43 database.
  EXPECT_EQ(AdxPeriodDuration("WeeklyFriday"), "P7D");
  EXPECT_EQ(AdxPeriodDuration("FinancialFeb"), "P1Y");
  EXPECT_EQ(AdxPeriodDuration("FinancialAug"), "P1Y");
  EXPECT_EQ(AdxPeriodDuration("monthly"), std::nullopt);
  EXPECT_EQ(AdxPeriodDuration(""), std::nullopt);
}

TEST(AdxTest, NumericValueTypesAreDhisOnes) {
  for (const char* type : {"INTEGER", "INTEGER_POSITIVE", "INTEGER_NEGATIVE",
                           "INTEGER_ZERO_OR_POSITIVE", "NUMBER", "UNIT_INTERVAL", "PERCENTAGE"}) {
    EXPECT_TRUE(IsNumericValueType(type)) << type;
  }
  for (const char* type : {"TEXT", "LONG_TEXT", "BOOLEAN", "TRUE_ONLY", "DATE", "integer", ""}) {
    EXPECT_FALSE(IsNumericValueType(type)) << type;
  }
}

TEST(AdxTest, XmlNamesFollowXml10) {
  for (const char* name : {"SEX", "_a", "a-b.c9", "\xC3\xA9t\xC3\xA9", "\xE4\xB8\xAD\xE6\x96\x87",
                           "a:b", "x\xCC\x80", "\xF0\x90\x80\x80"}) {
    EXPECT_TRUE(IsXmlName(name)) << name;
  }
  for (const char* name : {"", "1a", "-a", ".a", "a b", "a\"", "a=b", "\xC3", "\xFF",
                           "a\xED\xA0\x80", "\xCC\x80x", "a\xEF\xBF\xBE", "a<"}) {
    EXPECT_FALSE(IsXmlName(name)) << name;
  }
}

TEST(AdxTest, RequestNeedsDataSetsAndNothingElseThatSelectsElements) {
  dvexport::v1::ExportRequest request;
  EXPECT_THAT(std::string(CheckAdxRequest(request).message()), HasSubstr("data_set:"));
  EXPECT_EQ(CheckAdxRequest(request).code(), absl::StatusCode::kInvalidArgument);
  request.add_data_set("DS");
  EXPECT_TRUE(CheckAdxRequest(request).ok());
  request.add_data_element("DE");
  EXPECT_THAT(std::string(CheckAdxRequest(request).message()), HasSubstr("data_element:"));
  request.clear_data_element();
  request.add_data_element_group("G");
  EXPECT_THAT(std::string(CheckAdxRequest(request).message()), HasSubstr("data_element_group:"));
  request.clear_data_element_group();
  request.set_changes_since("token");
  EXPECT_THAT(std::string(CheckAdxRequest(request).message()), HasSubstr("changes_since:"));
}

// DHIS2's ADX getFromUrl never reads attributeCombo and attributeOptions: refused rather than
// applied, so that no ADX file differs from DHIS2's.
TEST(AdxTest, RefusesAttributeComboAndOptions) {
  dvexport::v1::ExportRequest request;
  request.add_data_set("DS");
  request.set_attribute_combo("CC");
  request.add_attribute_options("CO");
  EXPECT_EQ(CheckAdxRequest(request).message(),
            "attribute_combo: DHIS2's ADX export ignores attribute_combo and attribute_options; "
            "give attribute_option_combo instead");
  request.clear_attribute_combo();
  EXPECT_THAT(std::string(CheckAdxRequest(request).message()), HasSubstr("attribute_options: "));
  request.clear_attribute_options();
  request.add_attribute_option_combo("AOC");
  EXPECT_TRUE(CheckAdxRequest(request).ok());
}

TEST(AdxTest, DefaultOutputSchemeIsCode) {
  dvexport::v1::ExportRequest request;
  EXPECT_EQ(WithAdxDefaults(request).id_scheme(), "CODE");
  request.set_id_scheme("uid");
  EXPECT_EQ(WithAdxDefaults(request).id_scheme(), "uid");
  EXPECT_FALSE(WithAdxDefaults(request).has_input_use_code_fallback());
}

// DHIS2 2.43's exportAsXmlGroups: idScheme CODE and inputUseCodeFallback true unless given.
TEST(AdxTest, Dhis243DefaultsAlsoFallBackToCodes) {
  dvexport::v1::ExportRequest request;
  dvexport::v1::ExportRequest adx = WithAdxDefaults(request, 43);
  EXPECT_EQ(adx.id_scheme(), "CODE");
  EXPECT_TRUE(adx.has_input_use_code_fallback());
  EXPECT_TRUE(adx.input_use_code_fallback());
  request.set_input_use_code_fallback(false);
  request.set_id_scheme("NAME");
  adx = WithAdxDefaults(request, 43);
  EXPECT_EQ(adx.id_scheme(), "NAME");
  EXPECT_FALSE(adx.input_use_code_fallback());
}

// 2.43 takes what 2.42's ADX refuses (it clears data elements and groups, filters by the
// attribute combo, writes an empty document without a data set); a delta stays refused.
TEST(AdxTest, Dhis243RefusesOnlyChanges) {
  dvexport::v1::ExportRequest request;
  EXPECT_TRUE(CheckAdxRequest(request, 43).ok());
  request.add_data_element("DE");
  request.add_data_element_group("DEG");
  request.set_attribute_combo("CC");
  request.add_attribute_options("CO");
  EXPECT_TRUE(CheckAdxRequest(request, 43).ok());
  EXPECT_FALSE(CheckAdxRequest(request, 42).ok());
  request.set_changes_since("token");
  EXPECT_THAT(std::string(CheckAdxRequest(request, 43).message()), HasSubstr("changes_since:"));
}

}  // namespace
}  // namespace dvexport::dhis2
