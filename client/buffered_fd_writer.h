#ifndef DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_
#define DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dvexport::client {

// How long a write to a pipe, a FIFO, a terminal or a socket may wait for
// its reader to take bytes. Writes to regular files never wait for a reader
// and ignore these.
struct WriteLimits {
  // A write still waiting then fails DEADLINE_EXCEEDED.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // A descriptor that turns readable to stop a waiting write (CANCELLED), e.g.
  // ExportClient::cancelled_fd(); -1 for none.
  int stop_fd = -1;
};

// Writes to a file descriptor through a large buffer, so that a stream of
// chunks of any size reaches the kernel as few large write() calls. The first
// Append to a descriptor with a reader (not a regular file) is written at once,
// so that the reader's first byte does not wait for the buffer to fill. On Linux,
// when the descriptor is a regular file, it also starts the write-back of
// every kWriteBackSize bytes written (sync_file_range), so that a final fsync
// has less left to do. Not thread-safe.
//
// Any other descriptor (a pipe, a FIFO, a terminal, a socket) is only written
// when poll(2) says it takes bytes, so that a reader that stops reading holds
// a write no longer than WriteLimits allow. A descriptor that is O_NONBLOCK
// (its open file description is the caller's own, as ReplacementFile's in
// place) takes whole buffers, and poll waits where it would block. A blocking
// one (stdout: its open file description is shared with the parent shell and
// other processes, so its flags are never changed) takes at most PIPE_BUF
// bytes per write, each after poll reported POLLOUT: a pipe or FIFO with room
// for one page takes that much without blocking (measured: ~0.3 s more CPU
// per GiB than 1 MiB writes). Only another writer of the same pipe filling it
// between the poll and the write can still make that write block.
class BufferedFdWriter {
 public:
  static constexpr size_t kBufferSize = 1 << 20;
  static constexpr size_t kWriteBackSize = 8 << 20;

  // "fd" must remain open while this writer is in use; the writer never closes
  // it. "name" names the destination in error messages.
  BufferedFdWriter(int fd, std::string name, WriteLimits limits = {});

  BufferedFdWriter(const BufferedFdWriter&) = delete;
  BufferedFdWriter& operator=(const BufferedFdWriter&) = delete;

  // Appends "data". The first write error is returned, and then again by every
  // later call: the file is incomplete from that point on.
  absl::Status Append(absl::string_view data);

  // Hands everything appended so far to the kernel (no fsync).
  absl::Status Flush();

  // Bytes the kernel took so far.
  int64_t bytes_written() const { return bytes_written_; }

 private:
  absl::Status WriteFully(const char* data, size_t size);
  // Waits until "fd_" takes bytes (or reports an error for the next write to
  // find), the deadline passes or "stop_fd" turns readable.
  absl::Status WaitUntilWritable();
  // Counts "size" more bytes written and, once kWriteBackSize or more wait
  // since the last call of sync_file_range, starts their write-back.
  void Written(size_t size);

  const int fd_;
  const std::string name_;
  const WriteLimits limits_;
  // Not a regular file: writes wait for poll (see the class comment).
  bool polled_ = false;
  // polled_ and blocking: writes of at most PIPE_BUF bytes, after POLLOUT.
  bool blocking_ = false;
  int64_t bytes_written_ = 0;
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
