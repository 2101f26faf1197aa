#include "service/encode/chunk_buffer.h"

#include <cstring>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace dvexport::encode {
namespace {

TEST(ChunkBufferTest, StartsEmptyWithTheRequestedCapacity) {
  ChunkBuffer buffer(1000);
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.capacity(), 1000u);
  EXPECT_EQ(buffer.view(), "");
}

TEST(ChunkBufferTest, AppendAccumulatesBytes) {
  ChunkBuffer buffer(16);
  buffer.Append("abc");
  buffer.Append("");
  buffer.Append(std::string_view("d\0e", 3));
  EXPECT_EQ(buffer.view(), std::string_view("abcd\0e", 6));
  EXPECT_EQ(buffer.size(), 6u);
}

TEST(ChunkBufferTest, ReserveReturnsPointerAfterContentAndCommitKeepsOnlyCommittedBytes) {
  ChunkBuffer buffer(64);
  buffer.Append("head");
  char* p = buffer.Reserve(10);
  EXPECT_EQ(p, buffer.data() + 4);
  std::memcpy(p, "0123456789", 10);
  buffer.Commit(3);
  EXPECT_EQ(buffer.view(), "head012");
}

TEST(ChunkBufferTest, GrowsFromZeroCapacityAndPreservesContent) {
  ChunkBuffer buffer(0);
  EXPECT_EQ(buffer.capacity(), 0u);
  std::string expected;
  for (int i = 0; i < 10000; ++i) {
    const std::string piece = std::to_string(i) + ",";
    buffer.Append(piece);
    expected += piece;
  }
  EXPECT_EQ(buffer.view(), expected);
  EXPECT_GE(buffer.capacity(), expected.size());
}

TEST(ChunkBufferTest, ReserveLargerThanCapacityGrowsAtOnce) {
  ChunkBuffer buffer(8);
  buffer.Append("12345678");
  char* p = buffer.Reserve(1 << 20);
  EXPECT_GE(buffer.capacity() - buffer.size(), size_t{1} << 20);
  std::memset(p, 'x', 1 << 20);
  buffer.Commit(1 << 20);
  EXPECT_EQ(buffer.view().substr(0, 9), "12345678x");
  EXPECT_EQ(buffer.size(), 8u + (1 << 20));
}

TEST(ChunkBufferTest, ClearDropsContentAndKeepsCapacity) {
  ChunkBuffer buffer(32);
  buffer.Append(std::string(100, 'a'));
  const size_t capacity = buffer.capacity();
  const char* data = buffer.data();
  buffer.Clear();
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.capacity(), capacity);
  buffer.Append("b");
  EXPECT_EQ(buffer.data(), data);
  EXPECT_EQ(buffer.view(), "b");
}

TEST(ChunkBufferTest, MoveTransfersContentAndEmptiesSource) {
  ChunkBuffer source(16);
  source.Append("payload");
  ChunkBuffer moved(std::move(source));
  EXPECT_EQ(moved.view(), "payload");
  EXPECT_EQ(source.size(), 0u);      // NOLINT(bugprone-use-after-move): documented state.
  EXPECT_EQ(source.capacity(), 0u);  // NOLINT(bugprone-use-after-move)

  ChunkBuffer assigned(4);
  assigned = std::move(moved);
  EXPECT_EQ(assigned.view(), "payload");
  EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
  moved.Append("reusable");    // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.view(), "reusable");
}

}  // namespace
}  // namespace dvexport::encode
