#include "service/http/request_origin.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dvexport::http {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

TEST(RequestOriginTest, PeersAreWrittenInGrpcsForm) {
  EXPECT_EQ(pipeline::PeerName(NetworkPeerOf(net::ip::make_address("127.0.0.1"), 5555)),
            "ipv4:127.0.0.1:5555");
  EXPECT_EQ(pipeline::PeerName(NetworkPeerOf(net::ip::make_address("::1"), 5555)),
            "ipv6:[::1]:5555");
}

TEST(RequestOriginTest, CarriesTheClientAndItsCredentials) {
  bhttp::request<bhttp::empty_body> request{bhttp::verb::get, "/api/dataValueSets", 11};
  request.insert(bhttp::field::authorization, "ApiToken d2p_first");
  request.insert(bhttp::field::authorization, "Basic second");
  request.insert("X-Forwarded-For", "198.51.100.1");
  request.insert(bhttp::field::referer, "https://apps.example.org/app");
  absl::StatusOr<TrustedProxies> proxies = TrustedProxies::Parse({"10.0.0.0/8"});
  ASSERT_TRUE(proxies.ok());
  const net::ip::address peer = net::ip::make_address("10.0.0.1");
  const pipeline::CallOrigin origin =
      RequestOrigin(request, peer, 4000, *proxies,
                    pipeline::ClientCertificate{"CN=district", {"urn:example:district"}});
  EXPECT_EQ(origin.transport, "http");
  EXPECT_EQ(pipeline::PeerName(origin.peer), "ipv4:10.0.0.1:4000");
  EXPECT_EQ(pipeline::ClientAddressText(origin), "198.51.100.1");
  EXPECT_EQ(origin.deadline, std::chrono::system_clock::time_point::max());
  EXPECT_EQ(origin.credentials.authorization,
            (std::vector<std::string>{"ApiToken d2p_first", "Basic second"}));
  EXPECT_EQ(origin.credentials.transport, auth::Transport::kHttp);
  // The door reports the certificate; the pipeline decides whether it names a user.
  EXPECT_EQ(origin.certificate,
            (pipeline::ClientCertificate{"CN=district", {"urn:example:district"}}));
  EXPECT_FALSE(origin.credentials.certificate_user.has_value());
  EXPECT_EQ(origin.credentials.method, "GET");
  EXPECT_EQ(origin.credentials.referrer,
            std::optional<std::string>("https://apps.example.org/app"));
  EXPECT_TRUE(origin.last_rule_wins);
  EXPECT_TRUE(PresentsApiToken(origin));
}

TEST(RequestOriginTest, OnlyTheFirstAuthorizationNamesAToken) {
  bhttp::request<bhttp::empty_body> request{bhttp::verb::head, "/api/dataValueSets", 11};
  request.insert(bhttp::field::authorization, "Basic first");
  request.insert(bhttp::field::authorization, "ApiToken d2p_second");
  absl::StatusOr<TrustedProxies> proxies = TrustedProxies::Parse({});
  ASSERT_TRUE(proxies.ok());
  const net::ip::address peer = net::ip::make_address("203.0.113.9");
  const pipeline::CallOrigin origin = RequestOrigin(request, peer, 1, *proxies, std::nullopt);
  EXPECT_EQ(pipeline::ClientAddressText(origin), "203.0.113.9");
  EXPECT_FALSE(origin.certificate.has_value());
  EXPECT_EQ(origin.credentials.method, "HEAD");
  EXPECT_FALSE(origin.credentials.referrer.has_value());
  EXPECT_FALSE(PresentsApiToken(origin));
}

}  // namespace
}  // namespace dvexport::http
