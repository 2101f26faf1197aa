#include "service/encode/zstd_compressor.h"

#include <zstd.h>

#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/crc32.h"

namespace dvexport::encode {

namespace {

constexpr int kMaxLevel = 19;

}  // namespace

absl::StatusOr<std::unique_ptr<ZstdCompressor>> ZstdCompressor::Create(const ZstdOptions& options) {
  if (options.level < 1 || options.level > kMaxLevel) {
    return absl::InvalidArgumentError(
        absl::StrCat("zstd level must be between 1 and ", kMaxLevel, ", got ", options.level));
  }
  if (options.threads < 1) {
    return absl::InvalidArgumentError("zstd needs at least one thread");
  }
  ZSTD_CCtx* context = ZSTD_createCCtx();
  if (context == nullptr) return absl::ResourceExhaustedError("ZSTD_createCCtx: no memory");
  std::unique_ptr<ZstdCompressor> compressor(new ZstdCompressor(context));
  for (const auto& [parameter, value] :
       {std::pair{ZSTD_c_compressionLevel, options.level},
        std::pair{ZSTD_c_nbWorkers, options.threads}, std::pair{ZSTD_c_checksumFlag, 0}}) {
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
