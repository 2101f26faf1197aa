#ifndef DVEXPORT_COMMON_PLAIN_COPY_H_
#define DVEXPORT_COMMON_PLAIN_COPY_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace dvexport::common {

// Sixteen bytes at once, with GCC/Clang vector extensions (SSE2 on x86-64, NEON on ARM).
// Bytes are signed, so "v < 0x20" also holds for the non-ASCII bytes 0x80..0xFF.
using ByteVector = int8_t __attribute__((vector_size(16)));
using WordVector = uint64_t __attribute__((vector_size(16)));

// True if any lane of a comparison result is set.
inline bool AnyLane(ByteVector mask) {
  const auto words = reinterpret_cast<WordVector>(mask);
  return (words[0] | words[1]) != 0;
}

inline ByteVector LoadByteVector(const unsigned char* s) {
  ByteVector v;
  std::memcpy(&v, s, sizeof(v));
  return v;
}

inline void StoreByteVector(ByteVector v, char* p) { std::memcpy(p, &v, sizeof(v)); }

// Copies the "n" bytes at "s" to "p" and returns true if "attention" (ByteVector -> lane mask)
// selects none of them. Otherwise returns false, having written unspecified bytes to p[0, n).
// Reads only s[0, n), with one vector test for n <= 16 (head and tail loads overlap), which
// makes the short fields of a data value cheap. "attention" must not select 'a'.
template <typename AttentionMask>
[[gnu::always_inline]] inline bool CopyIfPlain(const unsigned char* s, size_t n, char* p,
                                               AttentionMask attention) {
  if (n >= 16) {
    for (size_t i = 0; n - i > 16; i += 16) {
      const ByteVector v = LoadByteVector(s + i);
      if (AnyLane(attention(v))) return false;
      StoreByteVector(v, p + i);
    }
    const ByteVector v = LoadByteVector(s + n - 16);
    if (AnyLane(attention(v))) return false;
    StoreByteVector(v, p + n - 16);
    return true;
  }
  constexpr uint64_t kFiller = 0x6161616161616161ULL;  // "aaaaaaaa"
  if (n >= 8) {
    uint64_t head;
    uint64_t tail;
    std::memcpy(&head, s, 8);
    std::memcpy(&tail, s + n - 8, 8);
    if (AnyLane(attention(reinterpret_cast<ByteVector>(WordVector{head, tail})))) return false;
    std::memcpy(p, &head, 8);
    std::memcpy(p + n - 8, &tail, 8);
    return true;
  }
  if (n >= 4) {
    uint32_t head;
    uint32_t tail;
    std::memcpy(&head, s, 4);
    std::memcpy(&tail, s + n - 4, 4);
    const uint64_t both = head | (uint64_t{tail} << 32);
    if (AnyLane(attention(reinterpret_cast<ByteVector>(WordVector{both, kFiller})))) return false;
    std::memcpy(p, &head, 4);
    std::memcpy(p + n - 4, &tail, 4);
    return true;
  }
  if (n == 0) return true;
  // One to three bytes: s[0], s[n / 2] and s[n - 1] cover them all.
  const uint64_t bytes = (kFiller & ~uint64_t{0xFFFFFF}) | s[0] | (uint64_t{s[n / 2]} << 8) |
                         (uint64_t{s[n - 1]} << 16);
  if (AnyLane(attention(reinterpret_cast<ByteVector>(WordVector{bytes, kFiller})))) return false;
  p[0] = static_cast<char>(s[0]);
  p[n / 2] = static_cast<char>(s[n / 2]);
  p[n - 1] = static_cast<char>(s[n - 1]);
  return true;
}

// Copies "bytes" to "p" as CopyIfPlain does, without a test (for bytes known to need no
// attention), and returns the end of the copy. Reads only "bytes".
[[gnu::always_inline]] inline char* CopyPlain(std::string_view bytes, char* p) {
  CopyIfPlain(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), p,
              [](ByteVector) { return ByteVector{}; });
  return p + bytes.size();
}

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_PLAIN_COPY_H_
