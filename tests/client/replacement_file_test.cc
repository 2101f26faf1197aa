#include "client/replacement_file.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/test_files.h"

namespace dvexport::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
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

TEST(ReplacementFileTest, ShortensTheTemporaryNameOfALongTarget) {
  testutil::TemporaryDirectory dir;
  // 255 bytes, NAME_MAX; then 250, which "." + name + ".dvexport-XXXXXX" exceeded.
  for (size_t length : {255u, 250u, 239u}) {
    const std::string name = std::string(length - 5, 'n') + ".json";
    const std::string target = dir.Join(name);
    ReplacementFile file(target);
    absl::Status created = file.Create();
    ASSERT_TRUE(created.ok()) << length << ": " << created;
    Write(file.fd(), "long");
    ASSERT_EQ(dir.List().size(), 1u);
    EXPECT_LE(dir.List()[0].size(), 255u);
    EXPECT_THAT(dir.List()[0], MatchesRegex("\\.n+.*\\.dvexport-......"));
    ASSERT_TRUE(file.Commit().ok());
    EXPECT_EQ(ReadFile(target), "long");
    EXPECT_THAT(dir.List(), ElementsAre(name));
    ASSERT_EQ(::unlink(target.c_str()), 0);
  }
}

TEST(ReplacementFileTest, ShortensALongNameAtACharacterBoundary) {
  testutil::TemporaryDirectory dir;
  // 83 three-byte characters and "x.csv", 254 bytes: the temporary name must
  // be shortened, and cut between characters.
  std::string name;
  for (int i = 0; i < 83; ++i) name += "\xE2\x82\xAC";  // U+20AC
  name += "x.csv";
  ASSERT_EQ(name.size(), 254u);
  ReplacementFile file(dir.Join(name));
  ASSERT_TRUE(file.Create().ok());
  ASSERT_EQ(dir.List().size(), 1u);
  const std::string temporary = dir.List()[0];
  EXPECT_LE(temporary.size(), 255u);
  const std::string prefix = temporary.substr(1, temporary.size() - 17);
  EXPECT_EQ(prefix.size() % 3, 0u) << "cut inside a character: " << prefix.size();
  EXPECT_EQ(name.compare(0, prefix.size(), prefix), 0);
}

TEST(ReplacementFileTest, ReplacesASymbolicLinkWithoutFollowingIt) {
  testutil::TemporaryDirectory dir;
  testutil::WriteFile(dir.Join("real.json"), "kept");
  ASSERT_EQ(::symlink("real.json", dir.Join("link.json").c_str()), 0);
  ReplacementFile file(dir.Join("link.json"));
  ASSERT_TRUE(file.Create().ok());
  EXPECT_FALSE(file.in_place());
  Write(file.fd(), "new");
  ASSERT_TRUE(file.Commit().ok());

  EXPECT_EQ(ReadFile(dir.Join("real.json")), "kept");
  struct stat st;
  ASSERT_EQ(::lstat(dir.Join("link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadFile(dir.Join("link.json")), "new");
}

TEST(ReplacementFileTest, RefusesASymbolicLinkToADirectory) {
  testutil::TemporaryDirectory dir;
  ASSERT_EQ(::mkdir(dir.Join("sub").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("sub", dir.Join("link").c_str()), 0);
  ReplacementFile file(dir.Join("link"));
  EXPECT_EQ(file.Create().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(dir.List(), ElementsAre("link", "sub"));
}

TEST(ReplacementFileTest, RefusesASocket) {
  testutil::TemporaryDirectory dir;
  const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = dir.Join("socket");
  ASSERT_LT(path.size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ReplacementFile file(path);
  absl::Status created = file.Create();
  ::close(listener);
  EXPECT_EQ(created.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(created.message(), HasSubstr("is a socket"));
  EXPECT_THAT(dir.List(), ElementsAre("socket"));
}

TEST(ReplacementFileTest, WritesACharacterDeviceInPlace) {
  ReplacementFile file("/dev/null");
  ASSERT_TRUE(file.Create().ok());
  EXPECT_TRUE(file.in_place());
  Write(file.fd(), "gone");
  EXPECT_EQ(file.Discard().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(file.Commit().ok());
  struct stat st;
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(ReplacementFileTest, WritesAFifoInPlaceOnceItHasAReader) {
  testutil::TemporaryDirectory dir;
  const std::string fifo = dir.Join("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string read;
  std::thread reader([&] {
    // Opens late: Create() must wait for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    read = ReadFile(fifo);
  });
  {
    ReplacementFile file(fifo);
    ASSERT_TRUE(file.Create(std::chrono::steady_clock::now() + std::chrono::seconds(20)).ok());
    EXPECT_TRUE(file.in_place());
    Write(file.fd(), "through the fifo");
    ASSERT_TRUE(file.Commit().ok());
  }
  reader.join();
  EXPECT_EQ(read, "through the fifo");
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(dir.List(), ElementsAre("fifo"));
}

TEST(ReplacementFileTest, WaitsForAFifoReaderOnlyUntilTheDeadlineOrStop) {
  testutil::TemporaryDirectory dir;
  const std::string fifo = dir.Join("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  ReplacementFile late(fifo);
  absl::Status waited = late.Create(start + std::chrono::milliseconds(300));
  EXPECT_EQ(waited.code(), absl::StatusCode::kDeadlineExceeded) << waited;
  EXPECT_THAT(waited.message(), HasSubstr("no process opened the FIFO " + fifo));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));

  ReplacementFile stopped(fifo);
  EXPECT_EQ(
      stopped.Create(std::chrono::steady_clock::time_point::max(), [] { return true; }).code(),
      absl::StatusCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THAT(dir.List(), ElementsAre("fifo"));
}

TEST(ReplacementFileTest, DiscardEmptiesTheTemporaryFile) {
  testutil::TemporaryDirectory dir;
  ReplacementFile file(dir.Join("out.csv"));
  ASSERT_TRUE(file.Create().ok());
  Write(file.fd(), "first attempt, broken");
  ASSERT_TRUE(file.Discard().ok());
  Write(file.fd(), "second");
  ASSERT_TRUE(file.Commit().ok());
  EXPECT_EQ(ReadFile(dir.Join("out.csv")), "second");
}

}  // namespace
}  // namespace dvexport::client
