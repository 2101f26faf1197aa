// How the pipeline names a call's peer and client: one form for both doors.

#include "service/pipeline/call_origin.h"

#include <gtest/gtest.h>

namespace dvexport::pipeline {
namespace {

TEST(CallOriginTest, PeersAreNamedInGrpcsFormAndAddressesAlone) {
  const NetworkPeer v4 = NetworkPeer::Ipv4({10, 0, 0, 7}, 5555);
  EXPECT_EQ(PeerName(v4), "ipv4:10.0.0.7:5555");
  EXPECT_EQ(AddressText(v4), "10.0.0.7");
  const NetworkPeer v6 =
      NetworkPeer::Ipv6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, 443);
  EXPECT_EQ(PeerName(v6), "ipv6:[2001:db8::7]:443");
  EXPECT_EQ(AddressText(v6), "2001:db8::7");
  // An IPv4-mapped address stays as it is written (the failure limits unmap it themselves).
  const NetworkPeer mapped =
      NetworkPeer::Ipv6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1}, 1);
  EXPECT_EQ(AddressText(mapped), "::ffff:10.0.0.1");
  const NetworkPeer unix_socket = NetworkPeer::Other("unix:/run/dvexport.sock");
  EXPECT_EQ(PeerName(unix_socket), "unix:/run/dvexport.sock");
  EXPECT_EQ(AddressText(unix_socket), "unix:/run/dvexport.sock");
}

TEST(CallOriginTest, TheClientIsTheNamedOneElseThePeer) {
  CallOrigin origin;
  origin.peer = NetworkPeer::Ipv4({10, 0, 0, 1}, 4000);
  EXPECT_EQ(ClientAddressText(origin), "10.0.0.1");
  origin.client = NetworkPeer::Ipv4({198, 51, 100, 1}, 0);
  EXPECT_EQ(ClientAddressText(origin), "198.51.100.1");
  EXPECT_EQ(PeerName(origin.peer), "ipv4:10.0.0.1:4000");
}

}  // namespace
}  // namespace dvexport::pipeline
