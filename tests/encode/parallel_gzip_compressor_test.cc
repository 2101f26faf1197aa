#include "service/encode/parallel_gzip_compressor.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/encode/file_compressor_testing.h"
#include "tests/support/gzip_compressor.h"

namespace dvexport::encode {
namespace {

std::unique_ptr<ParallelGzipCompressor> CreateOrDie(int level, size_t block_size = 128 * 1024) {
  ParallelGzipOptions options;
  options.level = level;
  options.block_size = block_size;
  auto compressor = ParallelGzipCompressor::Create(options);
  EXPECT_TRUE(compressor.ok()) << compressor.status();
  return std::move(compressor).value();
}

std::string CompressInPieces(ParallelGzipCompressor* compressor, std::string_view text,
                             uint32_t seed, size_t max_piece) {
  std::mt19937 rng(seed);
  std::string compressed;
  size_t offset = 0;
  while (offset < text.size()) {
    const size_t piece = std::min<size_t>(text.size() - offset, rng() % (max_piece + 1));
    compressor->Compress(text.substr(offset, piece), &compressed);
    offset += piece;
  }
  compressor->Finish(&compressed);
  return compressed;
}

// Runs "command" with the file holding "compressed" as $1 and returns its standard output.
std::string RunDecompressor(const std::string& command, const std::string& compressed) {
  char in_path[] = "/tmp/pgzip_test_XXXXXX";
  const int fd = mkstemp(in_path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, compressed.data(), compressed.size()),
            static_cast<ssize_t>(compressed.size()));
  close(fd);
  const std::string out_path = std::string(in_path) + ".out";
  const std::string full = "set -- " + std::string(in_path) + "; " + command + " > " + out_path;
  EXPECT_EQ(std::system(full.c_str()), 0) << full;
  std::ifstream in(out_path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  std::remove(in_path);
  std::remove(out_path.c_str());
  return content.str();
}

TEST(ParallelGzipCompressorTest, RejectsBadOptions) {
  ParallelGzipOptions options;
  for (int level : {-1, 0, 10}) {
    options.level = level;
    EXPECT_EQ(ParallelGzipCompressor::Create(options).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  options.level = 1;
  options.threads = 0;
  EXPECT_FALSE(ParallelGzipCompressor::Create(options).ok());
  options.threads = 2;
  options.block_size = 1000;
  EXPECT_FALSE(ParallelGzipCompressor::Create(options).ok());
}

TEST(ParallelGzipCompressorTest, RoundTripsAsOneGzipMemberWithZlibInflate) {
  const std::string text = ExportLikeText(5'000'000);
  // 1-3: ISA-L; 4-9: zlib.
  for (int level : {1, 2, 3, 4, 6, 9}) {
    auto compressor = CreateOrDie(level);
    const std::string compressed = CompressInPieces(compressor.get(), text, level, 300'000);
    Inflated inflated = Gunzip(compressed);
    EXPECT_EQ(inflated.result, Z_STREAM_END) << level;
    EXPECT_EQ(inflated.bytes_left_over, 0u) << level;
    EXPECT_TRUE(inflated.data == text) << level;
    EXPECT_EQ(compressor->input_crc32(),
              crc32(0, reinterpret_cast<const Bytef*>(text.data()), text.size()));
  }
}

TEST(ParallelGzipCompressorTest, GzipAndPythonReadTheOutput) {
  const std::string text = ExportLikeText(3'000'000);
  for (int level : {1, 3, 9}) {
    auto compressor = CreateOrDie(level);
    const std::string compressed = CompressInPieces(compressor.get(), text, 3, 200'000);
    EXPECT_EQ(RunDecompressor("gzip -t \"$1\" && echo ok", compressed), "ok\n") << level;
    EXPECT_TRUE(RunDecompressor("gzip -dc \"$1\"", compressed) == text) << level;
    EXPECT_TRUE(RunDecompressor("python3 -c 'import gzip, sys; "
                                "sys.stdout.buffer.write(gzip.open(sys.argv[1]).read())' \"$1\"",
                                compressed) == text)
        << level;
  }
}

// Java's GZIPInputStream, as DHIS2 and other Java programs read a gzip file: ISA-L's levels and
// zlib's.
TEST(ParallelGzipCompressorTest, JavaReadsTheOutput) {
  if (std::system("command -v java >/dev/null") != 0) GTEST_SKIP() << "no java";
  const std::string text = ExportLikeText(2'000'000);
  for (int level : {1, 6}) {
    auto compressor = CreateOrDie(level);
    const std::string compressed = CompressInPieces(compressor.get(), text, 7, 200'000);
    EXPECT_TRUE(RunDecompressor("java -Xshare:auto " DVEXPORT_TEST_SOURCE_DIR
                                "/ReadGzip.java \"$1\"",
                                compressed) == text)
        << level;
  }
}

TEST(ParallelGzipCompressorTest, ManySmallCompressCalls) {
  const std::string text = ExportLikeText(1'000'000);
  auto compressor = CreateOrDie(1, 32 * 1024);
  const std::string compressed = CompressInPieces(compressor.get(), text, 5, 40);
  Inflated inflated = Gunzip(compressed);
  EXPECT_EQ(inflated.result, Z_STREAM_END);
  EXPECT_TRUE(inflated.data == text);
}

TEST(ParallelGzipCompressorTest, EmptyInputIsAValidEmptyGzipFile) {
  auto compressor = CreateOrDie(1);
  std::string compressed;
  compressor->Finish(&compressed);
  Inflated inflated = Gunzip(compressed);
  EXPECT_EQ(inflated.result, Z_STREAM_END);
  EXPECT_EQ(inflated.data, "");
  EXPECT_EQ(inflated.bytes_left_over, 0u);
  EXPECT_EQ(RunDecompressor("gzip -dc \"$1\"", compressed), "");
}

TEST(ParallelGzipCompressorTest, InputOfExactlyWholeBlocks) {
  const std::string text = ExportLikeText(1'000'000).substr(0, 4 * 64 * 1024);
  auto compressor = CreateOrDie(1, 64 * 1024);
  std::string compressed;
  compressor->Compress(text, &compressed);
  compressor->Finish(&compressed);
  Inflated inflated = Gunzip(compressed);
  EXPECT_EQ(inflated.result, Z_STREAM_END);
  EXPECT_TRUE(inflated.data == text);
}

TEST(ParallelGzipCompressorTest, StartsANewStreamAfterFinish) {
  auto compressor = CreateOrDie(6);
  for (const std::string& text : {ExportLikeText(700'000), std::string("second")}) {
    std::string compressed;
    compressor->Compress(text, &compressed);
    compressor->Finish(&compressed);
    Inflated inflated = Gunzip(compressed);
    EXPECT_EQ(inflated.result, Z_STREAM_END);
    EXPECT_EQ(inflated.bytes_left_over, 0u);
    EXPECT_TRUE(inflated.data == text);
  }
}

// Inputs unlike export files, at every level and block size: incompressible bytes, long runs (ISA-L
// and zlib emit long matches across the primed dictionary), every byte value, text with sparse
// repeats, pieces that cut blocks anywhere, and empty blocks at the end.
TEST(ParallelGzipCompressorTest, RandomizedInputsRoundTripAtEveryLevel) {
  for (uint32_t seed = 1; seed <= 36; ++seed) {
    std::mt19937 rng(seed);
    const int level = 1 + static_cast<int>(seed % 9);
    const size_t block_size = (32u << (rng() % 4)) * 1024;  // 32 KiB .. 256 KiB.
    std::string text;
    const size_t size = rng() % 900'000;
    while (text.size() < size) {
      switch (rng() % 4) {
        case 0:  // Incompressible.
          for (int i = 0, n = 1 + static_cast<int>(rng() % 70'000); i < n; ++i) {
            text.push_back(static_cast<char>(rng()));
          }
          break;
        case 1:  // A run of one byte.
          text.append(1 + rng() % 100'000, static_cast<char>(rng()));
          break;
        case 2:  // A copy of something earlier, near or far (within and beyond 32 KiB).
          if (!text.empty()) {
            const size_t from = rng() % text.size();
            text.append(text.substr(from, 1 + rng() % 5'000));
          }
          break;
        default:
          text += ExportLikeText(1 + rng() % 50'000, seed);
      }
    }
    text.resize(size);
    auto compressor = CreateOrDie(level, block_size);
    const std::string compressed =
        CompressInPieces(compressor.get(), text, seed, rng() % 2 ? 100 : 400'000);
    Inflated inflated = Gunzip(compressed);
    EXPECT_EQ(inflated.result, Z_STREAM_END) << "seed " << seed << " level " << level;
    EXPECT_EQ(inflated.bytes_left_over, 0u) << "seed " << seed;
    ASSERT_TRUE(inflated.data == text) << "seed " << seed << " level " << level;
    EXPECT_EQ(compressor->input_crc32(), ZlibCrc32(text)) << "seed " << seed;
  }
}

// ISA-L's levels, which replaced zlib's 1-3, against zlib's level 1: at most 5% larger on export
// text (docs/PERFORMANCE.md has the sizes of the benchmark's files).
TEST(ParallelGzipCompressorTest, IsalLevelsAreAtMostSlightlyLargerThanZlibLevelOne) {
  const std::string text = ExportLikeText(4'000'000);
  auto zlib = GzipCompressor::Create(1);
  ASSERT_TRUE(zlib.ok());
  std::string zlib_out;
  (*zlib)->Compress(text, &zlib_out);
  (*zlib)->Finish(&zlib_out);
  for (int level : {1, 2, 3}) {
    auto isal = CreateOrDie(level);
    std::string isal_out;
    isal->Compress(text, &isal_out);
    isal->Finish(&isal_out);
    EXPECT_LE(isal_out.size(), zlib_out.size() * 105 / 100)
        << "level " << level << ": " << isal_out.size() << " against zlib's " << zlib_out.size();
  }
}

TEST(ParallelGzipCompressorTest, RatioIsCloseToSingleThreadedDeflate) {
  const std::string text = ExportLikeText(4'000'000);
  for (int level : {4, 6}) {  // zlib's levels, against zlib single-threaded.
    auto parallel = CreateOrDie(level);
    std::string parallel_out;
    parallel->Compress(text, &parallel_out);
    parallel->Finish(&parallel_out);
    auto single = GzipCompressor::Create(level);
    ASSERT_TRUE(single.ok());
    std::string single_out;
    (*single)->Compress(text, &single_out);
    (*single)->Finish(&single_out);
    EXPECT_LT(parallel_out.size(), single_out.size() * 101 / 100) << level;
  }
}

}  // namespace
}  // namespace dvexport::encode
