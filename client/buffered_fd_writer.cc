#include "client/buffered_fd_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dvexport::client {

BufferedFdWriter::BufferedFdWriter(int fd, std::string name)
    : fd_(fd), name_(std::move(name)), buffer_(new char[kBufferSize]) {}

absl::Status BufferedFdWriter::Append(absl::string_view data) {
  if (!status_.ok()) return status_;
  if (data.size() <= kBufferSize - buffered_) {
    std::memcpy(buffer_.get() + buffered_, data.data(), data.size());
    buffered_ += data.size();
    return absl::OkStatus();
  }
  absl::Status s = Flush();
  if (!s.ok()) return s;
  if (data.size() >= kBufferSize) return WriteFully(data.data(), data.size());
  std::memcpy(buffer_.get(), data.data(), data.size());
  buffered_ = data.size();
  return absl::OkStatus();
}

absl::Status BufferedFdWriter::Flush() {
  if (!status_.ok()) return status_;
  absl::Status s = WriteFully(buffer_.get(), buffered_);
  buffered_ = 0;
  return s;
}

absl::Status BufferedFdWriter::WriteFully(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd_, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      status_ = absl::ErrnoToStatus(errno, absl::StrCat("writing ", name_));
      return status_;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return absl::OkStatus();
}

}  // namespace dvexport::client
