// Exports from a streaming hot standby (issue 11, "read replicas"): a real primary and a real
// standby of it (tests/reliability/standby_pg.sh), a dvexport server in-process reading from
// each, real gRPC over loopback. docs/DEPLOYMENT.md's read-replica section says what they prove.

#include <gtest/gtest.h>

#include <string>

#include "tests/reliability/standby_pair.h"

namespace dvexport::reliability {
namespace {

TEST(StandbyPairTest, StandbyReplaysWhatThePrimaryWrites) {
  EXPECT_EQ(QueryOn(StandbyPair::standby_admin(), "SELECT pg_is_in_recovery()"), "t");
  EXPECT_EQ(QueryOn(StandbyPair::primary_admin(), "SELECT pg_is_in_recovery()"), "f");
  const std::string count = "SELECT count(*) FROM datavalue";
  EXPECT_EQ(QueryOn(StandbyPair::standby_reader(), count),
            QueryOn(StandbyPair::primary_reader(), count));

  QueryOn(StandbyPair::primary_admin(), "CREATE TABLE standby_replay_probe AS SELECT 42 AS answer");
  StandbyPair::WaitForReplay();
  EXPECT_EQ(QueryOn(StandbyPair::standby_admin(), "SELECT answer FROM standby_replay_probe"), "42");
  QueryOn(StandbyPair::primary_admin(), "DROP TABLE standby_replay_probe");
  StandbyPair::WaitForReplay();
}

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
