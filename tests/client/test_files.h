#ifndef DVEXPORT_TESTS_CLIENT_TEST_FILES_H_
#define DVEXPORT_TESTS_CLIENT_TEST_FILES_H_

#include <string>
#include <vector>

namespace dvexport::client::testutil {

// A fresh directory under $TMPDIR (else /tmp), removed with its contents on
// destruction.
class TemporaryDirectory {
 public:
  TemporaryDirectory();
  ~TemporaryDirectory();

  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::string& path() const { return path_; }

  // path() + "/" + name.
  std::string Join(const std::string& name) const;

  // The names in the directory (hidden ones too, but not "." and ".."),
  // sorted.
  std::vector<std::string> List() const;

 private:
  std::string path_;
};

bool FileExists(const std::string& path);

// The contents of "path"; empty if it cannot be read.
std::string ReadFile(const std::string& path);

void WriteFile(const std::string& path, const std::string& contents);

}  // namespace dvexport::client::testutil

#endif  // DVEXPORT_TESTS_CLIENT_TEST_FILES_H_
