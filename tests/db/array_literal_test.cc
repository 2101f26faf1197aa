#include "service/db/array_literal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace dvexport::db {
namespace {

TEST(ArrayLiteralTest, EmptyIsEmptyBraces) { EXPECT_EQ(ToArrayLiteral({}), "{}"); }

TEST(ArrayLiteralTest, OneValueHasNoComma) { EXPECT_EQ(ToArrayLiteral({42}), "{42}"); }

TEST(ArrayLiteralTest, ValuesInOrderSeparatedByCommas) {
  EXPECT_EQ(ToArrayLiteral({3, 1, 2}), "{3,1,2}");
}

TEST(ArrayLiteralTest, WritesTheWholeInt64Range) {
  EXPECT_EQ(
      ToArrayLiteral({std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::max()}),
      "{-9223372036854775808,0,9223372036854775807}");
}

}  // namespace
}  // namespace dvexport::db
