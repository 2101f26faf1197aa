#include "service/dhis2/export_file_name.h"

#include "gtest/gtest.h"

namespace dvexport::dhis2 {
namespace {

dvexport::v1::ExportRequest Dates(const std::string& start, const std::string& end) {
  dvexport::v1::ExportRequest query;
  query.set_start_date(start);
  query.set_end_date(end);
  return query;
}

TEST(ExportFileNameTest, DataValuesWithoutBothDates) {
  EXPECT_EQ(ExportFileName(dvexport::v1::ExportRequest(), "json"), "dataValues.json");
  EXPECT_EQ(ExportFileName(Dates("2024-01-01", ""), "csv"), "dataValues.csv");
  EXPECT_EQ(ExportFileName(Dates("", "2024-12-31"), "xml"), "dataValues.xml");
}

TEST(ExportFileNameTest, BothDatesAsSqlDates) {
  EXPECT_EQ(ExportFileName(Dates("2024-01-01", "2024-12-31"), "json"),
            "dataValues_2024-01-01_2024-12-31.json");
  // Every form DHIS2 parses is written yyyy-MM-dd, as DateUtils.getSqlDateString writes it.
  EXPECT_EQ(ExportFileName(Dates("20240105", "2024-03"), "csv"),
            "dataValues_2024-01-05_2024-03-01.csv");
  EXPECT_EQ(ExportFileName(Dates("2023", "2024-02-29T23:59:59Z"), "csv"),
            "dataValues_2023-01-01_2024-02-29.csv");
}

TEST(ExportFileNameTest, DatesThatDoNotParseAreLeftOut) {
  EXPECT_EQ(ExportFileName(Dates("2024-13-01", "2024-12-31"), "json"), "dataValues.json");
}

}  // namespace
}  // namespace dvexport::dhis2
