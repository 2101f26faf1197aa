#include "client/replacement_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

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

constexpr absl::string_view kTemporarySuffix = ".dvexport-XXXXXX";
constexpr std::chrono::milliseconds kFifoPollInterval{20};

// The longest temporary file name "directory" takes: its NAME_MAX, and no
// more than keeps the path within PATH_MAX.
size_t TemporaryNameLimit(const std::string& directory) {
  const long name_max = ::pathconf(directory.c_str(), _PC_NAME_MAX);
  size_t limit = name_max > 0 ? static_cast<size_t>(name_max) : NAME_MAX;
  const size_t path_room = PATH_MAX - 1 - std::min<size_t>(directory.size() + 1, PATH_MAX - 1);
  return std::min(limit, path_room);
}

// "name", cut so that "." + it + kTemporarySuffix takes at most "limit"
// bytes, and never inside a UTF-8 sequence.
absl::string_view TemporaryNamePrefix(absl::string_view name, size_t limit) {
  const size_t overhead = 1 + kTemporarySuffix.size();
  const size_t room = limit > overhead ? limit - overhead : 0;
  if (name.size() <= room) return name;
  size_t cut = room;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return name.substr(0, cut);
}

}  // namespace

ReplacementFile::ReplacementFile(std::string target) : target_(std::move(target)) {}

bool ReplacementFile::IsWrittenInPlace(const std::string& target) {
  struct stat st;
  return ::lstat(target.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

ReplacementFile::~ReplacementFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

absl::Status ReplacementFile::Create(std::chrono::steady_clock::time_point wait_until,
                                     const std::function<bool()>& stop) {
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
  // lstat: a symbolic link is replaced, not followed, unless it leads to a directory.
  struct stat st;
  if (::lstat(target_.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return OpenInPlace(wait_until, stop);
    struct stat followed;
    if (S_ISDIR(st.st_mode) || (S_ISLNK(st.st_mode) && ::stat(target_.c_str(), &followed) == 0 &&
                                S_ISDIR(followed.st_mode))) {
      return absl::FailedPreconditionError(absl::StrCat(target_, " is a directory"));
    }
    if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(target_, " is a ", S_ISBLK(st.st_mode) ? "block device" : "socket",
                       ": dvexport writes regular files, character devices and FIFOs only"));
    }
  }

  std::string path =
      absl::StrCat(directory_, "/.", TemporaryNamePrefix(name, TemporaryNameLimit(directory_)),
                   kTemporarySuffix);
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

absl::Status ReplacementFile::OpenInPlace(std::chrono::steady_clock::time_point wait_until,
                                          const std::function<bool()>& stop) {
  wait_until = std::min(wait_until, std::chrono::steady_clock::now() + kFifoReaderWait);
  // O_NONBLOCK: opening a FIFO nobody reads fails with ENXIO instead of
  // blocking, so that the wait stays bounded and can be stopped. O_NOFOLLOW:
  // what lstat saw must still be there.
  const int flags = O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd;
  while ((fd = ::open(target_.c_str(), flags)) < 0) {
    if (errno == EINTR) continue;
    if (errno != ENXIO) return absl::ErrnoToStatus(errno, absl::StrCat("opening ", target_));
    if (stop && stop()) {
      return absl::CancelledError(absl::StrCat("stopped while waiting for a reader of ", target_));
    }
    if (std::chrono::steady_clock::now() >= wait_until) {
      return absl::DeadlineExceededError(
          absl::StrCat("no process opened the FIFO ", target_, " for reading"));
    }
    std::this_thread::sleep_for(kFifoPollInterval);
  }
  fd_ = fd;
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("examining ", target_));
  }
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(target_, " was replaced by something else while it was opened"));
  }
  // O_NONBLOCK stays: the open file description is this one's own, and a
  // reader that stops reading must not block a write beyond its deadline
  // (BufferedFdWriter polls).
  in_place_ = true;
  return absl::OkStatus();
}

absl::Status ReplacementFile::Discard() {
  if (in_place_) {
    return absl::FailedPreconditionError(
        absl::StrCat(target_, " is written in place: what was written cannot be taken back"));
  }
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("emptying ", temporary_));
  }
  return absl::OkStatus();
}

absl::Status ReplacementFile::Commit() {
  if (in_place_) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return absl::ErrnoToStatus(errno, absl::StrCat("closing ", target_));
    return absl::OkStatus();
  }
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
