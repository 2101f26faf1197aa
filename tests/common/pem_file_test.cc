#include "common/pem_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace dvexport::common {
namespace {

class PemFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/pem_file_test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    for (const std::string& path : written_) std::remove(path.c_str());
    ::rmdir(dir_.c_str());
  }

  std::string Write(const std::string& name, const std::string& contents) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << contents;
    written_.push_back(path);
    return path;
  }

  std::string dir_;
  std::vector<std::string> written_;
};

TEST_F(PemFileTest, ReadsTheWholeFile) {
  const std::string pem =
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";
  absl::StatusOr<std::string> read = ReadPemFile(Write("cert.pem", pem));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, pem);
}

TEST_F(PemFileTest, FailsOnAMissingFileNamingIt) {
  const std::string path = dir_ + "/missing.pem";
  absl::StatusOr<std::string> read = ReadPemFile(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(read.status().message(), "cannot read " + path);
}

TEST_F(PemFileTest, FailsOnAnEmptyFile) {
  const std::string path = Write("empty.pem", "");
  EXPECT_EQ(ReadPemFile(path).status().message(), "cannot read " + path);
}

TEST_F(PemFileTest, FailsOnADirectory) {
  EXPECT_EQ(ReadPemFile(dir_).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dvexport::common
