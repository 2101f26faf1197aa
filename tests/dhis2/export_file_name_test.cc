#include "service/dhis2/export_file_name.h"

#include <optional>
#include <string>

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

dvexport::v1::ExportRequest Period(const std::string& period) {
  dvexport::v1::ExportRequest query;
  query.add_period(period);
  return query;
}

TEST(AttachmentFileNameTest, DataValuesWhenNoAttachment) {
  EXPECT_EQ(AttachmentFileName(Period("202401"), "", "json"), "dataValues.json");
  EXPECT_EQ(AttachmentFileName(Period("202401"), "", "csv", dvexport::v1::COMPRESSION_GZIP),
            "dataValues.csv");
  EXPECT_EQ(AttachmentFileName(Period("202401"), "", "xml", dvexport::v1::COMPRESSION_NONE),
            "dataValues.xml");
}

// DHIS2's e2e DataValueSetTest: dataValues_2024-01-01_2050-01-30.xml.zip, entry .xml.
TEST(AttachmentFileNameTest, DatesFollowTheNameWithoutPeriod) {
  EXPECT_EQ(AttachmentFileName(Dates("2024-01-01", "2050-01-30"), "", "xml"),
            "dataValues_2024-01-01_2050-01-30.xml");
  EXPECT_EQ(
      DownloadFileName(Dates("2024-01-01", "2050-01-30"), "", "xml", dvexport::v1::COMPRESSION_ZIP),
      "dataValues_2024-01-01_2050-01-30.xml.zip");
  // The name is cut at its first '.' first.
  EXPECT_EQ(AttachmentFileName(Dates("20240105", "2024-03"), "my.data.json", "json",
                               dvexport::v1::COMPRESSION_NONE),
            "my_2024-01-05_2024-03-01.json");
  // A period: DHIS2 does not use the dates, nor name them.
  dvexport::v1::ExportRequest query = Dates("2024-01-01", "2024-12-31");
  query.add_period("202401");
  EXPECT_EQ(AttachmentFileName(query, "data.json", "json", dvexport::v1::COMPRESSION_NONE),
            "data.json.json");
  // One date, or one that does not parse: no suffix.
  EXPECT_EQ(AttachmentFileName(Dates("2024-01-01", ""), "data", "csv"), "data.csv");
  EXPECT_EQ(AttachmentFileName(Dates("2024-13-01", "2024-12-31"), "", "csv"), "dataValues.csv");
}

TEST(AttachmentFileNameTest, RemovesTheFormatAndCompressionExtensions) {
  const dvexport::v1::ExportRequest query = Period("202401");
  EXPECT_EQ(AttachmentFileName(query, "data.json", "json", dvexport::v1::COMPRESSION_NONE),
            "data.json.json");
  EXPECT_EQ(AttachmentFileName(query, "data.json.gz", "json", dvexport::v1::COMPRESSION_GZIP),
            "data.json");
  EXPECT_EQ(AttachmentFileName(query, "data.json.gzip", "json", dvexport::v1::COMPRESSION_GZIP),
            "data.json");
  // Every occurrence, left to right, once (Java's String.replace).
  EXPECT_EQ(AttachmentFileName(query, "a.csv.gzb.csv.gz", "csv", dvexport::v1::COMPRESSION_GZIP),
            "ab.csv");
  EXPECT_EQ(AttachmentFileName(query, "a.csv.gzip", "csv", dvexport::v1::COMPRESSION_ZIP),
            "a.csv.gzip.csv");
  EXPECT_EQ(AttachmentFileName(query, "data.xml.zip", "xml"), "data.xml");
  EXPECT_EQ(AttachmentFileName(query, "data.json.zip", "xml"), "data.json.zip.xml");
  // The extension must match: a .csv.gz name of a JSON export keeps it.
  EXPECT_EQ(AttachmentFileName(query, "data.csv.gz", "json", dvexport::v1::COMPRESSION_GZIP),
            "data.csv.gz.json");
  // zstd (dvexport only): .zst and .zstd.
  EXPECT_EQ(AttachmentFileName(query, "data.csv.zst", "csv", dvexport::v1::COMPRESSION_ZSTD),
            "data.csv");
  EXPECT_EQ(AttachmentFileName(query, "data.csv.zstd", "csv", dvexport::v1::COMPRESSION_ZSTD),
            "data.csv");
  // No compression removes nothing.
  EXPECT_EQ(AttachmentFileName(query, "data.csv.gz", "csv", dvexport::v1::COMPRESSION_NONE),
            "data.csv.gz.csv");
}

TEST(AttachmentFileNameTest, DownloadNameEndsWithTheCompression) {
  const dvexport::v1::ExportRequest query = Period("202401");
  EXPECT_EQ(DownloadFileName(query, "", "json", dvexport::v1::COMPRESSION_GZIP),
            "dataValues.json.gz");
  EXPECT_EQ(DownloadFileName(query, "x.csv.zip", "csv", dvexport::v1::COMPRESSION_ZIP),
            "x.csv.zip");
  EXPECT_EQ(DownloadFileName(query, "", "csv", dvexport::v1::COMPRESSION_ZSTD),
            "dataValues.csv.zst");
  EXPECT_EQ(DownloadFileName(query, "data", "csv", dvexport::v1::COMPRESSION_UNSPECIFIED),
            "data.csv");
  EXPECT_EQ(CompressionFileSuffix(dvexport::v1::COMPRESSION_NONE), "");
}

TEST(AttachmentFileNameTest, AdxFilesAreXml) {
  EXPECT_EQ(FileExtensionOf(dvexport::v1::FORMAT_ADX), "xml");
  EXPECT_EQ(FileExtensionOf(dvexport::v1::FORMAT_XML), "xml");
  EXPECT_EQ(FileExtensionOf(dvexport::v1::FORMAT_CSV), "csv");
  EXPECT_EQ(FileExtensionOf(dvexport::v1::FORMAT_JSON_PRETTY), "json");
  EXPECT_EQ(FileExtensionOf(dvexport::v1::FORMAT_UNSPECIFIED), "json");
}

// --- DHIS2 2.43 (DataExportParams.Input.getFilename) ------------------------------------------

constexpr dvexport::v1::Compression kNone = dvexport::v1::COMPRESSION_UNSPECIFIED;
constexpr dvexport::v1::Compression kGzip = dvexport::v1::COMPRESSION_GZIP;
constexpr dvexport::v1::Compression kZip = dvexport::v1::COMPRESSION_ZIP;

TEST(FileName243Test, TheReferencesExample) {
  EXPECT_EQ(FileName243(Dates("2024-01-01", "2024-12-31"), "a.b.xml", "xml", kGzip),
            "a.b_2024-01-01_2024-12-31.xml.gz");
  // 2.42 cut the name at its first '.'.
  EXPECT_EQ(DownloadFileName(Dates("2024-01-01", "2024-12-31"), "a.b.xml", "xml", kGzip),
            "a_2024-01-01_2024-12-31.xml.gz");
}

TEST(FileName243Test, DataValuesWhenNoAttachmentAndTheEmptyNameWhenEmpty) {
  const dvexport::v1::ExportRequest query = Period("202401");
  EXPECT_EQ(FileName243(query, std::nullopt, "json", kNone), "dataValues.json");
  EXPECT_EQ(FileName243(query, std::nullopt, "csv", kZip), "dataValues.csv.zip");
  EXPECT_EQ(FileName243(query, "", "json", kGzip), ".json.gz");
}

TEST(FileName243Test, EachDateOnItsOwnAlsoWithPeriods) {
  dvexport::v1::ExportRequest query = Dates("20240105", "");
  query.add_period("202401");
  EXPECT_EQ(FileName243(query, std::nullopt, "json", kNone), "dataValues_2024-01-05.json");
  EXPECT_EQ(FileName243(Dates("", "2024-03"), std::nullopt, "csv", kNone),
            "dataValues_2024-03-01.csv");
  EXPECT_EQ(FileName243(Dates("2024-13-01", "2024-12-31"), std::nullopt, "csv", kNone),
            "dataValues_2024-12-31.csv");
}

TEST(FileName243Test, StripsTheCompressionThenTheFormatOnceFromTheEnd) {
  const dvexport::v1::ExportRequest query;
  EXPECT_EQ(FileName243(query, "data.json.zip", "json", kZip), "data.json.zip");
  EXPECT_EQ(FileName243(query, "data.json.gz", "json", kZip), "data.json.gz.json.zip");
  EXPECT_EQ(FileName243(query, "data.json.json", "json", kNone), "data.json.json");
  EXPECT_EQ(FileName243(query, "data.gz", "json", kGzip), "data.json.gz");
  EXPECT_EQ(FileName243(query, "data.csv.zst", "csv", dvexport::v1::COMPRESSION_ZSTD),
            "data.csv.zst");
  EXPECT_EQ(FileName243(query, "data.json", "xml", kNone), "data.json.xml");
}

TEST(FileName243Test, FormatIsTheParametersTextWithPlusAsDot) {
  const dvexport::v1::ExportRequest query;
  EXPECT_EQ(FileName243(query, std::nullopt, "adx+xml", kNone), "dataValues.adx.xml");
  EXPECT_EQ(FileName243(query, "x.adx.xml", "adx+xml", kGzip), "x.adx.xml.gz");
  EXPECT_EQ(FileName243(query, std::nullopt, "JSON", kNone), "dataValues.JSON");
  EXPECT_EQ(FileName243(query, std::nullopt, "", kNone), "dataValues.");
}

TEST(FileName243Test, ZipEntryIsTheNameWithoutZip) {
  EXPECT_EQ(ZipEntryFileName243(Dates("2024-01-01", ""), std::nullopt, "csv"),
            "dataValues_2024-01-01.csv");
  EXPECT_EQ(ZipEntryFileName243(dvexport::v1::ExportRequest(), "a.b.json.zip", "json"), "a.b.json");
  EXPECT_EQ(ZipEntryFileName243(dvexport::v1::ExportRequest(), std::nullopt,
                                FormatName(dvexport::v1::FORMAT_ADX)),
            "dataValues.adx.xml");
}

TEST(FileName243Test, FormatNames) {
  EXPECT_EQ(FormatName(dvexport::v1::FORMAT_JSON), "json");
  EXPECT_EQ(FormatName(dvexport::v1::FORMAT_JSON_PRETTY), "json");
  EXPECT_EQ(FormatName(dvexport::v1::FORMAT_UNSPECIFIED), "json");
  EXPECT_EQ(FormatName(dvexport::v1::FORMAT_CSV), "csv");
  EXPECT_EQ(FormatName(dvexport::v1::FORMAT_XML), "xml");
  EXPECT_EQ(FormatName(dvexport::v1::FORMAT_ADX), "adx+xml");
}

}  // namespace
}  // namespace dvexport::dhis2
