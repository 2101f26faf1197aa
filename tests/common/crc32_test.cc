#include "common/crc32.h"

#include <zlib.h>

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace dvexport::common {
namespace {

TEST(Crc32Test, EqualsZlibForEveryLengthAndSplit) {
  std::mt19937 rng(3);
  std::string bytes(70'000, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  for (size_t length : {0u, 1u, 7u, 15u, 16u, 17u, 63u, 64u, 65u, 1000u, 4096u, 70'000u}) {
    const std::string_view data(bytes.data(), length);
    const uint32_t expected = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    EXPECT_EQ(Crc32(0, data), expected) << length;
    const size_t split = length / 3;
    EXPECT_EQ(Crc32(Crc32(0, data.substr(0, split)), data.substr(split)), expected) << length;
  }
  EXPECT_EQ(Crc32(0, "123456789"), 0xCBF43926u);  // The check value of CRC-32/ISO-HDLC.
}

}  // namespace
}  // namespace dvexport::common
