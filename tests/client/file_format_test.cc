#include "client/file_format.h"

#include "gtest/gtest.h"

namespace dvexport::client {
namespace {

using dvexport::v1::COMPRESSION_GZIP;
using dvexport::v1::COMPRESSION_NONE;
using dvexport::v1::COMPRESSION_ZIP;
using dvexport::v1::COMPRESSION_ZSTD;
using dvexport::v1::FORMAT_ADX;
using dvexport::v1::FORMAT_CSV;
using dvexport::v1::FORMAT_JSON;
using dvexport::v1::FORMAT_XML;

void ExpectFormat(absl::string_view path, dvexport::v1::Format format,
                  dvexport::v1::Compression compression) {
  std::optional<FileFormat> result = FormatFromPath(path);
  ASSERT_TRUE(result.has_value()) << path;
  EXPECT_EQ(result->format, format) << path;
  EXPECT_EQ(result->compression, compression) << path;
}

TEST(FormatFromPathTest, TellsFormatAndCompressionFromTheExtension) {
  ExpectFormat("out.json", FORMAT_JSON, COMPRESSION_NONE);
  ExpectFormat("out.csv", FORMAT_CSV, COMPRESSION_NONE);
  ExpectFormat("out.json.gz", FORMAT_JSON, COMPRESSION_GZIP);
  ExpectFormat("/data/exports/2024.csv.gz", FORMAT_CSV, COMPRESSION_GZIP);
  ExpectFormat("OUT.CSV.GZ", FORMAT_CSV, COMPRESSION_GZIP);
  ExpectFormat("dir.csv/out.json", FORMAT_JSON, COMPRESSION_NONE);
  ExpectFormat("out.xml", FORMAT_XML, COMPRESSION_NONE);
  ExpectFormat("Out.Xml.Gz", FORMAT_XML, COMPRESSION_GZIP);
  ExpectFormat("out.json.zip", FORMAT_JSON, COMPRESSION_ZIP);
  ExpectFormat("Out.CSV.ZIP", FORMAT_CSV, COMPRESSION_ZIP);
  ExpectFormat("out.json.zst", FORMAT_JSON, COMPRESSION_ZSTD);
  ExpectFormat("/x/out.csv.zst", FORMAT_CSV, COMPRESSION_ZSTD);
  ExpectFormat("out.xml.zip", FORMAT_XML, COMPRESSION_ZIP);
  ExpectFormat("out.adx", FORMAT_ADX, COMPRESSION_NONE);
  ExpectFormat("Out.ADX.gz", FORMAT_ADX, COMPRESSION_GZIP);
  ExpectFormat("out.adx.zip", FORMAT_ADX, COMPRESSION_ZIP);
  ExpectFormat("out.adx.zst", FORMAT_ADX, COMPRESSION_ZSTD);
}

TEST(FormatFromPathTest, KnowsNoOtherExtension) {
  for (absl::string_view path : {"out", "out.txt", "out.gz", "out.zip", "out.zst",
                                 "out.json.gz.zip", "out.json.zstd", "out.jsonl", "out.csv.bz2",
                                 "json", "out.json/", "-", "out.xmlx", "xml", "adx", "out.adxml"}) {
    EXPECT_FALSE(FormatFromPath(path).has_value()) << path;
  }
}

}  // namespace
}  // namespace dvexport::client
