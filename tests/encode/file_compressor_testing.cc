#include "tests/encode/file_compressor_testing.h"

#include <zlib.h>

#include <algorithm>
#include <random>

#include "gtest/gtest.h"

namespace dvexport::encode {

uint32_t ZlibCrc32(std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

std::string ExportLikeText(size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string text;
  while (text.size() < size) {
    text += R"({"dataElement":"fbfJHSPpUQD","period":"2024)";
    text += std::to_string(rng() % 12 + 10);
    text += R"(","orgUnit":"DiszpKrYNg)" + std::to_string(rng() % 1000) + R"(","value":")";
    text += std::to_string(rng() % 100000) + R"(","followup":false},)";
  }
  text.resize(size);
  return text;
}

Inflated Gunzip(const std::string& compressed) {
  Inflated inflated;
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  char out[16384];
  do {
    stream.next_out = reinterpret_cast<Bytef*>(out);
    stream.avail_out = sizeof(out);
    inflated.result = inflate(&stream, Z_NO_FLUSH);
    inflated.data.append(out, sizeof(out) - stream.avail_out);
  } while (inflated.result == Z_OK);
  inflated.bytes_left_over = stream.avail_in;
  inflateEnd(&stream);
  return inflated;
}

std::string CompressInChunks(FileCompressor& compressor, std::string_view text, size_t max_chunk,
                             unsigned seed) {
  std::mt19937 rng(seed);
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t n = std::min<size_t>(text.size() - at, rng() % max_chunk + 1);
    compressor.Compress(text.substr(at, n), &out);
    at += n;
  }
  compressor.Finish(&out);
  return out;
}

}  // namespace dvexport::encode
