#ifndef DVEXPORT_TESTS_ENCODE_FILE_COMPRESSOR_TESTING_H_
#define DVEXPORT_TESTS_ENCODE_FILE_COMPRESSOR_TESTING_H_

// What the gzip, zip and zstd compressor tests feed their compressors and check their output with.

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

// Compresses "text" with "compressor" in chunks of random sizes from 1 to "max_chunk" (drawn
// from "seed"), then finishes the stream; returns everything it wrote.
std::string CompressInChunks(FileCompressor& compressor, std::string_view text, size_t max_chunk,
                             unsigned seed);

}  // namespace dvexport::encode

#endif  // DVEXPORT_TESTS_ENCODE_FILE_COMPRESSOR_TESTING_H_
