#ifndef DVEXPORT_SERVICE_ENCODE_PARALLEL_GZIP_COMPRESSOR_H_
#define DVEXPORT_SERVICE_ENCODE_PARALLEL_GZIP_COMPRESSOR_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "service/encode/file_compressor.h"

namespace dvexport::encode {

struct ParallelGzipOptions {
  // 1 (fastest) through 9 (smallest). Levels 1-3 run ISA-L's igzip at its levels 1-3: several
  // times zlib's speed at level 1, and smaller output than zlib's level 1 on export files (see
  // docs/PERFORMANCE.md). Levels 4-9 run zlib at that level, where ISA-L has no equivalent.
  int level = 1;
  // Worker threads that run deflate.
  int threads = 2;
  // Input bytes per independently compressed block.
  size_t block_size = 128 * 1024;
  // Blocks queued or being compressed before Compress() waits for the oldest one.
  int max_blocks_in_flight = 6;
  // false: a raw deflate stream (RFC 1951) without the gzip header and trailer, as a zip entry
  // holds it (ZipCompressor).
  bool gzip_wrapper = true;
};

// Streams bytes into ONE gzip member (RFC 1952) compressed pigz-style on a small pool of worker
// threads: the input is cut into blocks, each compressed as raw deflate (ISA-L or zlib, by level)
// with the last 32 KiB of the previous block as preset dictionary and ended on a byte boundary
// with a sync flush (the final block as the stream's final deflate block); the per-block CRC-32s
// are combined for the trailer. Any gzip reader
// (gzip -d, zlib inflate, Python's gzip) reads the result; the ratio is within a fraction of a
// percent of single-threaded deflate at the same level. Without the gzip wrapper
// (ParallelGzipOptions::gzip_wrapper) the output is the bare deflate stream, for ZipCompressor.
//
// Output comes in input order. Memory is bounded: at most "max_blocks_in_flight" blocks wait,
// after which Compress() blocks until the oldest is done.
//
// The same shape as the single-threaded GzipCompressor the tests compare it with
// (tests/support). Not thread-safe; one compressor per output stream.
class ParallelGzipCompressor final : public FileCompressor {
 public:
  // InvalidArgument for a level outside 1..9, no threads, or a block smaller than 32 KiB.
  static absl::StatusOr<std::unique_ptr<ParallelGzipCompressor>> Create(
      const ParallelGzipOptions& options);

  ParallelGzipCompressor(const ParallelGzipCompressor&) = delete;
  ParallelGzipCompressor& operator=(const ParallelGzipCompressor&) = delete;

  // Stops the workers (waiting for blocks in progress).
  ~ParallelGzipCompressor() override;

  // Takes "in" and appends to "*out" the compressed bytes of the blocks finished so far (often
  // none). Starts with the gzip header (nothing without the wrapper).
  void Compress(std::string_view in, std::string* out) override;

  // Appends the rest of the compressed stream and the gzip trailer (CRC-32, length) to "*out".
  // A following Compress() starts a new, independent gzip stream.
  void Finish(std::string* out) override;

  // CRC-32 of all input of the current stream, valid right after Finish() (before the next
  // Compress()), so that callers need not checksum the uncompressed bytes again.
  uint32_t input_crc32() const override { return crc_; }

 private:
  struct Block;
  class Worker;

  explicit ParallelGzipCompressor(const ParallelGzipOptions& options);

  // Hands the pending input to the workers as one block.
  void SubmitPending(bool last);
  // Appends the output of finished blocks at the front; with "wait", waits for them until at
  // most "keep" blocks remain in flight.
  void Collect(size_t keep, std::string* out);
  void WorkerLoop(Worker* worker);

  const ParallelGzipOptions options_;
  bool started_ = false;    // The current stream has begun (its header written).
  std::string pending_;     // Input not yet handed out as a block.
  std::string dictionary_;  // The last 32 KiB of the previous block.
  uint32_t crc_ = 0;
  uint64_t length_ = 0;
  std::deque<std::shared_ptr<Block>> in_flight_;  // In input order.

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable block_done_;
  std::deque<std::shared_ptr<Block>> queue_;  // Not yet taken by a worker.
  bool stopping_ = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_PARALLEL_GZIP_COMPRESSOR_H_
