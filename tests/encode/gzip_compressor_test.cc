#include "tests/support/gzip_compressor.h"

#include <zlib.h>

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "tests/encode/file_compressor_testing.h"

namespace dvexport::encode {
namespace {

// About 2 MB of text shaped like the JSON export, with some randomness.
std::string ExportLikeText() {
  std::mt19937 rng(42);
  std::string text;
  while (text.size() < 2'000'000) {
    text += R"({"dataElement":"fbfJHSPpUQD","period":"2024)";
    text += std::to_string(rng() % 12 + 10);
    text += R"(","orgUnit":"DiszpKrYNg)" + std::to_string(rng() % 1000) + R"(","value":")";
    text += std::to_string(rng() % 100000) + R"(","followup":false},)";
  }
  return text;
}

std::unique_ptr<GzipCompressor> CreateOrDie(int level) {
  auto compressor = GzipCompressor::Create(level);
  EXPECT_TRUE(compressor.ok()) << compressor.status();
  return std::move(compressor).value();
}

TEST(GzipCompressorTest, RejectsLevelsOutsideOneToNine) {
  for (int level : {-1, 0, 10, 100}) {
    auto compressor = GzipCompressor::Create(level);
    EXPECT_EQ(compressor.status().code(), absl::StatusCode::kInvalidArgument) << level;
  }
  for (int level = 1; level <= 9; ++level) EXPECT_TRUE(GzipCompressor::Create(level).ok());
}

TEST(GzipCompressorTest, RoundTripsManyCompressCallsAsOneGzipStream) {
  const std::string text = ExportLikeText();
  for (int level : {1, 6, 9}) {
    auto compressor = CreateOrDie(level);
    std::mt19937 rng(level);
    std::string compressed;
    size_t offset = 0;
    while (offset < text.size()) {
      const size_t piece = std::min<size_t>(text.size() - offset, rng() % 70'000);  // 0 too.
      compressor->Compress(std::string_view(text).substr(offset, piece), &compressed);
      offset += piece;
    }
    compressor->Finish(&compressed);

    ASSERT_GE(compressed.size(), 18u);
    EXPECT_EQ(compressed.substr(0, 3), "\x1F\x8B\x08");  // gzip magic, deflate.
    const Inflated inflated = Gunzip(compressed);
    EXPECT_EQ(inflated.result, Z_STREAM_END) << "level " << level;
    EXPECT_EQ(inflated.bytes_left_over, 0u) << "more than one gzip stream, level " << level;
    EXPECT_TRUE(inflated.data == text) << "level " << level;
    EXPECT_LT(compressed.size(), text.size() / 4) << "level " << level;
  }
}

TEST(GzipCompressorTest, DoesNotFlushPerCall) {
  // A sync flush costs at least 4 bytes (00 00 FF FF) per call; 20,000 one-byte calls would then
  // produce more than 80 KB. Without flushes the output does not depend on how input was split.
  const std::string text = ExportLikeText().substr(0, 20'000);
  auto split = CreateOrDie(1);
  std::string split_output;
  for (char c : text) split->Compress(std::string_view(&c, 1), &split_output);
  split->Finish(&split_output);

  auto whole = CreateOrDie(1);
  std::string whole_output;
  whole->Compress(text, &whole_output);
  whole->Finish(&whole_output);

  EXPECT_EQ(split_output, whole_output);
  EXPECT_LT(split_output.size(), text.size() / 4);
  EXPECT_EQ(Gunzip(split_output).data, text);
}

TEST(GzipCompressorTest, EmitsNothingUntilEnoughInputOrFinish) {
  auto compressor = CreateOrDie(6);
  std::string out;
  compressor->Compress("small", &out);
  EXPECT_LE(out.size(), 10u);  // At most the gzip header; the data waits for more input.
  compressor->Finish(&out);
  EXPECT_EQ(Gunzip(out).data, "small");
}

TEST(GzipCompressorTest, WritesValidStreamForEmptyInput) {
  auto compressor = CreateOrDie(1);
  std::string out;
  compressor->Compress("", &out);
  compressor->Finish(&out);
  const Inflated inflated = Gunzip(out);
  EXPECT_EQ(inflated.result, Z_STREAM_END);
  EXPECT_EQ(inflated.data, "");
  EXPECT_EQ(inflated.bytes_left_over, 0u);
}

TEST(GzipCompressorTest, StartsAnIndependentStreamAfterFinish) {
  auto compressor = CreateOrDie(1);
  std::string first;
  compressor->Compress("first stream", &first);
  compressor->Finish(&first);
  std::string second;
  compressor->Compress("second stream", &second);
  compressor->Finish(&second);
  EXPECT_EQ(Gunzip(first).data, "first stream");
  const Inflated inflated = Gunzip(second);
  EXPECT_EQ(inflated.result, Z_STREAM_END);
  EXPECT_EQ(inflated.data, "second stream");
}

TEST(GzipCompressorTest, AppendsToExistingOutput) {
  auto compressor = CreateOrDie(1);
  std::string out = "prefix";
  compressor->Compress("payload", &out);
  compressor->Finish(&out);
  ASSERT_EQ(out.substr(0, 6), "prefix");
  EXPECT_EQ(Gunzip(out.substr(6)).data, "payload");
}

}  // namespace
}  // namespace dvexport::encode
