#include "service/encode/chunk_buffer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

namespace dvexport::encode {

namespace {
constexpr size_t kMinGrowth = 256;
}  // namespace

ChunkBuffer::ChunkBuffer(size_t initial_capacity)
    : data_(initial_capacity > 0 ? std::make_unique_for_overwrite<char[]>(initial_capacity)
                                 : nullptr),
      capacity_(initial_capacity) {}

ChunkBuffer::ChunkBuffer(ChunkBuffer&& other) noexcept
    : data_(std::move(other.data_)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

ChunkBuffer& ChunkBuffer::operator=(ChunkBuffer&& other) noexcept {
  if (this != &other) {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void ChunkBuffer::Append(std::string_view bytes) {
  if (bytes.empty()) return;
  std::memcpy(Reserve(bytes.size()), bytes.data(), bytes.size());
  size_ += bytes.size();
}

void ChunkBuffer::Grow(size_t n) {
  if (n > std::numeric_limits<size_t>::max() / 2 - size_) throw std::bad_alloc();
  // Doubling keeps appends amortized O(1).
  const size_t new_capacity = std::max({size_ + n, capacity_ * 2, kMinGrowth});
  auto new_data = std::make_unique_for_overwrite<char[]>(new_capacity);
  if (size_ > 0) std::memcpy(new_data.get(), data_.get(), size_);
  data_ = std::move(new_data);
  capacity_ = new_capacity;
}

}  // namespace dvexport::encode
