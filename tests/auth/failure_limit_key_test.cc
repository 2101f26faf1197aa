// FailureLimitKey: the per-address bucket of the failed-attempt limits. An IPv6 client commonly
// holds a whole /64, so its addresses share one bucket; IPv4 addresses count one by one, also when
// they arrive IPv4-mapped on a dual-stack socket.

#include <gtest/gtest.h>

#include <string>

#include "service/auth/authenticator.h"

namespace dvexport::auth {
namespace {

TEST(FailureLimitKeyTest, Ipv4CountsPerAddress) {
  EXPECT_EQ(FailureLimitKey("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(FailureLimitKey("127.0.0.2"), "127.0.0.2");
  EXPECT_NE(FailureLimitKey("10.0.0.1"), FailureLimitKey("10.0.0.2"));
}

TEST(FailureLimitKeyTest, Ipv4MappedIpv6CountsAsItsIpv4Address) {
  EXPECT_EQ(FailureLimitKey("::ffff:127.0.0.5"), "127.0.0.5");
  EXPECT_EQ(FailureLimitKey("::FFFF:7f00:5"), "127.0.0.5");
  EXPECT_EQ(FailureLimitKey("::ffff:127.0.0.5"), FailureLimitKey("127.0.0.5"));
  EXPECT_NE(FailureLimitKey("::ffff:127.0.0.5"), FailureLimitKey("::ffff:127.0.0.6"));
}

TEST(FailureLimitKeyTest, Ipv6CountsPerSlash64) {
  const std::string key = FailureLimitKey("2001:db8:1:2::1");
  EXPECT_EQ(key, "2001:db8:1:2::/64");
  for (const char* same : {"2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff",
                           "2001:0DB8:0001:0002:abcd:0:0:1", "2001:db8:1:2:1:2:3:4"}) {
    EXPECT_EQ(FailureLimitKey(same), key) << same;
  }
  for (const char* other : {"2001:db8:1:3::1", "2001:db8:1::1", "2001:db9:1:2::1"}) {
    EXPECT_NE(FailureLimitKey(other), key) << other;
  }
  EXPECT_EQ(FailureLimitKey("::1"), "::/64");
  EXPECT_EQ(FailureLimitKey("fe80::1%eth0"), "fe80::/64");
  EXPECT_EQ(FailureLimitKey("fe80::2%lo"), "fe80::/64");
}

TEST(FailureLimitKeyTest, WhatIsNoAddressIsItsOwnKey) {
  EXPECT_EQ(FailureLimitKey("unix:/run/dvexport.sock"), "unix:/run/dvexport.sock");
  EXPECT_EQ(FailureLimitKey(""), "");
  EXPECT_EQ(FailureLimitKey("2001:db8::1::2"), "2001:db8::1::2");
}

}  // namespace
}  // namespace dvexport::auth
