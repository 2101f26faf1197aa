#include "service/encode/parallel_gzip_compressor.h"

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/crc32.h"

namespace dvexport::encode {

namespace {

constexpr size_t kDictionarySize = 32 * 1024;
// Negative window bits: raw deflate, no zlib or gzip wrapper (we write our own).
constexpr int kRawWindowBits = -15;
constexpr int kMemLevel = 8;
// Levels 1-3 are ISA-L's levels 1-3; above, zlib.
constexpr int kIsalMaxLevel = 3;

void AppendLittleEndian32(uint32_t v, std::string* out) {
  const char bytes[4] = {static_cast<char>(v), static_cast<char>(v >> 8),
                         static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  out->append(bytes, 4);
}

}  // namespace

struct ParallelGzipCompressor::Block {
  std::string input;
  std::string dictionary;
  bool last = false;
  // Written by a worker, read after "done" under the mutex.
  std::string output;
  uint32_t crc = 0;
  bool done = false;
};

// One deflate state per worker thread, reset for every block: ISA-L's igzip for levels 1-3, zlib
// for 4-9 (ParallelGzipOptions::level says why).
class ParallelGzipCompressor::Worker {
 public:
  explicit Worker(int level) : isal_(level <= kIsalMaxLevel) {
    if (isal_) {
      isal_deflate_init(&isal_stream_);
      isal_stream_.level = static_cast<uint32_t>(level);
      // ISA-L's suggested buffer for each level (hash tables and the token queue), ~0.3-1 MiB.
      const uint32_t size = level == 1   ? ISAL_DEF_LVL1_DEFAULT
                            : level == 2 ? ISAL_DEF_LVL2_DEFAULT
                                         : ISAL_DEF_LVL3_DEFAULT;
      level_buffer_ = std::make_unique_for_overwrite<uint8_t[]>(size);
      isal_stream_.level_buf = level_buffer_.get();
      isal_stream_.level_buf_size = size;
      isal_stream_.gzip_flag = IGZIP_DEFLATE;  // Raw deflate: we write the wrapper ourselves.
      ok_ = true;
      return;
    }
    ok_ = deflateInit2(&zlib_stream_, level, Z_DEFLATED, kRawWindowBits, kMemLevel,
                       Z_DEFAULT_STRATEGY) == Z_OK;
    if (!ok_) zlib_stream_.state = nullptr;
  }
  ~Worker() {
    if (!isal_ && zlib_stream_.state != nullptr) deflateEnd(&zlib_stream_);
  }
  bool ok() const { return ok_; }

  void Run(Block* block) {
    block->crc = common::Crc32(0, block->input);
    // zlib's deflateBound (stored blocks for incompressible input), plus the sync flush marker
    // and the final empty block; the loops below grow the buffer should a library want more.
    const size_t n = block->input.size();
    size_t capacity = n + (n >> 12) + (n >> 14) + (n >> 25) + 128;
    block->output.resize(capacity);
    const size_t produced = isal_ ? RunIsal(block, capacity) : RunZlib(block, capacity);
    block->output.resize(produced);
  }

 private:
  // ISA-L: the block as one stateful stream primed with the dictionary, ended with SYNC_FLUSH
  // (byte-aligned, not final) or, for the last block, end_of_stream (a final block).
  size_t RunIsal(Block* block, size_t capacity) {
    isal_deflate_reset(&isal_stream_);
    if (!block->dictionary.empty() &&
        isal_deflate_set_dict(&isal_stream_, reinterpret_cast<uint8_t*>(block->dictionary.data()),
                              static_cast<uint32_t>(block->dictionary.size())) != COMP_OK) {
      std::abort();
    }
    isal_stream_.next_in = reinterpret_cast<uint8_t*>(block->input.data());
    isal_stream_.avail_in = static_cast<uint32_t>(block->input.size());
    isal_stream_.flush = block->last ? NO_FLUSH : SYNC_FLUSH;
    isal_stream_.end_of_stream = block->last ? 1 : 0;
    size_t produced = 0;
    for (;;) {
      isal_stream_.next_out = reinterpret_cast<uint8_t*>(block->output.data() + produced);
      isal_stream_.avail_out = static_cast<uint32_t>(capacity - produced);
      if (isal_deflate(&isal_stream_) != COMP_OK) std::abort();
      produced = capacity - isal_stream_.avail_out;
      // Done when all input is in and the flush (or the final block) is written: ISA-L is back
      // at a new block header (sync flush) or at its end state (end of stream).
      const auto state = isal_stream_.internal_state.state;
      if (isal_stream_.avail_in == 0 &&
          (block->last ? state == ZSTATE_END : state == ZSTATE_NEW_HDR)) {
        return produced;
      }
      capacity *= 2;
      block->output.resize(capacity);
    }
  }

  size_t RunZlib(Block* block, size_t capacity) {
    if (deflateReset(&zlib_stream_) != Z_OK) std::abort();
    if (!block->dictionary.empty() &&
        deflateSetDictionary(&zlib_stream_,
                             reinterpret_cast<const Bytef*>(block->dictionary.data()),
                             static_cast<uInt>(block->dictionary.size())) != Z_OK) {
      std::abort();
    }
    zlib_stream_.next_in = reinterpret_cast<Bytef*>(block->input.data());
    zlib_stream_.avail_in = static_cast<uInt>(block->input.size());
    const int flush = block->last ? Z_FINISH : Z_SYNC_FLUSH;
    size_t produced = 0;
    for (;;) {
      zlib_stream_.next_out = reinterpret_cast<Bytef*>(block->output.data() + produced);
      zlib_stream_.avail_out = static_cast<uInt>(capacity - produced);
      const int result = deflate(&zlib_stream_, flush);
      produced = capacity - zlib_stream_.avail_out;
      if (result == Z_STREAM_ERROR) std::abort();
      const bool complete = block->last
                                ? result == Z_STREAM_END
                                : (zlib_stream_.avail_in == 0 && zlib_stream_.avail_out != 0);
      if (complete) return produced;
      capacity *= 2;
      block->output.resize(capacity);
    }
  }

  const bool isal_;
  isal_zstream isal_stream_{};
  std::unique_ptr<uint8_t[]> level_buffer_;
  z_stream zlib_stream_{};
  bool ok_ = false;
};

absl::StatusOr<std::unique_ptr<ParallelGzipCompressor>> ParallelGzipCompressor::Create(
    const ParallelGzipOptions& options) {
  if (options.level < 1 || options.level > 9) {
    return absl::InvalidArgumentError(
        absl::StrCat("gzip level must be between 1 and 9, got ", options.level));
  }
  if (options.threads < 1 || options.max_blocks_in_flight < 1) {
    return absl::InvalidArgumentError("parallel gzip needs at least one thread and one block");
  }
  if (options.block_size < kDictionarySize || options.block_size > (1u << 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("parallel gzip block size must be 32 KiB..1 GiB, got ", options.block_size));
  }
  std::unique_ptr<ParallelGzipCompressor> compressor(new ParallelGzipCompressor(options));
  for (const auto& worker : compressor->workers_) {
    if (!worker->ok()) return absl::ResourceExhaustedError("zlib deflateInit2: no memory");
  }
  return compressor;
}

ParallelGzipCompressor::ParallelGzipCompressor(const ParallelGzipOptions& options)
    : options_(options) {
  for (int i = 0; i < options_.threads; ++i) {
    workers_.push_back(std::make_unique<Worker>(options_.level));
  }
  for (int i = 0; i < options_.threads; ++i) {
    Worker* worker = workers_[static_cast<size_t>(i)].get();
    threads_.emplace_back([this, worker] { WorkerLoop(worker); });
  }
}

ParallelGzipCompressor::~ParallelGzipCompressor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void ParallelGzipCompressor::WorkerLoop(Worker* worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // Stopping, nothing left to do.
    std::shared_ptr<Block> block = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    if (worker->ok()) worker->Run(block.get());
    lock.lock();
    block->done = true;
    block_done_.notify_all();
  }
}

void ParallelGzipCompressor::Compress(std::string_view in, std::string* out) {
  if (!started_) {
    if (options_.gzip_wrapper) {
      // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL OS=Unix, as zlib writes it.
      const char xfl = options_.level == 9 ? 2 : options_.level == 1 ? 4 : 0;
      const char header[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, xfl, 3};
      out->append(header, sizeof(header));
    }
    started_ = true;
    crc_ = 0;
    pending_.reserve(options_.block_size);
  }
  while (!in.empty()) {
    const size_t n = std::min(in.size(), options_.block_size - pending_.size());
    pending_.append(in.data(), n);
    in.remove_prefix(n);
    if (pending_.size() == options_.block_size) SubmitPending(false);
  }
  Collect(static_cast<size_t>(options_.max_blocks_in_flight), out);
}

void ParallelGzipCompressor::Finish(std::string* out) {
  if (!started_) Compress({}, out);
  SubmitPending(true);
  Collect(0, out);
  if (options_.gzip_wrapper) {
    AppendLittleEndian32(crc_, out);
    AppendLittleEndian32(static_cast<uint32_t>(length_), out);  // ISIZE: length mod 2^32.
  }
  started_ = false;
  dictionary_.clear();
  length_ = 0;
  // crc_ stays readable until the next stream starts (see input_crc32()).
}

void ParallelGzipCompressor::SubmitPending(bool last) {
  if (!started_) return;
  auto block = std::make_shared<Block>();
  block->last = last;
  block->dictionary = dictionary_;
  const size_t keep = std::min(pending_.size(), kDictionarySize);
  if (keep == kDictionarySize || dictionary_.empty()) {
    dictionary_.assign(pending_.data() + pending_.size() - keep, keep);
  } else {
    // A short block: the dictionary is the end of the previous one plus this block.
    dictionary_.append(pending_);
    dictionary_.erase(
        0, dictionary_.size() > kDictionarySize ? dictionary_.size() - kDictionarySize : 0);
  }
  length_ += pending_.size();
  block->input = std::move(pending_);
  pending_.clear();
  pending_.reserve(options_.block_size);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(block);
    in_flight_.push_back(std::move(block));
  }
  work_ready_.notify_one();
}

void ParallelGzipCompressor::Collect(size_t keep, std::string* out) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!in_flight_.empty()) {
    Block* front = in_flight_.front().get();
    if (!front->done) {
      if (in_flight_.size() <= keep) return;
      block_done_.wait(lock, [front] { return front->done; });
    }
    out->append(front->output);
    crc_ = static_cast<uint32_t>(
        crc32_combine(crc_, front->crc, static_cast<z_off_t>(front->input.size())));
    in_flight_.pop_front();
  }
}

}  // namespace dvexport::encode
