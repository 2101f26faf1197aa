// sync_file_range() is a GNU extension.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "client/buffered_fd_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dvexport::client {

BufferedFdWriter::BufferedFdWriter(int fd, std::string name)
    : fd_(fd), name_(std::move(name)), buffer_(new char[kBufferSize]) {
#ifdef __linux__
  // Pipes, sockets and terminals have no page cache to write back. With
  // O_APPEND the writes go to the end of the file, not to the current offset.
  // A wrong offset would only start the write-back of other pages.
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return;
  const int flags = ::fcntl(fd_, F_GETFL);
  const off_t offset =
      (flags >= 0 && (flags & O_APPEND) != 0) ? st.st_size : ::lseek(fd_, 0, SEEK_CUR);
  if (offset < 0) return;
  write_back_ = true;
  offset_ = offset;
  write_back_from_ = offset;
#endif
}

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
    Written(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

void BufferedFdWriter::Written(size_t size) {
  if (!write_back_) return;
  offset_ += static_cast<int64_t>(size);
  if (offset_ - write_back_from_ < static_cast<int64_t>(kWriteBackSize)) return;
#ifdef __linux__
  // Only a hint: its errors (EINVAL, ESPIPE, EIO...) are left to the fsync.
  (void)::sync_file_range(fd_, write_back_from_, offset_ - write_back_from_, SYNC_FILE_RANGE_WRITE);
#endif
  write_back_from_ = offset_;
}

}  // namespace dvexport::client
