// libFuzzer target: arbitrary bytes through the parallel gzip compressor at every level (1-3
// ISA-L's igzip, 4-9 zlib) and block size, fed in arbitrary pieces. The input is repeated, with
// variations, up to ~300 KiB, so that block boundaries, the primed 32 KiB dictionaries and the
// final block are all reached although libFuzzer's inputs are short. zlib's inflate must give
// back exactly the input, as one gzip member with nothing after it, with the compressor's CRC-32.

#include <fuzzer/FuzzedDataProvider.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "service/encode/parallel_gzip_compressor.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

std::string Gunzip(const std::string& compressed, size_t* left_over) {
  z_stream stream{};
  Check(inflateInit2(&stream, 15 + 16) == Z_OK);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char buffer[65536];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    result = inflate(&stream, Z_NO_FLUSH);
    Check(result == Z_OK || result == Z_STREAM_END);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  *left_over = stream.avail_in;
  inflateEnd(&stream);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  dvexport::encode::ParallelGzipOptions options;
  options.level = in.ConsumeIntegralInRange(1, 9);
  options.block_size = size_t{32 * 1024} << in.ConsumeIntegralInRange(0, 2);
  options.threads = in.ConsumeIntegralInRange(1, 2);
  options.max_blocks_in_flight = in.ConsumeIntegralInRange(1, 4);
  const size_t max_piece = in.ConsumeIntegralInRange<size_t>(1, 70'000);
  const int repeats = in.ConsumeIntegralInRange(1, 300);
  const std::string unit = in.ConsumeRemainingBytesAsString();

  std::string text;
  for (int i = 0; i < repeats && !unit.empty(); ++i) {
    text += unit;
    // Vary every third copy so that matches break at different places.
    if (i % 3 == 2) text[text.size() - 1 - static_cast<size_t>(i) % unit.size()] ^= 0x5a;
  }
  auto compressor = dvexport::encode::ParallelGzipCompressor::Create(options);
  Check(compressor.ok());
  std::string compressed;
  size_t piece_seed = max_piece;
  for (size_t offset = 0; offset < text.size();) {
    piece_seed = piece_seed * 1103515245 + 12345;
    const size_t piece = std::min(text.size() - offset, 1 + piece_seed % max_piece);
    (*compressor)->Compress(std::string_view(text).substr(offset, piece), &compressed);
    offset += piece;
  }
  (*compressor)->Finish(&compressed);
  size_t left_over = 0;
  Check(Gunzip(compressed, &left_over) == text);
  Check(left_over == 0);
  Check((*compressor)->input_crc32() ==
        crc32(0, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
  return 0;
}
