#ifndef DVEXPORT_SERVICE_ENCODE_FILE_COMPRESSOR_H_
#define DVEXPORT_SERVICE_ENCODE_FILE_COMPRESSOR_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace dvexport::encode {

// Compresses one stream of rendered bytes into a file (gzip, zip or zstd), in order, with
// bounded memory. The file export drives it once per chunk of output (tens of KiB), so one
// virtual call per chunk is all it costs.
//
// Not thread-safe; one compressor per output stream.
class FileCompressor {
 public:
  virtual ~FileCompressor() = default;

  // Takes "in" and appends to "*out" the compressed bytes ready so far (possibly none). The
  // first call of a stream appends at least the container's header, so that the first chunk of
  // a file never waits for compressed output.
  virtual void Compress(std::string_view in, std::string* out) = 0;

  // Appends the rest of the stream and the container's trailer to "*out". A following
  // Compress() starts a new, independent stream.
  virtual void Finish(std::string* out) = 0;

  // CRC-32 (zlib's) of all input of the stream, valid right after Finish() (before the next
  // Compress()).
  virtual uint32_t input_crc32() const = 0;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_FILE_COMPRESSOR_H_
