// libFuzzer target: arbitrary bytes through the parallel gzip compressor at every level (1-3
// ISA-L's igzip, 4-9 zlib) and block size, fed in arbitrary pieces. The input is repeated, with
// variations, up to ~300 KiB, so that block boundaries, the primed 32 KiB dictionaries and the
// final block are all reached although libFuzzer's inputs are short. zlib's inflate must give
// back exactly the input, as one gzip member with nothing after it, with the compressor's CRC-32.

#include <fuzzer/FuzzedDataProvider.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "service/encode/parallel_gzip_compressor.h"
#include "tests/encode/file_compressor_testing.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
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
  // Pieces of 1 to max_piece bytes, their sizes drawn from max_piece as the seed.
  const std::string compressed = dvexport::encode::CompressInChunks(
      **compressor, text, max_piece, static_cast<unsigned>(max_piece));
  const dvexport::encode::Inflated inflated = dvexport::encode::Gunzip(compressed);
  Check(inflated.result == Z_STREAM_END);
  Check(inflated.data == text);
  Check(inflated.bytes_left_over == 0);
  Check((*compressor)->input_crc32() == dvexport::encode::ZlibCrc32(text));
  return 0;
}
