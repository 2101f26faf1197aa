// RequestBytes: a request's slices as one string.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "service/grpc/call_context.h"

namespace dvexport::grpc_door {
namespace {

TEST(RequestBytesTest, JoinsTheSlices) {
  std::vector<grpc::Slice> slices;
  for (char c : std::string("abc")) slices.emplace_back(&c, 1);
  EXPECT_EQ(*RequestBytes(grpc::ByteBuffer(slices.data(), slices.size())), "abc");
}

}  // namespace
}  // namespace dvexport::grpc_door
