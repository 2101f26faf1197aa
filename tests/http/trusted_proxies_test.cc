#include "service/http/trusted_proxies.h"

#include <boost/asio/ip/address.hpp>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace dvexport::http {
namespace {

namespace net = boost::asio;

TEST(TrustedProxiesTest, TheClientIsWhatTheTrustedProxyAppended) {
  const auto address = [](const char* text) { return net::ip::make_address(text); };
  absl::StatusOr<TrustedProxies> proxies =
      TrustedProxies::Parse({"10.0.0.0/8", "192.168.1.1", "fd00::/8"});
  ASSERT_TRUE(proxies.ok()) << proxies.status();
  // Not a proxy: X-Forwarded-For is not read.
  EXPECT_EQ(proxies->ClientAddress(address("203.0.113.9"), {"198.51.100.1"}), "203.0.113.9");
  EXPECT_EQ(proxies->ClientAddress(address("192.168.1.2"), {"198.51.100.1"}), "192.168.1.2");
  // Through one proxy: the rightmost entry, the address the proxy saw; a client's own forged
  // entries stay to its left.
  EXPECT_EQ(proxies->ClientAddress(address("10.1.2.3"), {"198.51.100.1"}), "198.51.100.1");
  EXPECT_EQ(proxies->ClientAddress(address("192.168.1.1"), {"1.1.1.1, 198.51.100.1"}),
            "198.51.100.1");
  EXPECT_EQ(proxies->ClientAddress(address("fd12::1"), {"2001:db8::7"}), "2001:db8::7");
  EXPECT_EQ(proxies->ClientAddress(address("::ffff:10.0.0.1"), {"198.51.100.1"}), "198.51.100.1");
  // A client inside a trusted range (here 10.0.0.7, on the proxy's network) cannot move its own
  // address: with one hop, the walk stops at what the proxy appended, trusted or not.
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {"10.0.0.9, 10.0.0.7"}), "10.0.0.7");
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {"198.51.100.1", "10.0.0.7"}), "10.0.0.7");
  // No entry, or one that is not an address: the last address believed.
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {"unknown"}), "10.0.0.1");
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {}), "10.0.0.1");
  EXPECT_FALSE(TrustedProxies::Parse({"10.0.0.0/33"}).ok());
  EXPECT_FALSE(TrustedProxies::Parse({"proxy.example"}).ok());
  EXPECT_FALSE(TrustedProxies::Parse({"10.0.0.1"}, 0).ok());
  EXPECT_FALSE(TrustedProxies::Parse({"10.0.0.1"}, 11).ok());
}

TEST(TrustedProxiesTest, SeveralHopsWalkLeftOnlyThroughTrustedProxies) {
  const auto address = [](const char* text) { return net::ip::make_address(text); };
  // client -> 10.0.0.5 (outer proxy) -> 10.0.0.1 (inner proxy) -> dvexport.
  absl::StatusOr<TrustedProxies> proxies = TrustedProxies::Parse({"10.0.0.0/8"}, 2);
  ASSERT_TRUE(proxies.ok()) << proxies.status();
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {"198.51.100.1, 10.0.0.5"}),
            "198.51.100.1");
  // Whatever the client wrote stays left of what the outer proxy appended.
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {"10.9.9.9, 198.51.100.1, 10.0.0.5"}),
            "198.51.100.1");
  // A client that reached the inner proxy directly is what the inner proxy appended: the walk
  // does not go left past an address that is no proxy.
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {"10.0.0.5, 198.51.100.1"}),
            "198.51.100.1");
  // Two hops at most: a client inside the trusted range cannot go further.
  EXPECT_EQ(proxies->ClientAddress(address("10.0.0.1"), {"10.0.0.8, 10.0.0.7, 10.0.0.5"}),
            "10.0.0.7");
}

TEST(TrustedProxiesTest, AddressesAreWrittenUnmapped) {
  EXPECT_EQ(AddressText(Unmapped(net::ip::make_address("::ffff:10.0.0.1"))), "10.0.0.1");
  EXPECT_EQ(AddressText(Unmapped(net::ip::make_address("::1"))), "::1");
  EXPECT_EQ(AddressText(Unmapped(net::ip::make_address("192.168.1.1"))), "192.168.1.1");
}

TEST(TrustedProxiesTest, NetworksMatchTheirPrefixOnly) {
  absl::StatusOr<TrustedProxies> proxies =
      TrustedProxies::Parse({" 10.1.0.0/16 ", "fd00::/9", "::ffff:192.168.7.7"});
  ASSERT_TRUE(proxies.ok()) << proxies.status();
  EXPECT_FALSE(proxies->Contains(net::ip::make_address("10.0.255.255")));
  EXPECT_TRUE(proxies->Contains(net::ip::make_address("10.1.0.1")));
  EXPECT_FALSE(proxies->Contains(net::ip::make_address("10.2.0.1")));
  EXPECT_TRUE(proxies->Contains(net::ip::make_address("fd7f::1")));
  EXPECT_FALSE(proxies->Contains(net::ip::make_address("fd80::1")));
  // A mapped address is its IPv4 address, on either side.
  EXPECT_TRUE(proxies->Contains(net::ip::make_address("192.168.7.7")));
  EXPECT_TRUE(proxies->Contains(net::ip::make_address("::ffff:10.1.2.3")));
  EXPECT_FALSE(proxies->Contains(net::ip::make_address("192.168.7.8")));
  EXPECT_FALSE(TrustedProxies::Parse({"::ffff:10.0.0.0/95"}).ok());
  EXPECT_FALSE(TrustedProxies::Parse({"10.0.0.0/x"}).ok());
  EXPECT_EQ(TrustedProxies::Parse({}, 3)->hops(), 3);
}

}  // namespace
}  // namespace dvexport::http
