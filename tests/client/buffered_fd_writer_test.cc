#include "client/buffered_fd_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/test_files.h"

namespace dvexport::client {
namespace {

using ::testing::HasSubstr;
using testutil::ReadFile;

class BufferedFdWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("out");
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { ::close(fd_); }

  testutil::TemporaryDirectory dir_;
  std::string path_;
  int fd_ = -1;
};

TEST_F(BufferedFdWriterTest, HoldsSmallAppendsUntilFlush) {
  BufferedFdWriter writer(fd_, "out");

  ASSERT_TRUE(writer.Append("{\"dataValues\":[").ok());
  ASSERT_TRUE(writer.Append("]}").ok());
  EXPECT_EQ(ReadFile(path_), "");

  ASSERT_TRUE(writer.Flush().ok());
  EXPECT_EQ(ReadFile(path_), "{\"dataValues\":[]}");
}

// What the reader of a pipe (dvexport export -o - | ...) can read now, without waiting.
std::string ReadAvailable(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

TEST(BufferedFdWriterPipeTest, TheReaderGetsTheFirstAppendAtOnceAndLaterOnesBuffered) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ASSERT_EQ(::fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);  // The read end only.
  {
    BufferedFdWriter writer(fds[1], "pipe");
    ASSERT_TRUE(writer.Append("{\"dataValues\":[{\"value\":\"1\"}").ok());
    EXPECT_EQ(ReadAvailable(fds[0]), "{\"dataValues\":[{\"value\":\"1\"}")
        << "the first chunk waits for the buffer to fill";
    ASSERT_TRUE(writer.Append(",{\"value\":\"2\"}").ok());
    ASSERT_TRUE(writer.Append("]}").ok());
    EXPECT_EQ(ReadAvailable(fds[0]), "") << "later chunks go out as large writes";
    ASSERT_TRUE(writer.Flush().ok());
    EXPECT_EQ(ReadAvailable(fds[0]), ",{\"value\":\"2\"}]}");
  }
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_F(BufferedFdWriterTest, WritesThroughAppendsOfABufferOrMore) {
  BufferedFdWriter writer(fd_, "out");
  const std::string large(BufferedFdWriter::kBufferSize, 'x');

  ASSERT_TRUE(writer.Append("head").ok());
  ASSERT_TRUE(writer.Append(large).ok());

  EXPECT_EQ(ReadFile(path_), "head" + large);
}

TEST_F(BufferedFdWriterTest, KeepsTheOrderOfAppendsOfAllSizes) {
  BufferedFdWriter writer(fd_, "out");
  std::string expected;
  const size_t sizes[] = {
      1, BufferedFdWriter::kBufferSize - 3,     7,  BufferedFdWriter::kBufferSize,
      5, 3 * BufferedFdWriter::kBufferSize / 2, 100};
  char fill = 'a';
  for (size_t size : sizes) {
    const std::string data(size, fill++);
    ASSERT_TRUE(writer.Append(data).ok());
    expected += data;
  }
  ASSERT_TRUE(writer.Flush().ok());

  EXPECT_TRUE(ReadFile(path_) == expected) << "the file differs from the appends";
}

// Past kWriteBackSize the writer starts write-backs (sync_file_range on Linux):
// hints that must leave the file as written, from any starting offset.
TEST_F(BufferedFdWriterTest, KeepsLargeFilesIntactPastTheWriteBackSize) {
  ASSERT_EQ(::write(fd_, "abc", 3), 3);
  BufferedFdWriter writer(fd_, "out");
  std::string expected = "abc";
  char fill = 'a';
  for (size_t size : {BufferedFdWriter::kWriteBackSize - 7, BufferedFdWriter::kBufferSize / 3,
                      2 * BufferedFdWriter::kWriteBackSize + 11, size_t{5}}) {
    const std::string data(size, fill++);
    ASSERT_TRUE(writer.Append(data).ok());
    expected += data;
  }
  ASSERT_TRUE(writer.Flush().ok());

  EXPECT_TRUE(ReadFile(path_) == expected) << "the file differs from the appends";
}

TEST_F(BufferedFdWriterTest, AppendsPastTheWriteBackSizeToAnAppendOnlyFile) {
  ASSERT_EQ(::write(fd_, "head", 4), 4);
  const int append = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(append, 0);
  BufferedFdWriter writer(append, "out");
  const std::string data(BufferedFdWriter::kWriteBackSize + 3, 'x');
  const absl::Status appended = writer.Append(data);
  const absl::Status flushed = writer.Flush();
  ::close(append);

  ASSERT_TRUE(appended.ok()) << appended;
  ASSERT_TRUE(flushed.ok()) << flushed;
  EXPECT_TRUE(ReadFile(path_) == "head" + data) << "the file differs from the appends";
}

TEST_F(BufferedFdWriterTest, ReportsTheFirstWriteErrorFromThenOn) {
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(full, 0);
  BufferedFdWriter writer(full, "export.csv");

  const absl::Status first = writer.Append(std::string(2 * BufferedFdWriter::kBufferSize, 'x'));
  const absl::Status later = writer.Append("y");
  const absl::Status flushed = writer.Flush();
  ::close(full);

  EXPECT_EQ(first.code(), absl::StatusCode::kResourceExhausted) << first;
  EXPECT_THAT(first.message(), HasSubstr("writing export.csv: No space left on device"));
  EXPECT_EQ(later, first);
  EXPECT_EQ(flushed, first);
}

}  // namespace
}  // namespace dvexport::client
