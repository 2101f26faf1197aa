#ifndef DVEXPORT_COMMON_CRC32_H_
#define DVEXPORT_COMMON_CRC32_H_

#include <cstdint>
#include <string_view>

namespace dvexport::common {

// Extends "crc" (0 to start) with the CRC-32 of "bytes": the gzip/zlib CRC (ISO 3309), the same
// value as zlib's crc32(). Uses libdeflate's carry-less multiplication version when the build
// found libdeflate (several times faster than zlib 1.2's), else zlib.
uint32_t Crc32(uint32_t crc, std::string_view bytes);

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_CRC32_H_
