// The main of the test binaries that run against a StandbyPair: the pair starts before their first
// test and stops after their last.

#include <gtest/gtest.h>

#include "tests/reliability/standby_pair.h"

namespace dvexport::reliability {
namespace {

class StandbyPairEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_TRUE(StandbyPair::Start()); }
  void TearDown() override { StandbyPair::Stop(); }
};

}  // namespace
}  // namespace dvexport::reliability

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new dvexport::reliability::StandbyPairEnvironment);
  return RUN_ALL_TESTS();
}
