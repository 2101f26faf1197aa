// PeerAddress: the key of an unauthenticated caller's fair share of the export slots.

#include <gtest/gtest.h>

#include "service/auth/authenticator.h"

namespace dvexport::auth {
namespace {

TEST(PeerAddressTest, DropsTheSchemeAndThePort) {
  EXPECT_EQ(PeerAddress("ipv4:127.0.0.1:5678"), "127.0.0.1");
  EXPECT_EQ(PeerAddress("ipv4:10.1.2.3:1"), "10.1.2.3");
  EXPECT_EQ(PeerAddress("ipv6:[::1]:5678"), "::1");
  EXPECT_EQ(PeerAddress("ipv6:[2001:db8::7]:443"), "2001:db8::7");
}

TEST(PeerAddressTest, PercentEncodedBracketsAreTheSameAddress) {
  EXPECT_EQ(PeerAddress("ipv6:%5B::1%5D:5678"), "::1");
  EXPECT_EQ(PeerAddress("ipv6:%5B2001:db8::7%5D:443"), "2001:db8::7");
}

TEST(PeerAddressTest, TwoConnectionsOfOneHostAreOneKeyAndOtherPeersStayAsTheyAre) {
  EXPECT_EQ(PeerAddress("ipv4:192.0.2.9:40000"), PeerAddress("ipv4:192.0.2.9:40001"));
  EXPECT_NE(PeerAddress("ipv4:127.0.0.1:40000"), PeerAddress("ipv6:[::1]:40000"));
  EXPECT_EQ(PeerAddress("unix:/run/dvexport.sock"), "unix:/run/dvexport.sock");
  EXPECT_EQ(PeerAddress(""), "");
}

}  // namespace
}  // namespace dvexport::auth
