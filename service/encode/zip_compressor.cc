#include "service/encode/zip_compressor.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/civil_date.h"

namespace dvexport::encode {

namespace {

constexpr uint32_t kLocalFileHeaderSignature = 0x04034b50;
constexpr uint32_t kDataDescriptorSignature = 0x08074b50;
constexpr uint32_t kCentralDirectoryHeaderSignature = 0x02014b50;
constexpr uint32_t kZip64EndOfCentralDirectorySignature = 0x06064b50;
constexpr uint32_t kZip64EndOfCentralDirectoryLocatorSignature = 0x07064b50;
constexpr uint32_t kEndOfCentralDirectorySignature = 0x06054b50;

// Version needed to extract: 2.0 (deflate, data descriptor), 4.5 (ZIP64).
constexpr uint16_t kVersionDeflate = 20;
constexpr uint16_t kVersionZip64 = 45;
// General purpose bits: 3 (sizes and CRC-32 in the data descriptor), 11 (the name is UTF-8).
constexpr uint16_t kFlags = (1 << 3) | (1 << 11);
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kZip64ExtraFieldTag = 0x0001;
// A 32-bit size or offset field at this value means "see the ZIP64 field".
constexpr uint64_t kZip64Marker = 0xffffffff;

void Append16(uint16_t v, std::string* out) {
  const char bytes[2] = {static_cast<char>(v), static_cast<char>(v >> 8)};
  out->append(bytes, 2);
}

void Append32(uint32_t v, std::string* out) {
  Append16(static_cast<uint16_t>(v), out);
  Append16(static_cast<uint16_t>(v >> 16), out);
}

void Append64(uint64_t v, std::string* out) {
  Append32(static_cast<uint32_t>(v), out);
  Append32(static_cast<uint32_t>(v >> 32), out);
}

// MS-DOS time and date fields (2-second resolution, years 1980 to 2107), in UTC.
std::pair<uint16_t, uint16_t> DosTimeAndDate(int64_t unix_seconds) {
  constexpr int64_t kFirst = 315'532'800;   // 1980-01-01T00:00:00Z
  constexpr int64_t kLast = 4'354'819'198;  // 2107-12-31T23:59:58Z
  if (unix_seconds < kFirst) unix_seconds = kFirst;
  if (unix_seconds > kLast) unix_seconds = kLast;
  int64_t days = unix_seconds / 86'400;
  const int64_t second_of_day = unix_seconds % 86'400;
  const common::CivilDate date = common::CivilFromDays(days);
  const auto hour = static_cast<uint16_t>(second_of_day / 3600);
  const auto minute = static_cast<uint16_t>(second_of_day / 60 % 60);
  const auto second = static_cast<uint16_t>(second_of_day % 60);
  const auto dos_time = static_cast<uint16_t>(hour << 11 | minute << 5 | second / 2);
  const auto dos_date = static_cast<uint16_t>((date.year - 1980) << 9 | date.month << 5 | date.day);
  return {dos_time, dos_date};
}

}  // namespace

absl::StatusOr<std::unique_ptr<ZipCompressor>> ZipCompressor::Create(const ZipOptions& options) {
  if (options.entry_name.empty() || options.entry_name.size() > 0xffff) {
    return absl::InvalidArgumentError(absl::StrCat(
        "zip entry name must be 1 to 65535 bytes long, got ", options.entry_name.size()));
  }
  ParallelGzipOptions deflate_options = options.deflate;
  deflate_options.gzip_wrapper = false;
  absl::StatusOr<std::unique_ptr<ParallelGzipCompressor>> deflate =
      ParallelGzipCompressor::Create(deflate_options);
  if (!deflate.ok()) return deflate.status();
  return std::unique_ptr<ZipCompressor>(new ZipCompressor(options, *std::move(deflate)));
}

ZipCompressor::ZipCompressor(const ZipOptions& options,
                             std::unique_ptr<ParallelGzipCompressor> deflate)
    : entry_name_(options.entry_name),
      dos_time_(DosTimeAndDate(options.modified_unix_seconds).first),
      dos_date_(DosTimeAndDate(options.modified_unix_seconds).second),
      deflate_(std::move(deflate)) {}

void ZipCompressor::Compress(std::string_view in, std::string* out) {
  if (!started_) {
    const size_t before = out->size();
    Append32(kLocalFileHeaderSignature, out);
    Append16(kVersionDeflate, out);
    Append16(kFlags, out);
    Append16(kMethodDeflate, out);
    Append16(dos_time_, out);
    Append16(dos_date_, out);
    Append32(0, out);  // CRC-32, compressed and uncompressed size: in the data descriptor.
    Append32(0, out);
    Append32(0, out);
    Append16(static_cast<uint16_t>(entry_name_.size()), out);
    Append16(0, out);  // No extra field.
    out->append(entry_name_);
    header_bytes_ = out->size() - before;
    started_ = true;
  }
  Deflate(in, /*finish=*/false, out);
}

void ZipCompressor::Deflate(std::string_view in, bool finish, std::string* out) {
  const size_t before = out->size();
  if (finish) {
    deflate_->Finish(out);
  } else {
    deflate_->Compress(in, out);
  }
  uncompressed_bytes_ += in.size();
  compressed_bytes_ += out->size() - before;
}

void ZipCompressor::Finish(std::string* out) {
  if (!started_) Compress({}, out);
  Deflate({}, /*finish=*/true, out);
  const uint32_t crc = deflate_->input_crc32();
  const bool zip64 = compressed_bytes_ >= kZip64Marker || uncompressed_bytes_ >= kZip64Marker;

  Append32(kDataDescriptorSignature, out);
  Append32(crc, out);
  if (zip64) {
    Append64(compressed_bytes_, out);
    Append64(uncompressed_bytes_, out);
  } else {
    Append32(static_cast<uint32_t>(compressed_bytes_), out);
    Append32(static_cast<uint32_t>(uncompressed_bytes_), out);
  }
  const uint64_t central_directory_offset = header_bytes_ + compressed_bytes_ + (zip64 ? 24 : 16);

  // The central directory: one header. The entry starts at offset 0, so only the sizes can need
  // ZIP64 fields.
  const size_t central_directory_start = out->size();
  const bool zip64_compressed = compressed_bytes_ >= kZip64Marker;
  const bool zip64_uncompressed = uncompressed_bytes_ >= kZip64Marker;
  const uint16_t version = zip64 ? kVersionZip64 : kVersionDeflate;
  Append32(kCentralDirectoryHeaderSignature, out);
  Append16(version, out);  // Made by (MS-DOS attributes, as Java writes it).
  Append16(version, out);  // Needed to extract.
  Append16(kFlags, out);
  Append16(kMethodDeflate, out);
  Append16(dos_time_, out);
  Append16(dos_date_, out);
  Append32(crc, out);
  Append32(static_cast<uint32_t>(zip64_compressed ? kZip64Marker : compressed_bytes_), out);
  Append32(static_cast<uint32_t>(zip64_uncompressed ? kZip64Marker : uncompressed_bytes_), out);
  Append16(static_cast<uint16_t>(entry_name_.size()), out);
  const uint16_t zip64_data = (zip64_uncompressed ? 8 : 0) + (zip64_compressed ? 8 : 0);
  Append16(zip64 ? 4 + zip64_data : 0, out);  // Extra field length.
  Append16(0, out);                           // Comment length.
  Append16(0, out);                           // Disk number start.
  Append16(0, out);                           // Internal attributes.
  Append32(0, out);                           // External attributes.
  Append32(0, out);                           // Offset of the local header.
  out->append(entry_name_);
  if (zip64) {
    // The ZIP64 extended information: the sizes marked above, uncompressed first.
    Append16(kZip64ExtraFieldTag, out);
    Append16(zip64_data, out);
    if (zip64_uncompressed) Append64(uncompressed_bytes_, out);
    if (zip64_compressed) Append64(compressed_bytes_, out);
  }
  const uint64_t central_directory_size = out->size() - central_directory_start;

  if (zip64) {
    const uint64_t zip64_end_offset = central_directory_offset + central_directory_size;
    Append32(kZip64EndOfCentralDirectorySignature, out);
    Append64(44, out);  // The size of the rest of this record.
    Append16(kVersionZip64, out);
    Append16(kVersionZip64, out);
    Append32(0, out);  // This disk.
    Append32(0, out);  // The disk of the central directory.
    Append64(1, out);  // Entries on this disk.
    Append64(1, out);  // Entries in all.
    Append64(central_directory_size, out);
    Append64(central_directory_offset, out);
    Append32(kZip64EndOfCentralDirectoryLocatorSignature, out);
    Append32(0, out);  // The disk of the ZIP64 end record.
    Append64(zip64_end_offset, out);
    Append32(1, out);  // Disks in all.
  }
  Append32(kEndOfCentralDirectorySignature, out);
  Append16(0, out);  // This disk.
  Append16(0, out);  // The disk of the central directory.
  Append16(1, out);  // Entries on this disk.
  Append16(1, out);  // Entries in all.
  Append32(static_cast<uint32_t>(central_directory_size), out);
  Append32(static_cast<uint32_t>(std::min<uint64_t>(central_directory_offset, kZip64Marker)), out);
  Append16(0, out);  // Comment length.

  started_ = false;
  header_bytes_ = uncompressed_bytes_ = compressed_bytes_ = 0;
}

}  // namespace dvexport::encode
