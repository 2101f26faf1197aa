// ParsePeer: a gRPC peer string as the pipeline's NetworkPeer, which the call log, the failure
// limits and an unauthenticated caller's fair share read.

#include <gtest/gtest.h>

#include "service/grpc/call_context.h"

namespace dvexport::grpc_door {
namespace {

using pipeline::NetworkPeer;

TEST(ParsePeerTest, Ipv4AndIpv6WithTheirPorts) {
  const NetworkPeer v4 = ParsePeer("ipv4:127.0.0.1:5678");
  EXPECT_EQ(v4.family, NetworkPeer::Family::kIpv4);
  EXPECT_EQ(v4.port, 5678);
  EXPECT_EQ(pipeline::AddressText(v4), "127.0.0.1");
  EXPECT_EQ(pipeline::PeerName(v4), "ipv4:127.0.0.1:5678");
  const NetworkPeer v6 = ParsePeer("ipv6:[2001:db8::7]:443");
  EXPECT_EQ(v6.family, NetworkPeer::Family::kIpv6);
  EXPECT_EQ(v6.port, 443);
  EXPECT_EQ(pipeline::AddressText(v6), "2001:db8::7");
  EXPECT_EQ(pipeline::PeerName(v6), "ipv6:[2001:db8::7]:443");
}

TEST(ParsePeerTest, PercentEncodedBracketsAreTheSameAddress) {
  // gRPC 1.51 writes "ipv6:%5B::1%5D:5678"; the call log names it as the HTTP door does.
  EXPECT_EQ(ParsePeer("ipv6:%5B::1%5D:5678"), ParsePeer("ipv6:[::1]:5678"));
  EXPECT_EQ(pipeline::PeerName(ParsePeer("ipv6:%5B::1%5D:5678")), "ipv6:[::1]:5678");
  EXPECT_EQ(pipeline::AddressText(ParsePeer("ipv6:%5B2001:db8::7%5D:443")), "2001:db8::7");
}

TEST(ParsePeerTest, TwoConnectionsOfOneHostAreOneAddress) {
  EXPECT_EQ(pipeline::AddressText(ParsePeer("ipv4:192.0.2.9:40000")),
            pipeline::AddressText(ParsePeer("ipv4:192.0.2.9:40001")));
  EXPECT_NE(pipeline::AddressText(ParsePeer("ipv4:127.0.0.1:40000")),
            pipeline::AddressText(ParsePeer("ipv6:[::1]:40000")));
}

TEST(ParsePeerTest, OtherPeersStayAsGrpcNamesThem) {
  for (const char* name : {"unix:/run/dvexport.sock", "", "ipv6:[fe80::1%25eth0]:1",
                           "ipv4:300.1.2.3:1", "ipv4:10.0.0.1:99999", "ipv4:10.0.0.1", "ipv6:::1:5",
                           "ipv6:[::1]:", "ipv6:[::1:5", "dns:example.org:1"}) {
    const NetworkPeer peer = ParsePeer(name);
    EXPECT_EQ(peer.family, NetworkPeer::Family::kOther) << name;
    EXPECT_EQ(pipeline::PeerName(peer), name);
    EXPECT_EQ(pipeline::AddressText(peer), name);
  }
}

}  // namespace
}  // namespace dvexport::grpc_door
