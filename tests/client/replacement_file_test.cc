#include "client/replacement_file.h"

#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/test_files.h"

namespace dvexport::client {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using testutil::ReadFile;

void Write(int fd, const std::string& data) {
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
}

TEST(ReplacementFileTest, WritesBesideTheTargetUntilCommitted) {
  testutil::TemporaryDirectory dir;
  const std::string target = dir.Join("out.csv");
  testutil::WriteFile(target, "old");
  ReplacementFile file(target);
  ASSERT_TRUE(file.Create().ok());
  Write(file.fd(), "new");

  EXPECT_EQ(ReadFile(target), "old");
  ASSERT_EQ(dir.List().size(), 2u);
  EXPECT_THAT(dir.List()[0], MatchesRegex("\\.out\\.csv\\.dvexport-......"));

  ASSERT_TRUE(file.Commit().ok());
  EXPECT_EQ(ReadFile(target), "new");
  EXPECT_THAT(dir.List(), ElementsAre("out.csv"));
}

TEST(ReplacementFileTest, RemovesTheTemporaryFileUnlessCommitted) {
  testutil::TemporaryDirectory dir;
  {
    ReplacementFile file(dir.Join("out.csv"));
    ASSERT_TRUE(file.Create().ok());
    Write(file.fd(), "partial");
  }
  EXPECT_THAT(dir.List(), IsEmpty());
}

TEST(ReplacementFileTest, RejectsATargetWithoutAFileName) {
  testutil::TemporaryDirectory dir;
  for (const std::string& target :
       {dir.path() + "/", dir.Join("."), dir.Join(".."), std::string()}) {
    ReplacementFile file(target);
    EXPECT_EQ(file.Create().code(), absl::StatusCode::kInvalidArgument) << "'" << target << "'";
  }
  EXPECT_THAT(dir.List(), IsEmpty());
}

}  // namespace
}  // namespace dvexport::client
