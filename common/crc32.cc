#include "common/crc32.h"

#include <algorithm>

#ifdef DVEXPORT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif

namespace dvexport::common {

uint32_t Crc32(uint32_t crc, std::string_view bytes) {
#ifdef DVEXPORT_HAVE_LIBDEFLATE
  return libdeflate_crc32(crc, bytes.data(), bytes.size());
#else
  // zlib's crc32 takes a uInt length; feed very large inputs in pieces.
  while (!bytes.empty()) {
    const size_t n = std::min<size_t>(bytes.size(), 1u << 30);
    crc = static_cast<uint32_t>(
        crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n)));
    bytes.remove_prefix(n);
  }
  return crc;
#endif
}

}  // namespace dvexport::common
