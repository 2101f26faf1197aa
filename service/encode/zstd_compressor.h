#ifndef DVEXPORT_SERVICE_ENCODE_ZSTD_COMPRESSOR_H_
#define DVEXPORT_SERVICE_ENCODE_ZSTD_COMPRESSOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "service/encode/file_compressor.h"

struct ZSTD_CCtx_s;

namespace dvexport::encode {

// What libzstd may hold for one ZstdCompressor at most, at any level and thread count up to 2.
inline constexpr size_t kMaxZstdMemoryBytes = size_t{40} << 20;

struct ZstdOptions {
  // zstd level, 1 (fastest) through 19 (smallest); 20 and above need far larger windows and are
  // refused, to keep memory per export bounded.
  int level = 1;
  // libzstd's worker threads (ZSTD_c_nbWorkers); the calling thread only hands input over.
  int threads = 2;
};

// Streams bytes into ONE zstd frame (RFC 8878) compressed by libzstd's own worker threads: the
// input is cut into jobs that overlap by an eighth of a window, so the ratio stays close to
// single-threaded zstd. The first Compress() of a frame flushes what it was given, so that the
// first bytes of a file leave at once; after that output comes as jobs finish.
//
// Bounded at every level, so that no level costs an export more than the default does by far:
// - memory: the window is at most 2 MiB (level 3's), the match tables at most 2^18 entries, the
//   jobs 2 MiB (1 MiB from level 16), so that what libzstd holds stays under
//   kMaxZstdMemoryBytes (level 1, whose parameters are within these bounds, holds about 28 MiB);
// - time: a job that has started cannot be stopped, and destroying the compressor (or a
//   Compress() that waits for output) waits for the running jobs. Jobs are short enough that
//   this is well under a second at every level (the optimal parsers of levels 16-19 take their
//   smaller jobs at 1-2 MB/s per thread).
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

  // The most memory libzstd has held for this compressor at once (its context, its workers'
  // states, its job buffers), in bytes.
  size_t peak_memory_bytes() const { return memory_->peak.load(std::memory_order_relaxed); }

 private:
  // libzstd's allocations for one compressor, counted (its workers allocate too).
  struct MemoryAccount {
    std::atomic<size_t> current{0};
    std::atomic<size_t> peak{0};
  };
  static void* Allocate(void* account, size_t size);
  static void Free(void* account, void* address);

  ZstdCompressor(std::unique_ptr<MemoryAccount> memory, ZSTD_CCtx_s* context)
      : memory_(std::move(memory)), context_(context) {}

  // Runs ZSTD_compressStream2 with "directive" until "in" is consumed and, for a flush or the
  // end, until libzstd has nothing left to write.
  void Run(std::string_view in, int directive, std::string* out);

  const std::unique_ptr<MemoryAccount> memory_;  // Outlives context_.
  ZSTD_CCtx_s* const context_;
  bool started_ = false;
  uint32_t crc_ = 0;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_ZSTD_COMPRESSOR_H_
