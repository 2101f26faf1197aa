#ifndef DVEXPORT_SERVICE_HTTP_TRUSTED_PROXIES_H_
#define DVEXPORT_SERVICE_HTTP_TRUSTED_PROXIES_H_

// Which client a request comes from: the socket's peer, or, behind trusted reverse proxies, the
// address their X-Forwarded-For names (no I/O).

#include <array>
#include <boost/asio/ip/address.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace dvexport::http {

// "address" with an IPv4-mapped IPv6 address ("::ffff:10.0.0.1") as its IPv4 address.
boost::asio::ip::address Unmapped(const boost::asio::ip::address& address);

// The address as the call log and the authenticator name it: "10.0.0.7", "::1".
std::string AddressText(const boost::asio::ip::address& address);

// The reverse proxies whose X-Forwarded-For is believed, and how many of them a request passes.
class TrustedProxies {
 public:
  // "entries": addresses ("10.0.0.1", "::1") or networks in CIDR form ("10.0.0.0/8", "fd00::/8");
  // InvalidArgument naming the first entry that is neither. "hops": the trusted proxies in
  // front of dvexport, one behind the other (1 to 10).
  static absl::StatusOr<TrustedProxies> Parse(const std::vector<std::string>& entries,
                                              int hops = 1);

  // Whether "address" is one of them (an IPv4-mapped IPv6 address counts as its IPv4 address).
  bool Contains(const boost::asio::ip::address& address) const;

  // The client's address as text ("10.0.0.7", "::1"): "peer" (the socket's) unless it is a
  // trusted proxy; X-Forwarded-For is never read otherwise. From a trusted proxy, the addresses
  // of "forwarded_for" (the X-Forwarded-For values in the order they came, each a
  // comma-separated list) are taken from the right, hop by hop, as Express's "trust proxy = N":
  // the rightmost is the address the proxy itself saw; the walk goes further left only through
  // addresses that are themselves trusted proxies, and at most "hops" entries in all. So a
  // client that happens to sit inside a trusted range cannot move its own address: what it
  // writes into X-Forwarded-For lies left of what its proxy appended. An entry that is not an
  // address (or no entry at all) ends the walk at the last address believed.
  std::string ClientAddress(const boost::asio::ip::address& peer,
                            const std::vector<std::string_view>& forwarded_for) const;
  // The same client as an address (unmapped).
  boost::asio::ip::address Client(const boost::asio::ip::address& peer,
                                  const std::vector<std::string_view>& forwarded_for) const;

  int hops() const { return hops_; }

 private:
  struct Network {
    bool v6 = false;
    std::array<unsigned char, 16> bytes{};
    int prefix = 0;  // leading bits that must match
  };
  std::vector<Network> networks_;
  int hops_ = 1;
};

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_TRUSTED_PROXIES_H_
