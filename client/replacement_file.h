#ifndef DVEXPORT_CLIENT_REPLACEMENT_FILE_H_
#define DVEXPORT_CLIENT_REPLACEMENT_FILE_H_

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace dvexport::client {

// Where an export's bytes go. Normally a new file, written under a temporary
// name beside "target", that replaces "target" atomically when committed:
// until then "target" is untouched, and a ReplacementFile destroyed
// uncommitted removes its temporary file, so that readers of "target" see
// either the old file or the complete new one. A symbolic link at "target" is
// itself replaced, never followed.
//
// A character device (/dev/null, a terminal) or a FIFO at "target" is never
// replaced: it is opened and written in place (in_place()), and bytes written
// to it cannot be taken back. Its descriptor is O_NONBLOCK (on an open file
// description of its own), so that a reader that stops reading cannot block a
// writer that polls (BufferedFdWriter does) beyond its deadline.
class ReplacementFile {
 public:
  // How long Create() waits for a process to open a FIFO for reading, at most.
  static constexpr std::chrono::seconds kFifoReaderWait{60};

  explicit ReplacementFile(std::string target);

  // Whether Create() would write "target" in place: a character device or a
  // FIFO is there now.
  static bool IsWrittenInPlace(const std::string& target);
  ~ReplacementFile();

  ReplacementFile(const ReplacementFile&) = delete;
  ReplacementFile& operator=(const ReplacementFile&) = delete;

  // Opens the output. For a regular file, a symbolic link or no file at all:
  // creates the temporary file ".<name>.dvexport-XXXXXX" in the directory of
  // "target" (<name> shortened, at a UTF-8 character boundary, so that the
  // temporary name fits the directory's NAME_MAX), with the permissions a new
  // file gets from the umask. For a character device or a FIFO: opens
  // "target" for writing; a FIFO nobody reads yet is waited for (checked every
  // 20 ms) until "wait_until" or kFifoReaderWait, whichever is first
  // (DEADLINE_EXCEEDED), or until "stop" returns true (CANCELLED). Fails if
  // "target" is a directory, a symbolic link to one, a block device or a
  // socket, or if its directory cannot be written.
  absl::Status Create(std::chrono::steady_clock::time_point wait_until =
                          std::chrono::steady_clock::time_point::max(),
                      const std::function<bool()>& stop = nullptr);

  // The output, open for writing. Requires a successful Create().
  int fd() const { return fd_; }

  // Whether "target" itself is written (a character device or a FIFO) rather
  // than a temporary file. Requires a successful Create().
  bool in_place() const { return in_place_; }

  // Throws away what was written so far (the temporary file becomes empty), so
  // that the export can be written again. FAILED_PRECONDITION when in_place().
  absl::Status Discard();

  // Syncs and closes the temporary file, renames it over "target" and syncs
  // the directory. If only the directory sync fails, "target" has already been
  // replaced; the status says so. When in_place(): closes "target".
  absl::Status Commit();

 private:
  absl::Status OpenInPlace(std::chrono::steady_clock::time_point wait_until,
                           const std::function<bool()>& stop);

  const std::string target_;
  std::string directory_;
  std::string temporary_;  // Empty until created, and again once renamed.
  int fd_ = -1;
  bool in_place_ = false;
};

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_REPLACEMENT_FILE_H_
