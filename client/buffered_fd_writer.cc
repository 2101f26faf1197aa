// sync_file_range() is a GNU extension.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "client/buffered_fd_writer.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dvexport::client {

BufferedFdWriter::BufferedFdWriter(int fd, std::string name, WriteLimits limits)
    : fd_(fd), name_(std::move(name)), limits_(limits), buffer_(new char[kBufferSize]) {
  struct stat st;
  const int flags = ::fcntl(fd_, F_GETFL);
  const bool examined = ::fstat(fd_, &st) == 0;
  if (examined && !S_ISREG(st.st_mode)) {
    polled_ = true;
    blocking_ = flags < 0 || (flags & O_NONBLOCK) == 0;
    return;
  }
#ifdef __linux__
  // Pipes, sockets and terminals have no page cache to write back. With
  // O_APPEND the writes go to the end of the file, not to the current offset.
  // A wrong offset would only write back (and wait for) other pages.
  if (!examined || limits_.write_back_bytes <= 0) return;
  const off_t offset =
      (flags >= 0 && (flags & O_APPEND) != 0) ? st.st_size : ::lseek(fd_, 0, SEEK_CUR);
  if (offset < 0) return;
  write_back_ = true;
  offset_ = offset;
  write_back_from_ = offset;
  previous_from_ = offset;
  waited_to_ = offset;
#endif
}

absl::Status BufferedFdWriter::Append(absl::string_view data) {
  if (!status_.ok()) return status_;
  // A reader at the other end (a pipe, a FIFO, a terminal) gets the first bytes as they arrive
  // rather than after the first 1 MiB: the export's first chunk is written through.
  if (polled_ && bytes_written_ == 0 && buffered_ == 0) return WriteFully(data.data(), data.size());
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
    if (polled_ && blocking_) {
      status_ = WaitUntilWritable();
      if (!status_.ok()) return status_;
    }
    const ssize_t written =
        ::write(fd_, data, polled_ && blocking_ ? std::min<size_t>(size, PIPE_BUF) : size);
    if (written < 0) {
      if (errno == EINTR) continue;
      if (polled_ && !blocking_ && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        status_ = WaitUntilWritable();
        if (!status_.ok()) return status_;
        continue;
      }
      status_ = absl::ErrnoToStatus(errno, absl::StrCat("writing ", name_));
      return status_;
    }
    data += written;
    size -= static_cast<size_t>(written);
    bytes_written_ += written;
    status_ = Written(static_cast<size_t>(written));
    if (!status_.ok()) return status_;
  }
  return absl::OkStatus();
}

absl::Status BufferedFdWriter::WaitUntilWritable() {
  pollfd fds[2] = {{fd_, POLLOUT, 0}, {limits_.stop_fd, POLLIN, 0}};
  const nfds_t count = limits_.stop_fd >= 0 ? 2 : 1;
  for (;;) {
    int timeout_ms = -1;
    if (limits_.deadline != std::chrono::steady_clock::time_point::max()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          limits_.deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        return absl::DeadlineExceededError(absl::StrCat(
            "writing ", name_, ": the deadline passed while its reader took no more bytes"));
      }
      timeout_ms = static_cast<int>(std::min<int64_t>(left.count(), INT_MAX));
    }
    const int ready = ::poll(fds, count, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("waiting to write ", name_));
    }
    if (count == 2 && fds[1].revents != 0) {
      return absl::CancelledError(
          absl::StrCat("writing ", name_, ": stopped while its reader took no more bytes"));
    }
    // POLLOUT, or POLLERR/POLLHUP/POLLNVAL, which the next write reports.
    if (fds[0].revents != 0) return absl::OkStatus();
  }
}

absl::Status BufferedFdWriter::Written(size_t size) {
  if (!write_back_) return absl::OkStatus();
  offset_ += static_cast<int64_t>(size);
  if (offset_ - write_back_from_ < limits_.write_back_bytes) return absl::OkStatus();
#ifdef __linux__
  absl::Status synced = SyncRange(write_back_from_, offset_, SYNC_FILE_RANGE_WRITE);
  if (!synced.ok() || !write_back_) return synced;
  // The range before the previous one has had two ranges' worth of writes to
  // reach the disk: when the disk keeps up, this wait is over at once; when it
  // does not, the export waits here rather than piling up dirty pages for the
  // final fsync. WRITE as well: SYNC_FILE_RANGE_WRITE alone may skip pages
  // it finds locked or already under write-back, which this call writes too.
  if (previous_from_ > waited_to_) {
    synced =
        SyncRange(waited_to_, previous_from_,
                  SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    if (!synced.ok() || !write_back_) return synced;
    waited_to_ = previous_from_;
  }
#endif
  previous_from_ = write_back_from_;
  write_back_from_ = offset_;
  return absl::OkStatus();
}

absl::Status BufferedFdWriter::SyncRange(int64_t from, int64_t to, unsigned int flags) {
#ifdef __linux__
  for (;;) {
    const int result = sync_file_range_ ? sync_file_range_(fd_, from, to - from, flags)
                                        : ::sync_file_range(fd_, from, to - from, flags);
    if (result == 0) return absl::OkStatus();
    if (errno == EINTR) continue;
    // The file system (or the kernel) cannot do it: the final fsync writes
    // everything, as it would without write-back.
    if (errno == ENOSYS || errno == EINVAL || errno == ESPIPE) {
      write_back_ = false;
      return absl::OkStatus();
    }
    // EIO, ENOSPC...: the bytes already written may not reach the disk, and a
    // wait has consumed the error, which the final fsync would then not report.
    return absl::ErrnoToStatus(errno, absl::StrCat("writing back ", name_));
  }
#else
  (void)from;
  (void)to;
  (void)flags;
  write_back_ = false;
  return absl::OkStatus();
#endif
}

}  // namespace dvexport::client
