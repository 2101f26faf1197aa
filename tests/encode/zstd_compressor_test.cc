#include "service/encode/zstd_compressor.h"

#include <zstd.h>

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "tests/encode/file_compressor_testing.h"

namespace dvexport::encode {
namespace {

struct Decompressed {
  std::string data;
  size_t frames = 0;
  bool complete = false;  // The input ended at the end of a frame.
};

// Decompresses every frame of "compressed" with libzstd's streaming decoder (the frames do not
// state their content size).
Decompressed Unzstd(const std::string& compressed) {
  Decompressed result;
  ZSTD_DCtx* context = ZSTD_createDCtx();
  ZSTD_inBuffer input{compressed.data(), compressed.size(), 0};
  std::string buffer(ZSTD_DStreamOutSize(), '\0');
  size_t hint = 0;
  while (input.pos < input.size) {
    ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
    hint = ZSTD_decompressStream(context, &output, &input);
    EXPECT_FALSE(ZSTD_isError(hint)) << ZSTD_getErrorName(hint);
    if (ZSTD_isError(hint)) break;
    result.data.append(buffer.data(), output.pos);
    if (hint == 0) ++result.frames;
  }
  // Drain what the decoder still holds.
  while (hint != 0 && !ZSTD_isError(hint)) {
    ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
    hint = ZSTD_decompressStream(context, &output, &input);
    if (output.pos == 0) break;
    result.data.append(buffer.data(), output.pos);
    if (hint == 0) ++result.frames;
  }
  result.complete = hint == 0;
  ZSTD_freeDCtx(context);
  return result;
}

std::unique_ptr<ZstdCompressor> CreateOrDie(int level = 1, int threads = 2) {
  ZstdOptions options;
  options.level = level;
  options.threads = threads;
  absl::StatusOr<std::unique_ptr<ZstdCompressor>> created = ZstdCompressor::Create(options);
  EXPECT_TRUE(created.ok()) << created.status();
  return *std::move(created);
}

TEST(ZstdCompressorTest, RandomChunksLevelsAndThreadsRoundTrip) {
  for (unsigned seed = 1; seed <= 16; ++seed) {
    std::mt19937 rng(seed);
    // Up to 12 MiB: several of libzstd's jobs at the low levels.
    const std::string text = ExportLikeText(rng() % (12 << 20), seed);
    const int level = static_cast<int>(1 + rng() % 9);
    std::unique_ptr<ZstdCompressor> zstd = CreateOrDie(level, static_cast<int>(1 + seed % 3));
    const std::string compressed = CompressInChunks(*zstd, text, 1 + rng() % 300'000, seed);
    Decompressed decompressed = Unzstd(compressed);
    EXPECT_TRUE(decompressed.complete) << "seed " << seed;
    EXPECT_EQ(decompressed.frames, 1u) << "seed " << seed;
    ASSERT_TRUE(decompressed.data == text) << "seed " << seed << " level " << level;
    EXPECT_EQ(zstd->input_crc32(), ZlibCrc32(text));
    if (text.size() > (1 << 20)) {
      EXPECT_LT(compressed.size(), text.size() / 4) << "seed " << seed;
    }
  }
}

TEST(ZstdCompressorTest, FirstCompressOutputsAtOnce) {
  std::unique_ptr<ZstdCompressor> zstd = CreateOrDie();
  const std::string first = ExportLikeText(16 * 1024, 1);
  std::string out;
  zstd->Compress(first, &out);
  ASSERT_GE(out.size(), 4u) << "the first chunk waited for more input";
  EXPECT_EQ(out.substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4)) << "zstd frame magic";
  EXPECT_EQ(Unzstd(out).data, first) << "the first chunk is decodable on its own";
}

TEST(ZstdCompressorTest, EmptyInputIsOneEmptyFrame) {
  std::unique_ptr<ZstdCompressor> zstd = CreateOrDie();
  std::string out;
  zstd->Finish(&out);
  Decompressed decompressed = Unzstd(out);
  EXPECT_TRUE(decompressed.complete);
  EXPECT_EQ(decompressed.frames, 1u);
  EXPECT_EQ(decompressed.data, "");
  EXPECT_EQ(zstd->input_crc32(), 0u);
}

TEST(ZstdCompressorTest, AfterFinishANewFrameStarts) {
  std::unique_ptr<ZstdCompressor> zstd = CreateOrDie();
  const std::string a = ExportLikeText(3 << 20, 1);
  const std::string b = ExportLikeText(1 << 20, 2);
  const std::string first = CompressInChunks(*zstd, a, 100'000, 1);
  EXPECT_EQ(zstd->input_crc32(), ZlibCrc32(a));
  const std::string second = CompressInChunks(*zstd, b, 100'000, 2);
  EXPECT_EQ(zstd->input_crc32(), ZlibCrc32(b));
  EXPECT_EQ(Unzstd(first).data, a);
  EXPECT_EQ(Unzstd(second).data, b);
}

TEST(ZstdCompressorTest, HigherLevelsAreNotLarger) {
  const std::string text = ExportLikeText(1 << 20, 5);
  const std::string fast = CompressInChunks(*CreateOrDie(1), text, 256 * 1024, 1);
  const std::string small = CompressInChunks(*CreateOrDie(19), text, 256 * 1024, 1);
  EXPECT_LT(small.size(), fast.size());
  EXPECT_EQ(Unzstd(small).data, text);
}

// Every level, fed long enough for both workers' states and several job buffers to be in use
// (three jobs or more), holds at most kMaxZstdMemoryBytes. Before the bounds, the job buffers
// alone were 40 MiB at level 3, and the match tables 80 MiB per worker at level 19.
TEST(ZstdCompressorTest, EveryLevelStaysWithinTheMemoryBound) {
  for (int level = 1; level <= 19; ++level) {
    const std::string text = ExportLikeText(level >= 16 ? 3 << 20 : 8 << 20, 7);
    std::unique_ptr<ZstdCompressor> zstd = CreateOrDie(level);
    const std::string compressed = CompressInChunks(*zstd, text, 256 * 1024, 3);
    EXPECT_GT(zstd->peak_memory_bytes(), size_t{1} << 20) << "level " << level;
    EXPECT_LE(zstd->peak_memory_bytes(), kMaxZstdMemoryBytes) << "level " << level;
    ASSERT_TRUE(Unzstd(compressed).data == text) << "level " << level;
  }
}

TEST(ZstdCompressorTest, RejectsLevelsOutsideOneToNineteen) {
  for (int level : {0, -1, 20, 22}) {
    ZstdOptions options;
    options.level = level;
    EXPECT_EQ(ZstdCompressor::Create(options).status().code(), absl::StatusCode::kInvalidArgument)
        << level;
  }
  ZstdOptions options;
  options.threads = 0;
  EXPECT_EQ(ZstdCompressor::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dvexport::encode
