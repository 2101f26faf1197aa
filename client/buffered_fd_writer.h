#ifndef DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_
#define DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dvexport::client {

// Writes to a file descriptor through a large buffer, so that a stream of
// chunks of any size reaches the kernel as few large write() calls. On Linux,
// when the descriptor is a regular file, it also starts the write-back of
// every kWriteBackSize bytes written (sync_file_range), so that a final fsync
// has less left to do. Not thread-safe.
class BufferedFdWriter {
 public:
  static constexpr size_t kBufferSize = 1 << 20;
  static constexpr size_t kWriteBackSize = 8 << 20;

  // "fd" must remain open while this writer is in use; the writer never closes
  // it. "name" names the destination in error messages.
  BufferedFdWriter(int fd, std::string name);

  BufferedFdWriter(const BufferedFdWriter&) = delete;
  BufferedFdWriter& operator=(const BufferedFdWriter&) = delete;

  // Appends "data". The first write error is returned, and then again by every
  // later call: the file is incomplete from that point on.
  absl::Status Append(absl::string_view data);

  // Hands everything appended so far to the kernel (no fsync).
  absl::Status Flush();

 private:
  absl::Status WriteFully(const char* data, size_t size);
  // Counts "size" more bytes written and, once kWriteBackSize or more wait
  // since the last call of sync_file_range, starts their write-back.
  void Written(size_t size);

  const int fd_;
  const std::string name_;
  std::unique_ptr<char[]> buffer_;
  size_t buffered_ = 0;
  absl::Status status_;
  // Whether to start write-backs: a regular file on Linux.
  bool write_back_ = false;
  // The file offset after the last write, and where the next write-back
  // starts.
  int64_t offset_ = 0;
  int64_t write_back_from_ = 0;
};

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_
