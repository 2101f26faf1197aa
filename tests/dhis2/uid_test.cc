#include "service/dhis2/uid.h"

#include <string_view>

#include "gtest/gtest.h"

namespace dvexport::dhis2 {
namespace {

TEST(IsValidUidTest, AcceptsLetterThenTenLettersOrDigits) {
  for (std::string_view uid :
       {"ImspTQPwCqd", "HllvX50cXC0", "a0000000000", "Z9999999999", "abcdefghijk", "ABCDEFGHIJK"}) {
    EXPECT_TRUE(IsValidUid(uid)) << uid;
  }
}

TEST(IsValidUidTest, RejectsEverythingElse) {
  const std::string_view invalid[] = {
      "",
      "ImspTQPwCq",         // 10 characters
      "ImspTQPwCqdX",       // 12 characters
      "1mspTQPwCqd",        // starts with a digit
      "_mspTQPwCqd",        // starts with an underscore
      "Imsp-QPwCqd",        // hyphen
      "Imsp_QPwCqd",        // underscore
      "Imsp QPwCqd",        // space
      "ImspTQPwCq ",        // trailing space
      " ImspTQPwCq",        // leading space
      "ImspTQPwC\xC3\xA9",  // 11 bytes, non-ASCII letter
      std::string_view("ImspTQPwCq\0", 11),
  };
  for (std::string_view uid : invalid) {
    EXPECT_FALSE(IsValidUid(uid)) << uid;
  }
}

}  // namespace
}  // namespace dvexport::dhis2
