#ifndef DVEXPORT_SERVICE_ENCODE_ZIP_COMPRESSOR_H_
#define DVEXPORT_SERVICE_ENCODE_ZIP_COMPRESSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "service/encode/file_compressor.h"
#include "service/encode/parallel_gzip_compressor.h"

namespace dvexport::encode {

struct ZipOptions {
  // The name of the one entry (UTF-8, at most 65535 bytes), e.g. "dataValues.json".
  std::string entry_name;
  // The entry's modification time, seconds since 1970-01-01 UTC, written as an MS-DOS date
  // and time in UTC (1980 to 2107; earlier times are written as 1980-01-01 00:00).
  int64_t modified_unix_seconds = 0;
  // The deflate settings (level 1..9, worker threads, blocks); gzip_wrapper is ignored.
  ParallelGzipOptions deflate;
};

// Streams bytes into a zip archive (PKWARE APPNOTE 6.3) of one deflated entry, laid out as Java's
// ZipOutputStream writes it (DHIS2's zip): a local header without sizes, general purpose bit 3
// and the UTF-8 name flag set, the deflate stream, a data descriptor with the CRC-32 and the
// sizes, then the central directory and its end record. Nothing is ever rewritten, so the bytes
// can go out as they come.
//
// ZIP64 when a size reaches 4 GiB - 1: the data descriptor holds 8-byte sizes, the central
// directory header a ZIP64 extra field with them, and a ZIP64 end of central directory record
// and locator precede the end record.
//
// The deflate stream comes from ParallelGzipCompressor (no gzip wrapper), so zip costs what gzip
// costs. Not thread-safe; one compressor per output stream.
class ZipCompressor final : public FileCompressor {
 public:
  // InvalidArgument for an empty or too long entry name or bad deflate options.
  static absl::StatusOr<std::unique_ptr<ZipCompressor>> Create(const ZipOptions& options);

  // Starts with the local file header.
  void Compress(std::string_view in, std::string* out) override;
  // Ends the entry: the rest of the deflate stream, the data descriptor, the central directory.
  void Finish(std::string* out) override;
  uint32_t input_crc32() const override { return deflate_->input_crc32(); }

 private:
  ZipCompressor(const ZipOptions& options, std::unique_ptr<ParallelGzipCompressor> deflate);

  // Appends the deflater's output for "in" (or its end) and counts it.
  void Deflate(std::string_view in, bool finish, std::string* out);

  const std::string entry_name_;
  const uint16_t dos_time_;
  const uint16_t dos_date_;
  const std::unique_ptr<ParallelGzipCompressor> deflate_;
  bool started_ = false;
  uint64_t header_bytes_ = 0;  // The local file header.
  uint64_t uncompressed_bytes_ = 0;
  uint64_t compressed_bytes_ = 0;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_ZIP_COMPRESSOR_H_
