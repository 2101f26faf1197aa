#include "client/cli/file_paths.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace dvexport::cli {
namespace {

// Where a file is: its device and inode if it exists, else the path it would
// be created at.
struct FileIdentity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string would_be_at;
};

// Symbolic links followed at most, as the kernel's MAXSYMLINKS.
constexpr int kMaxLinks = 40;

std::pair<std::string, std::string> SplitDirectory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

FileIdentity Identify(const std::string& path) {
  FileIdentity identity;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    identity.exists = true;
    identity.device = st.st_dev;
    identity.inode = st.st_ino;
    return identity;
  }
  // Not there, or a dangling symbolic link: follow the links to the name that
  // would be created.
  std::string at = path;
  for (int links = 0; links < kMaxLinks; ++links) {
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    char target[PATH_MAX];
    const ssize_t length = ::readlink(at.c_str(), target, sizeof target - 1);
    if (length <= 0) break;
    const std::string link(target, static_cast<size_t>(length));
    at = link[0] == '/' ? link : absl::StrCat(SplitDirectory(at).first, "/", link);
  }
  auto [directory, name] = SplitDirectory(at);
  char resolved[PATH_MAX];
  if (::realpath(directory.c_str(), resolved) != nullptr) directory = resolved;
  identity.would_be_at = absl::StrCat(directory, "/", name);
  return identity;
}

struct NamedPath {
  absl::string_view flag;
  const std::string* path;
  bool written;
};

}  // namespace

bool SameFile(const std::string& a, const std::string& b) {
  const FileIdentity x = Identify(a);
  const FileIdentity y = Identify(b);
  if (x.exists != y.exists) return false;
  if (x.exists) return x.device == y.device && x.inode == y.inode;
  return x.would_be_at == y.would_be_at;
}

absl::Status CheckFilePaths(const CommandLine& command) {
  const bool sync = command.action == CommandLine::Action::kSync;
  std::vector<NamedPath> paths;
  if (!command.output.empty() && command.output != kStandardOutput) {
    paths.push_back({"-o", &command.output, true});
  }
  if (sync) paths.push_back({"--state", &command.state_file, true});
  paths.push_back({"--tls-ca", &command.channel.tls_ca_file, false});
  paths.push_back({"--tls-cert", &command.channel.tls_cert_file, false});
  paths.push_back({"--tls-key", &command.channel.tls_key_file, false});
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!paths[i].written || paths[i].path->empty()) continue;
    for (size_t j = 0; j < paths.size(); ++j) {
      if (j == i || paths[j].path->empty() || (paths[j].written && j < i)) continue;
      if (!SameFile(*paths[i].path, *paths[j].path)) continue;
      const std::string both =
          absl::StrCat(paths[i].flag, " ", *paths[i].path, " and ", paths[j].flag, " ",
                       *paths[j].path, " name the same file");
      if (paths[j].flag == "--state") {
        return absl::InvalidArgumentError(
            absl::StrCat(both,
                         ": the output would replace the change token (and the token the "
                         "output); give each a file of its own"));
      }
      return absl::InvalidArgumentError(absl::StrCat(both, ": writing ", paths[i].flag,
                                                     " would replace ", paths[j].flag,
                                                     "; give each a file of its own"));
    }
  }
  return absl::OkStatus();
}

}  // namespace dvexport::cli
