#ifndef DVEXPORT_TESTS_SUPPORT_GZIP_COMPRESSOR_H_
#define DVEXPORT_TESTS_SUPPORT_GZIP_COMPRESSOR_H_

#include <zlib.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dvexport::encode {

// The single-threaded gzip reference the tests hold encode::ParallelGzipCompressor's output and
// speed against (the service itself only uses ParallelGzipCompressor).
//
// Streams bytes into one gzip file (RFC 1952) with zlib's deflate. Input is fed with Z_NO_FLUSH
// only: no sync flush between calls, so splitting the input differently does not change the
// compression ratio. Hand it large blocks (64 KiB or more); each call has a fixed cost.
//
// Not thread-safe; one compressor per output stream.
class GzipCompressor {
 public:
  // Returns a compressor at "level" 1 (fastest) through 9 (smallest), or InvalidArgument for
  // any other level. ResourceExhausted if zlib cannot allocate its state.
  static absl::StatusOr<std::unique_ptr<GzipCompressor>> Create(int level);

  GzipCompressor(const GzipCompressor&) = delete;
  GzipCompressor& operator=(const GzipCompressor&) = delete;

  ~GzipCompressor();

  // Compresses "in" and appends whatever compressed bytes are ready to "*out" (often none:
  // deflate keeps up to a block of input before it emits anything). Starts with the gzip header.
  void Compress(std::string_view in, std::string* out);

  // Appends the rest of the compressed stream and the gzip trailer (CRC-32, length) to "*out".
  // The compressor is then reset: a following Compress() starts a new, independent gzip stream.
  void Finish(std::string* out);

 private:
  GzipCompressor() = default;

  // Runs deflate with "flush" until all pending input is consumed and, for Z_FINISH, the stream
  // is complete, appending its output to "*out".
  void Deflate(int flush, std::string* out);

  // zlib keeps a pointer to this struct, so the compressor never moves (it lives on the heap).
  z_stream stream_{};
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_TESTS_SUPPORT_GZIP_COMPRESSOR_H_
