#ifndef DVEXPORT_CLIENT_REPLACEMENT_FILE_H_
#define DVEXPORT_CLIENT_REPLACEMENT_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace dvexport::client {

// A new file, written under a temporary name beside "target", that replaces
// "target" atomically when committed. Until then "target" is untouched, and a
// ReplacementFile destroyed uncommitted removes its temporary file, so that
// readers of "target" see either the old file or the complete new one.
class ReplacementFile {
 public:
  explicit ReplacementFile(std::string target);
  ~ReplacementFile();

  ReplacementFile(const ReplacementFile&) = delete;
  ReplacementFile& operator=(const ReplacementFile&) = delete;

  // Creates the temporary file ".<name>.dvexport-XXXXXX" in the directory of
  // "target", with the permissions a new file gets from the umask. Fails if
  // "target" is a directory or its directory cannot be written.
  absl::Status Create();

  // The temporary file, open for writing. Requires a successful Create().
  int fd() const { return fd_; }

  // Syncs and closes the temporary file, renames it over "target" and syncs
  // the directory. If only the directory sync fails, "target" has already been
  // replaced; the status says so.
  absl::Status Commit();

 private:
  const std::string target_;
  std::string directory_;
  std::string temporary_;  // Empty until created, and again once renamed.
  int fd_ = -1;
};

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_REPLACEMENT_FILE_H_
