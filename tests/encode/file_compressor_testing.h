#ifndef DVEXPORT_TESTS_ENCODE_FILE_COMPRESSOR_TESTING_H_
#define DVEXPORT_TESTS_ENCODE_FILE_COMPRESSOR_TESTING_H_

// What the gzip, zip and zstd compressor tests feed their compressors and check their output with.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "service/encode/file_compressor.h"

namespace dvexport::encode {

// zlib's CRC-32 of "bytes", computed independently of the compressors' own.
uint32_t ZlibCrc32(std::string_view bytes);

// Exactly "size" bytes of text shaped like the JSON export, with some randomness from "seed".
std::string ExportLikeText(size_t size, unsigned seed = 7);

// What Gunzip inflated.
struct Inflated {
  int result = Z_OK;  // Z_STREAM_END for a complete stream.
  std::string data;
  size_t bytes_left_over = 0;  // Input after the end of the first gzip member.
};

// Inflates the first gzip member of "compressed" with plain zlib inflate, which stops at the
// member's end.
Inflated Gunzip(const std::string& compressed);

// Compresses "text" with "compressor" in chunks of random sizes from 1 to "max_chunk" (drawn
// from "seed"), then finishes the stream; returns everything it wrote.
std::string CompressInChunks(FileCompressor& compressor, std::string_view text, size_t max_chunk,
                             unsigned seed);

}  // namespace dvexport::encode

#endif  // DVEXPORT_TESTS_ENCODE_FILE_COMPRESSOR_TESTING_H_
