#ifndef DVEXPORT_SERVICE_ENCODE_CHUNK_BUFFER_H_
#define DVEXPORT_SERVICE_ENCODE_CHUNK_BUFFER_H_

#include <cassert>
#include <cstddef>
#include <memory>
#include <string_view>

namespace dvexport::encode {

// A contiguous, growable byte buffer that encoders write into without per-byte checks:
// reserve the worst case once, write through the returned pointer, then commit what was written.
//
//   char* p = buffer.Reserve(max_bytes);
//   ... write at most max_bytes at p ...
//   buffer.Commit(bytes_written);
//
// Not thread-safe.
class ChunkBuffer {
 public:
  // Allocates "initial_capacity" bytes up front (0 is allowed: nothing is allocated).
  explicit ChunkBuffer(size_t initial_capacity);

  ChunkBuffer(const ChunkBuffer&) = delete;
  ChunkBuffer& operator=(const ChunkBuffer&) = delete;

  // The moved-from buffer is left empty, with no capacity.
  ChunkBuffer(ChunkBuffer&& other) noexcept;
  ChunkBuffer& operator=(ChunkBuffer&& other) noexcept;

  ~ChunkBuffer() = default;

  // Makes at least "n" bytes writable after the content and returns a pointer to the first of
  // them. Their values are unspecified until written. Growing moves the content, invalidating
  // pointers previously returned by Reserve() or data().
  char* Reserve(size_t n) {
    if (n > capacity_ - size_) Grow(n);
    return data_.get() + size_;
  }

  // Appends the first "n" bytes written at the pointer returned by the last Reserve() call.
  // REQUIRES: "n" is at most the size passed to that Reserve() call.
  void Commit(size_t n) {
    assert(n <= capacity_ - size_);
    size_ += n;
  }

  // Appends a copy of "bytes".
  void Append(std::string_view bytes);

  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return std::string_view(data_.get(), size_); }

  // Drops the content and keeps the allocation.
  void Clear() { size_ = 0; }

  // Keeps the first "size" bytes of the content. REQUIRES: size <= size().
  void Truncate(size_t size) {
    assert(size <= size_);
    size_ = size;
  }

 private:
  // Reallocates so that at least "n" bytes fit after the content.
  void Grow(size_t n);

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_CHUNK_BUFFER_H_
