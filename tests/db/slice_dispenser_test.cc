#include "service/db/slice_dispenser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace dvexport::db {
namespace {

TEST(SliceDispenserTest, StartsWithTheWholeTable) {
  SliceDispenser slices;
  std::optional<BlockRange> slice = BlockRange{};
  ASSERT_TRUE(slices.Next(&slice));
  EXPECT_FALSE(slice.has_value());
  EXPECT_FALSE(slices.Next(&slice));
}

TEST(SliceDispenserTest, HandsOutSlicesInTableOrderThenNothing) {
  SliceDispenser slices;
  slices.Reset({BlockRange{0, 10}, BlockRange{10, 20}, BlockRange{20, std::nullopt}});
  std::optional<BlockRange> slice;
  for (int64_t first : {0, 10, 20}) {
    ASSERT_TRUE(slices.Next(&slice));
    EXPECT_EQ(slice->first_block, first);
  }
  EXPECT_FALSE(slices.Next(&slice));
  EXPECT_FALSE(slices.Next(&slice));
}

TEST(SliceDispenserTest, EachSliceGoesToExactlyOneOfManyThreads) {
  constexpr int kSlices = 10000;
  constexpr int kThreads = 8;
  std::vector<std::optional<BlockRange>> all;
  for (int i = 0; i < kSlices; ++i) all.push_back(BlockRange{i, i + 1});
  SliceDispenser slices;
  slices.Reset(all);
  std::vector<std::vector<int64_t>> taken(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::optional<BlockRange> slice;
      while (slices.Next(&slice)) taken[t].push_back(slice->first_block);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<int64_t> merged;
  for (const std::vector<int64_t>& some : taken)
    merged.insert(merged.end(), some.begin(), some.end());
  std::sort(merged.begin(), merged.end());
  ASSERT_EQ(merged.size(), static_cast<size_t>(kSlices));
  for (int i = 0; i < kSlices; ++i) EXPECT_EQ(merged[i], i);
}

}  // namespace
}  // namespace dvexport::db
