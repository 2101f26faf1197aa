#include "client/buffered_fd_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

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

// Appends "data" to "writer" in chunks of odd sizes (1 byte to a little over a
// buffer), so that writes end anywhere around the write-back ranges' ends.
absl::Status AppendInOddChunks(BufferedFdWriter& writer, const std::string& data) {
  static constexpr size_t kSizes[] = {1,     4093,  BufferedFdWriter::kBufferSize - 3,
                                      7,     65537, BufferedFdWriter::kBufferSize + 5,
                                      300007};
  size_t at = 0;
  for (size_t i = 0; at < data.size(); ++i) {
    const size_t size = std::min(kSizes[i % std::size(kSizes)], data.size() - at);
    absl::Status status = writer.Append(absl::string_view(data).substr(at, size));
    if (!status.ok()) return status;
    at += size;
  }
  return absl::OkStatus();
}

// Bytes that differ from one position to the next, so that a misplaced
// range shows.
std::string Pattern(size_t size) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>('a' + (i * 7 + i / 4099) % 26);
  return data;
}

// The writer starts write-backs (sync_file_range on Linux) and waits for them:
// the file must stay as written, with any range size, from any starting
// offset, with the real system call.
TEST_F(BufferedFdWriterTest, KeepsLargeFilesIntactWithAndWithoutWriteBack) {
  for (const int64_t write_back_bytes :
       {int64_t{0}, int64_t{1} << 20, int64_t{3 << 20} + 17, kDefaultWriteBackBytes}) {
    SCOPED_TRACE(write_back_bytes);
    ASSERT_EQ(::ftruncate(fd_, 0), 0);
    ASSERT_EQ(::lseek(fd_, 0, SEEK_SET), 0);
    ASSERT_EQ(::write(fd_, "abc", 3), 3);
    WriteLimits limits;
    limits.write_back_bytes = write_back_bytes;
    BufferedFdWriter writer(fd_, "out", limits);
    const std::string data = Pattern(2 * kDefaultWriteBackBytes + 12345);

    ASSERT_TRUE(AppendInOddChunks(writer, data).ok());
    ASSERT_TRUE(writer.Flush().ok());
    ASSERT_EQ(::fdatasync(fd_), 0);

    EXPECT_TRUE(ReadFile(path_) == "abc" + data) << "the file differs from the appends";
  }
}

TEST_F(BufferedFdWriterTest, AppendsPastTheWriteBackSizeToAnAppendOnlyFile) {
  ASSERT_EQ(::write(fd_, "head", 4), 4);
  const int append = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(append, 0);
  WriteLimits limits;
  limits.write_back_bytes = 1 << 20;
  BufferedFdWriter writer(append, "out", limits);
  const std::string data = Pattern(5 * limits.write_back_bytes + 3);
  const absl::Status appended = AppendInOddChunks(writer, data);
  const absl::Status flushed = writer.Flush();
  ::close(append);

  ASSERT_TRUE(appended.ok()) << appended;
  ASSERT_TRUE(flushed.ok()) << flushed;
  EXPECT_TRUE(ReadFile(path_) == "head" + data) << "the file differs from the appends";
}

constexpr unsigned kWait =
    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;

// One call of the writer's sync_file_range, and the file's size then.
struct SyncCall {
  int64_t offset;
  int64_t bytes;
  unsigned flags;
  int64_t file_size;
};

// Records the writer's calls of sync_file_range, and makes them.
class RecordingSync {
 public:
  BufferedFdWriter::SyncFileRange Function() {
    return [this](int fd, int64_t offset, int64_t bytes, unsigned flags) {
      struct stat st;
      EXPECT_EQ(::fstat(fd, &st), 0);
      calls.push_back({offset, bytes, flags, static_cast<int64_t>(st.st_size)});
      return ::sync_file_range(fd, offset, bytes, flags);
    };
  }
  std::vector<SyncCall> calls;
};

// The bound on what the disk may lag behind: every range of N bytes or more
// (one write more at most) starts its write-back, and once the next one has
// started, the writer waits for it. So that at no call more than the range
// waited for last, two ranges and less than N since are not known to be on
// disk. Without the waits, or with a wait that trails further, this fails.
TEST_F(BufferedFdWriterTest, WaitsForTheRangeBeforeThePreviousOne) {
  ASSERT_EQ(::write(fd_, "head", 4), 4);
  constexpr int64_t kRange = 1 << 20;
  WriteLimits limits;
  limits.write_back_bytes = kRange;
  BufferedFdWriter writer(fd_, "out", limits);
  RecordingSync sync;
  writer.SetSyncFileRangeForTesting(sync.Function());
  const std::string data = Pattern(20 * kRange + 999);

  ASSERT_TRUE(AppendInOddChunks(writer, data).ok());
  ASSERT_TRUE(writer.Flush().ok());
  EXPECT_TRUE(ReadFile(path_) == "head" + data) << "the file differs from the appends";

  std::vector<SyncCall> started, waited;
  for (const SyncCall& call : sync.calls) {
    if (call.flags == SYNC_FILE_RANGE_WRITE) {
      started.push_back(call);
    } else {
      EXPECT_EQ(call.flags, kWait) << "at offset " << call.offset;
      waited.push_back(call);
    }
  }
  // The ranges follow each other from the writer's first byte on, each of N
  // bytes or more (at most one write more); each is waited for once two more
  // have started: after the write-back of the third starts, the first is
  // waited for, and so on.
  ASSERT_GE(started.size(), 15u);
  ASSERT_EQ(waited.size(), started.size() - 2);
  int64_t from = 4;
  for (size_t i = 0; i < started.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(started[i].offset, from);
    EXPECT_GE(started[i].bytes, kRange);
    EXPECT_LT(started[i].bytes, kRange + static_cast<int64_t>(BufferedFdWriter::kBufferSize) + 5);
    EXPECT_EQ(started[i].file_size, from + started[i].bytes) << "a range the kernel does not have";
    from += started[i].bytes;
    if (i < waited.size()) {
      EXPECT_EQ(waited[i].offset, started[i].offset);
      EXPECT_EQ(waited[i].bytes, started[i].bytes);
    }
  }
  // In the order of the calls: a wait for range i right after the start of
  // range i + 2, and before that start, the file holds at most three ranges
  // past the last range waited for.
  int64_t waited_to = 4;
  size_t next_start = 0, next_wait = 0;
  for (const SyncCall& call : sync.calls) {
    if (call.flags == SYNC_FILE_RANGE_WRITE) {
      ++next_start;
      EXPECT_LE(call.file_size - waited_to,
                3 * (kRange + static_cast<int64_t>(BufferedFdWriter::kBufferSize) + 5))
          << "the disk may lag behind by more than three ranges at offset " << call.offset;
    } else {
      EXPECT_EQ(next_start, next_wait + 3) << "the wait for range " << next_wait;
      ++next_wait;
      waited_to = call.offset + call.bytes;
    }
  }
}

TEST_F(BufferedFdWriterTest, WritesNothingBackWhenTurnedOff) {
  WriteLimits limits;
  limits.write_back_bytes = 0;
  BufferedFdWriter writer(fd_, "out", limits);
  RecordingSync sync;
  writer.SetSyncFileRangeForTesting(sync.Function());
  const std::string data = Pattern(3 * kDefaultWriteBackBytes + 1);

  ASSERT_TRUE(AppendInOddChunks(writer, data).ok());
  ASSERT_TRUE(writer.Flush().ok());

  EXPECT_TRUE(ReadFile(path_) == data) << "the file differs from the appends";
  EXPECT_EQ(sync.calls.size(), 0u);
}

// A file system without sync_file_range: the writer goes on without write-back,
// silently (the final fsync writes everything).
TEST_F(BufferedFdWriterTest, GoesOnWithoutWriteBackWhereTheFileSystemHasNone) {
  for (const int error : {ENOSYS, EINVAL, ESPIPE}) {
    for (const bool at_the_wait : {false, true}) {
      SCOPED_TRACE(testing::Message() << "errno " << error << (at_the_wait ? " at the wait" : ""));
      ASSERT_EQ(::ftruncate(fd_, 0), 0);
      ASSERT_EQ(::lseek(fd_, 0, SEEK_SET), 0);
      WriteLimits limits;
      limits.write_back_bytes = 1 << 20;
      BufferedFdWriter writer(fd_, "out", limits);
      int calls = 0;
      writer.SetSyncFileRangeForTesting([&](int, int64_t, int64_t, unsigned flags) {
        ++calls;
        if (flags == kWait || !at_the_wait) {
          errno = error;
          return -1;
        }
        return 0;
      });
      const std::string data = Pattern(12 * limits.write_back_bytes + 5);

      const absl::Status appended = AppendInOddChunks(writer, data);
      const absl::Status flushed = writer.Flush();

      EXPECT_TRUE(appended.ok()) << appended;
      EXPECT_TRUE(flushed.ok()) << flushed;
      EXPECT_TRUE(ReadFile(path_) == data) << "the file differs from the appends";
      EXPECT_EQ(calls, at_the_wait ? 4 : 1) << "sync_file_range called again after it failed";
    }
  }
}

// EIO or ENOSPC from the write-back: the file may be incomplete on disk, and the
// kernel reports such an error once, so the final fsync may not: it fails the
// writer, as a failed write does.
TEST_F(BufferedFdWriterTest, ReportsWriteBackErrorsFromThenOn) {
  struct Case {
    int error;
    bool at_the_wait;
    absl::StatusCode code;
    const char* message;
  };
  for (const Case& c :
       {Case{EIO, true, absl::StatusCode::kUnknown, "Input/output error"},
        Case{ENOSPC, false, absl::StatusCode::kResourceExhausted, "No space left on device"}}) {
    SCOPED_TRACE(c.message);
    ASSERT_EQ(::ftruncate(fd_, 0), 0);
    ASSERT_EQ(::lseek(fd_, 0, SEEK_SET), 0);
    WriteLimits limits;
    limits.write_back_bytes = 1 << 20;
    BufferedFdWriter writer(fd_, "export.json", limits);
    writer.SetSyncFileRangeForTesting([&](int, int64_t, int64_t, unsigned flags) {
      if ((flags == kWait) == c.at_the_wait) {
        errno = c.error;
        return -1;
      }
      return 0;
    });

    const absl::Status appended = AppendInOddChunks(writer, Pattern(12 << 20));
    const absl::Status later = writer.Append("y");
    const absl::Status flushed = writer.Flush();

    EXPECT_EQ(appended.code(), c.code) << appended;
    EXPECT_THAT(appended.message(),
                HasSubstr(std::string("writing back export.json: ") + c.message));
    EXPECT_EQ(later, appended);
    EXPECT_EQ(flushed, appended);
  }
}

TEST_F(BufferedFdWriterTest, RetriesAWriteBackThatASignalInterrupted) {
  WriteLimits limits;
  limits.write_back_bytes = 1 << 20;
  BufferedFdWriter writer(fd_, "out", limits);
  int calls = 0;
  writer.SetSyncFileRangeForTesting([&](int, int64_t, int64_t, unsigned) {
    if (++calls % 2 == 1) {
      errno = EINTR;
      return -1;
    }
    return 0;
  });
  // Ranges of 1 to 2 MiB: 5 or more start, 3 or more are waited for.
  const std::string data = Pattern(12 << 20);

  ASSERT_TRUE(AppendInOddChunks(writer, data).ok());
  ASSERT_TRUE(writer.Flush().ok());

  EXPECT_TRUE(ReadFile(path_) == data) << "the file differs from the appends";
  EXPECT_GE(calls, 2 * (5 + 3)) << "each call once interrupted, then made again";
}

// No page cache to write back: a FIFO, /dev/null.
TEST(BufferedFdWriterOtherTest, WritesNothingBackToADevice) {
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(null, 0);
  WriteLimits limits;
  limits.write_back_bytes = 1 << 20;
  BufferedFdWriter writer(null, "/dev/null", limits);
  RecordingSync sync;
  writer.SetSyncFileRangeForTesting(sync.Function());

  const absl::Status appended = AppendInOddChunks(writer, Pattern(5 << 20));
  const absl::Status flushed = writer.Flush();
  ::close(null);

  EXPECT_TRUE(appended.ok()) << appended;
  EXPECT_TRUE(flushed.ok()) << flushed;
  EXPECT_EQ(writer.bytes_written(), 5 << 20);
  EXPECT_EQ(sync.calls.size(), 0u);
}

TEST(BufferedFdWriterOtherTest, WritesNothingBackToAFifo) {
  testutil::TemporaryDirectory dir;
  const std::string fifo = dir.Join("values");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  // Non-blocking, as ReplacementFile opens a FIFO.
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fcntl(reader, F_SETFL, 0), 0);
  std::string read;
  std::thread drain([&] {
    char buffer[65536];
    ssize_t got;
    while ((got = ::read(reader, buffer, sizeof buffer)) > 0) {
      read.append(buffer, static_cast<size_t>(got));
    }
  });
  WriteLimits limits;
  limits.write_back_bytes = 1 << 20;
  BufferedFdWriter writer(fd, "values", limits);
  RecordingSync sync;
  writer.SetSyncFileRangeForTesting(sync.Function());
  const std::string data = Pattern((5 << 20) + 3);

  const absl::Status appended = AppendInOddChunks(writer, data);
  const absl::Status flushed = writer.Flush();
  ::close(fd);
  drain.join();
  ::close(reader);

  EXPECT_TRUE(appended.ok()) << appended;
  EXPECT_TRUE(flushed.ok()) << flushed;
  EXPECT_TRUE(read == data) << "the reader got other bytes than the appends";
  EXPECT_EQ(sync.calls.size(), 0u);
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
