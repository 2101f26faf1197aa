#ifndef DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_
#define DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace dvexport::client {

// The write-back range of a regular file (WriteLimits::write_back_bytes) by
// default. Measured in docs/PERFORMANCE.md ("Writeback overlapped with the
// export").
inline constexpr int64_t kDefaultWriteBackBytes = int64_t{8} << 20;

// How long a write to a pipe, a FIFO, a terminal or a socket may wait for its
// reader to take bytes, and how a regular file is written back while it is
// written.
struct WriteLimits {
  // A write still waiting then fails DEADLINE_EXCEEDED. Writes to regular
  // files never wait for a reader and ignore it and stop_fd.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // A descriptor that turns readable to stop a waiting write (CANCELLED), e.g.
  // ExportClient::cancelled_fd(); -1 for none.
  int stop_fd = -1;
  // Regular files on Linux only: every this many bytes written, the writer
  // starts the write-back of those bytes and waits until the range before the
  // previous one is on disk (see BufferedFdWriter). 0: no write-back before
  // the caller's final fsync, which then writes everything.
  int64_t write_back_bytes = kDefaultWriteBackBytes;
};

// Writes to a file descriptor through a large buffer, so that a stream of
// chunks of any size reaches the kernel as few large write() calls. The first
// Append to a descriptor with a reader (not a regular file) is written at once,
// so that the reader's first byte does not wait for the buffer to fill. Not
// thread-safe.
//
// On Linux, when the descriptor is a regular file, the disk writes while the
// export goes on, as PostgreSQL's *_flush_after settings have it: once N =
// WriteLimits::write_back_bytes or more bytes were written since the last
// range, the writer starts the write-back of that range
// (sync_file_range(SYNC_FILE_RANGE_WRITE), which does not wait), and then
// waits until everything before the previous range is on disk. Without that,
// the kernel starts writing only past vm.dirty_background_ratio (10% of the
// available memory by default: GBs), and the final fsync writes hundreds of
// MB. The waits bound what is not yet on disk to about 3N bytes (two ranges
// under write-back and less than N since; each range is N bytes plus at most
// one write): an export that outruns the disk is held back instead of filling
// the page cache. A wait that sees a write-back error (EIO,
// ENOSPC) fails the writer: the kernel reports such an error once per open
// file, so that the final fsync would not see it again. sync_file_range
// failing with ENOSYS, EINVAL or ESPIPE (a file system without it) turns the
// write-back off for good, silently; the final fsync still writes everything.
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

  // sync_file_range(2)'s signature; see SetSyncFileRangeForTesting.
  using SyncFileRange =
      std::function<int(int fd, int64_t offset, int64_t bytes, unsigned int flags)>;

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

  // Calls "sync_file_range" instead of sync_file_range(2), which it can record
  // or fail (returning -1 with errno set): the write-back's ranges and its
  // errors are not observable from outside otherwise.
  void SetSyncFileRangeForTesting(SyncFileRange sync_file_range) {
    sync_file_range_ = std::move(sync_file_range);
  }

 private:
  absl::Status WriteFully(const char* data, size_t size);
  // Waits until "fd_" takes bytes (or reports an error for the next write to
  // find), the deadline passes or "stop_fd" turns readable.
  absl::Status WaitUntilWritable();
  // Counts "size" more bytes written and, once write_back_bytes or more wait
  // since the last range, starts their write-back and waits for the range
  // before the previous one. An error turns status_ into it.
  absl::Status Written(size_t size);
  // sync_file_range of [from, to) with "flags", retried on EINTR. ENOSYS,
  // EINVAL and ESPIPE turn write_back_ off (and are no error); other errors
  // are returned.
  absl::Status SyncRange(int64_t from, int64_t to, unsigned int flags);

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
  // Whether to start write-backs: a regular file on Linux, write_back_bytes
  // > 0, and sync_file_range has not failed with ENOSYS, EINVAL or ESPIPE.
  bool write_back_ = false;
  // The file offset after the last write; where the next range starts; where
  // the last range started (the previous one, once the next has started); and
  // the end of what was waited for: [waited_to_, previous_from_) is the range
  // before the previous one, waited for once the next range has started.
  int64_t offset_ = 0;
  int64_t write_back_from_ = 0;
  int64_t previous_from_ = 0;
  int64_t waited_to_ = 0;
  SyncFileRange sync_file_range_;  // Empty: sync_file_range(2).
};

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_BUFFERED_FD_WRITER_H_
