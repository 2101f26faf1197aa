#ifndef DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_
#define DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dvexport::client {

// Writes to a file descriptor through a large buffer, so that a stream of
// chunks of any size reaches the kernel as few large write() calls. Not
// thread-safe.
class BufferedFdWriter {
 public:
  static constexpr size_t kBufferSize = 1 << 20;

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

  const int fd_;
  const std::string name_;
  std::unique_ptr<char[]> buffer_;
  size_t buffered_ = 0;
  absl::Status status_;
};

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_
