#include "service/encode/zstd_compressor.h"

// ZSTD_getCParams and ZSTD_createCCtx_advanced are in libzstd's experimental API, which
// Debian's libzstd1 exports; its ABI is that of the libzstd-dev we build against (the runtime
// image installs the same package).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/crc32.h"

namespace dvexport::encode {

namespace {

constexpr int kMaxLevel = 19;

// The bounds of ZstdCompressor's comment. Level 1's own parameters (window 2^19, tables 2^13 and
// 2^14, jobs of 4 windows, overlap of an eighth) are within them: level 1 is what libzstd makes
// it. Measured with peak_memory_bytes() (2 workers, 16 MiB of export JSON): 28 MiB at level 1,
// 32-40 MiB at 2-15, 24-28 MiB at 16-19; before the bounds 107 MiB at level 3 and 233 MiB at 9.
constexpr int kMaxWindowLog = 21;
constexpr int kMaxChainLog = 18;
constexpr int kMaxHashLog = 18;
constexpr int kJobBytes = 2 << 20;
// Levels 16-19 (libzstd's optimal parsers) compress export JSON at 1-2 MB/s per thread: their
// jobs are smaller, so that a cancelled export waits well under a second for the running ones.
constexpr int kFirstOptimalParserLevel = 16;
constexpr int kOptimalParserJobBytes = 1 << 20;
// An eighth of the window: libzstd's own choice for level 1 (up to 9, the whole window, at 19).
constexpr int kOverlapLog = 6;

// libzstd's parameters for "level", within the bounds above.
std::vector<std::pair<ZSTD_cParameter, int>> BoundedParameters(int level, int threads) {
  const ZSTD_compressionParameters defaults =
      ZSTD_getCParams(level, ZSTD_CONTENTSIZE_UNKNOWN, /*dictSize=*/0);
  const int job_bytes = level >= kFirstOptimalParserLevel ? kOptimalParserJobBytes : kJobBytes;
  return {
      {ZSTD_c_compressionLevel, level},
      {ZSTD_c_windowLog, std::min<int>(defaults.windowLog, kMaxWindowLog)},
      {ZSTD_c_chainLog, std::min<int>(defaults.chainLog, kMaxChainLog)},
      {ZSTD_c_hashLog, std::min<int>(defaults.hashLog, kMaxHashLog)},
      {ZSTD_c_nbWorkers, threads},
      {ZSTD_c_jobSize, job_bytes},
      {ZSTD_c_overlapLog, kOverlapLog},
      {ZSTD_c_checksumFlag, 0},
  };
}

// Each allocation is preceded by its size, in a header that keeps malloc's alignment.
constexpr size_t kAllocationHeader = alignof(std::max_align_t);

}  // namespace

void* ZstdCompressor::Allocate(void* account, size_t size) {
  auto* bytes = static_cast<unsigned char*>(std::malloc(kAllocationHeader + size));
  if (bytes == nullptr) return nullptr;
  *reinterpret_cast<size_t*>(bytes) = size;
  auto* memory = static_cast<MemoryAccount*>(account);
  const size_t now = memory->current.fetch_add(size, std::memory_order_relaxed) + size;
  size_t peak = memory->peak.load(std::memory_order_relaxed);
  while (now > peak && !memory->peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return bytes + kAllocationHeader;
}

void ZstdCompressor::Free(void* account, void* address) {
  if (address == nullptr) return;
  auto* bytes = static_cast<unsigned char*>(address) - kAllocationHeader;
  static_cast<MemoryAccount*>(account)->current.fetch_sub(*reinterpret_cast<size_t*>(bytes),
                                                          std::memory_order_relaxed);
  std::free(bytes);
}

absl::StatusOr<std::unique_ptr<ZstdCompressor>> ZstdCompressor::Create(const ZstdOptions& options) {
  if (options.level < 1 || options.level > kMaxLevel) {
    return absl::InvalidArgumentError(
        absl::StrCat("zstd level must be between 1 and ", kMaxLevel, ", got ", options.level));
  }
  if (options.threads < 1) {
    return absl::InvalidArgumentError("zstd needs at least one thread");
  }
  auto memory = std::make_unique<MemoryAccount>();
  ZSTD_CCtx* context = ZSTD_createCCtx_advanced(ZSTD_customMem{&Allocate, &Free, memory.get()});
  if (context == nullptr) return absl::ResourceExhaustedError("ZSTD_createCCtx: no memory");
  std::unique_ptr<ZstdCompressor> compressor(new ZstdCompressor(std::move(memory), context));
  for (const auto& [parameter, value] : BoundedParameters(options.level, options.threads)) {
    const size_t result = ZSTD_CCtx_setParameter(context, parameter, value);
    if (ZSTD_isError(result)) {
      return absl::InternalError(absl::StrCat("libzstd refuses parameter ", parameter, "=", value,
                                              ": ", ZSTD_getErrorName(result)));
    }
  }
  return compressor;
}

ZstdCompressor::~ZstdCompressor() { ZSTD_freeCCtx(context_); }

void ZstdCompressor::Compress(std::string_view in, std::string* out) {
  crc_ = common::Crc32(started_ ? crc_ : 0, in);
  if (!started_) {
    // The frame's header and the first input go out now rather than with the first job.
    started_ = true;
    Run(in, ZSTD_e_flush, out);
    return;
  }
  Run(in, ZSTD_e_continue, out);
}

void ZstdCompressor::Finish(std::string* out) {
  if (!started_) Compress({}, out);
  Run({}, ZSTD_e_end, out);
  started_ = false;
}

void ZstdCompressor::Run(std::string_view in, int directive, std::string* out) {
  const auto end_directive = static_cast<ZSTD_EndDirective>(directive);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  const size_t room = ZSTD_CStreamOutSize();
  for (;;) {
    const size_t before = out->size();
    out->resize(before + room);
    ZSTD_outBuffer output{out->data() + before, room, 0};
    const size_t remaining = ZSTD_compressStream2(context_, &output, &input, end_directive);
    out->resize(before + output.pos);
    // Errors here are misuse or memory exhaustion: the parameters were checked in Create().
    if (ZSTD_isError(remaining)) std::abort();
    const bool consumed = input.pos == input.size;
    if (end_directive == ZSTD_e_continue ? consumed : consumed && remaining == 0) return;
  }
}

}  // namespace dvexport::encode
