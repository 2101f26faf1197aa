#ifndef DVEXPORT_SERVICE_ENCODE_ZSTD_COMPRESSOR_H_
#define DVEXPORT_SERVICE_ENCODE_ZSTD_COMPRESSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "service/encode/file_compressor.h"

struct ZSTD_CCtx_s;

namespace dvexport::encode {

struct ZstdOptions {
  // zstd level, 1 (fastest) through 19 (smallest); 20 and above need far larger windows and are
  // refused, to keep memory per export bounded.
  int level = 1;
  // libzstd's worker threads (ZSTD_c_nbWorkers); the calling thread only hands input over.
  int threads = 2;
};

// Streams bytes into ONE zstd frame (RFC 8878) compressed by libzstd's own worker threads: the
// input is cut into jobs of a few MiB (libzstd's choice for the level) that overlap by part of
// a window, so the ratio stays close to single-threaded zstd. The first Compress() of a frame
// flushes what it was given, so that the first bytes of a file leave at once; after that output
// comes as jobs finish. libzstd bounds the memory: a few jobs of input and output per worker.
//
// The frame carries no content checksum (the export's trailer has CRC-32s); input_crc32() is
// computed here, on the calling thread. Not thread-safe; one compressor per output stream.
class ZstdCompressor final : public FileCompressor {
 public:
  // InvalidArgument for a level outside 1..19 or no threads; Internal if libzstd refuses the
  // parameters (a libzstd built without threads).
  static absl::StatusOr<std::unique_ptr<ZstdCompressor>> Create(const ZstdOptions& options);

  ZstdCompressor(const ZstdCompressor&) = delete;
  ZstdCompressor& operator=(const ZstdCompressor&) = delete;
  ~ZstdCompressor() override;

  void Compress(std::string_view in, std::string* out) override;
  void Finish(std::string* out) override;
  uint32_t input_crc32() const override { return crc_; }

 private:
  explicit ZstdCompressor(ZSTD_CCtx_s* context) : context_(context) {}

  // Runs ZSTD_compressStream2 with "directive" until "in" is consumed and, for a flush or the
  // end, until libzstd has nothing left to write.
  void Run(std::string_view in, int directive, std::string* out);

  ZSTD_CCtx_s* const context_;
  bool started_ = false;
  uint32_t crc_ = 0;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_ZSTD_COMPRESSOR_H_
