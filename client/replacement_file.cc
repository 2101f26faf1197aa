#include "client/replacement_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dvexport::client {
namespace {

// The process umask, read without changing it: umask(2) can only swap it,
// which would race with other threads creating files.
mode_t CurrentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "Umask:")) {
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
  }
  return 022;
}

}  // namespace

ReplacementFile::ReplacementFile(std::string target) : target_(std::move(target)) {}

ReplacementFile::~ReplacementFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

absl::Status ReplacementFile::Create() {
  const size_t slash = target_.find_last_of('/');
  const absl::string_view name =
      slash == std::string::npos ? target_ : absl::string_view(target_).substr(slash + 1);
  if (slash == std::string::npos) {
    directory_.assign(1, '.');
  } else {
    directory_ = target_.substr(0, std::max<size_t>(slash, 1));
  }
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat("not a file name: ", target_));
  }
  struct stat st;
  if (::stat(target_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(target_, " is a directory"));
  }

  std::string path = absl::StrCat(directory_, "/.", name, ".dvexport-XXXXXX");
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("creating a temporary file in ", directory_));
  }
  fd_ = fd;
  temporary_ = std::move(path);
  // mkostemp creates the file 0600; the export gets the mode of any new file.
  if (::fchmod(fd_, 0666 & ~CurrentUmask()) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("setting the mode of ", temporary_));
  }
  return absl::OkStatus();
}

absl::Status ReplacementFile::Commit() {
  if (::fsync(fd_) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("syncing ", temporary_));
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("closing ", temporary_));
  }
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("renaming ", temporary_, " to ", target_));
  }
  temporary_.clear();

  // Makes the rename itself durable.
  const int directory_fd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd < 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat(target_, " is written, but opening its directory to sync it"));
  }
  // Some file systems cannot sync a directory (EINVAL); nothing more can be done there.
  const bool synced = ::fsync(directory_fd) == 0 || errno == EINVAL;
  const int sync_errno = errno;
  ::close(directory_fd);
  if (!synced) {
    return absl::ErrnoToStatus(sync_errno,
                               absl::StrCat(target_, " is written, but syncing ", directory_));
  }
  return absl::OkStatus();
}

}  // namespace dvexport::client
