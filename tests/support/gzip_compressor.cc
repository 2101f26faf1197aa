#include "tests/support/gzip_compressor.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dvexport::encode {

namespace {

// Window of 2^15 bytes; adding 16 asks zlib for the gzip wrapper instead of the zlib one.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemLevel = 8;

// Output space offered to each deflate call.
constexpr size_t kOutputStep = 32 * 1024;

}  // namespace

absl::StatusOr<std::unique_ptr<GzipCompressor>> GzipCompressor::Create(int level) {
  if (level < 1 || level > 9) {
    return absl::InvalidArgumentError(
        absl::StrCat("gzip level must be between 1 and 9, got ", level));
  }
  std::unique_ptr<GzipCompressor> compressor(new GzipCompressor());
  const int result = deflateInit2(&compressor->stream_, level, Z_DEFLATED, kGzipWindowBits,
                                  kMemLevel, Z_DEFAULT_STRATEGY);
  if (result != Z_OK) {
    // deflateInit2 leaves nothing allocated when it fails; do not call deflateEnd.
    compressor->stream_.state = nullptr;
    if (result == Z_MEM_ERROR) return absl::ResourceExhaustedError("zlib deflateInit2: no memory");
    return absl::InternalError(absl::StrCat("zlib deflateInit2 failed: ", result));
  }
  return compressor;
}

GzipCompressor::~GzipCompressor() {
  if (stream_.state != nullptr) deflateEnd(&stream_);
}

void GzipCompressor::Compress(std::string_view in, std::string* out) {
  // avail_in is 32 bits wide; feed larger inputs in pieces.
  while (!in.empty()) {
    const size_t piece = std::min<size_t>(in.size(), UINT_MAX);
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    stream_.avail_in = static_cast<uInt>(piece);
    Deflate(Z_NO_FLUSH, out);
    in.remove_prefix(piece);
  }
}

void GzipCompressor::Finish(std::string* out) {
  stream_.next_in = nullptr;
  stream_.avail_in = 0;
  Deflate(Z_FINISH, out);
  const int result = deflateReset(&stream_);
  assert(result == Z_OK);
  (void)result;
}

void GzipCompressor::Deflate(int flush, std::string* out) {
  for (;;) {
    const size_t old_size = out->size();
    out->resize(old_size + kOutputStep);
    stream_.next_out = reinterpret_cast<Bytef*>(out->data() + old_size);
    stream_.avail_out = static_cast<uInt>(kOutputStep);
    const int result = deflate(&stream_, flush);
    out->resize(old_size + kOutputStep - stream_.avail_out);
    // With output space and a valid stream, deflate cannot fail (Z_BUF_ERROR only means that it
    // had nothing to do). Anything else is memory corruption.
    if (result == Z_STREAM_ERROR) std::abort();
    if (flush == Z_FINISH ? result == Z_STREAM_END
                          : (stream_.avail_out != 0 && stream_.avail_in == 0)) {
      return;
    }
  }
}

}  // namespace dvexport::encode
