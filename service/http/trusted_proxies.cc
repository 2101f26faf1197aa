#include "service/http/trusted_proxies.h"

#include <algorithm>
#include <boost/system/error_code.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace dvexport::http {

namespace net = boost::asio;

namespace {

// One address or network as bytes, IPv4-mapped addresses as IPv4.
struct AddressBytes {
  bool v6 = false;
  std::array<unsigned char, 16> bytes{};
};

AddressBytes BytesOf(const net::ip::address& address) {
  const net::ip::address plain = Unmapped(address);
  AddressBytes result;
  if (plain.is_v4()) {
    const auto v4 = plain.to_v4().to_bytes();
    std::copy(v4.begin(), v4.end(), result.bytes.begin());
  } else {
    result.v6 = true;
    result.bytes = plain.to_v6().to_bytes();
  }
  return result;
}

}  // namespace

net::ip::address Unmapped(const net::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return net::ip::make_address_v4(net::ip::v4_mapped, address.to_v6());
  }
  return address;
}

std::string AddressText(const net::ip::address& address) {
  boost::system::error_code ignored;
  return address.to_string(ignored);
}

absl::StatusOr<TrustedProxies> TrustedProxies::Parse(const std::vector<std::string>& entries,
                                                     int hops) {
  if (hops < 1 || hops > 10) {
    return absl::InvalidArgumentError(
        absl::StrCat("trusted proxy hops ", hops, " is not between 1 and 10"));
  }
  TrustedProxies proxies;
  proxies.hops_ = hops;
  for (const std::string& entry : entries) {
    const absl::string_view text = absl::StripAsciiWhitespace(entry);
    const size_t slash = text.find('/');
    boost::system::error_code error;
    const net::ip::address address =
        net::ip::make_address(std::string(text.substr(0, slash)), error);
    const absl::Status invalid = absl::InvalidArgumentError(absl::StrCat(
        "trusted proxy \"", entry, "\" is neither an IP address nor a network (10.0.0.0/8)"));
    if (error) return invalid;
    const AddressBytes bytes = BytesOf(address);
    Network network{.v6 = bytes.v6, .bytes = bytes.bytes, .prefix = bytes.v6 ? 128 : 32};
    if (slash != absl::string_view::npos) {
      int prefix = -1;
      if (!absl::SimpleAtoi(text.substr(slash + 1), &prefix) || prefix < 0 ||
          prefix > network.prefix) {
        return invalid;
      }
      // A mapped address's prefix counts the 96 bits before the IPv4 part.
      if (!bytes.v6 && address.is_v6()) {
        if (prefix < 96) return invalid;
        prefix -= 96;
      }
      network.prefix = prefix;
    }
    proxies.networks_.push_back(network);
  }
  return proxies;
}

bool TrustedProxies::Contains(const net::ip::address& address) const {
  const AddressBytes bytes = BytesOf(address);
  for (const Network& network : networks_) {
    if (network.v6 != bytes.v6) continue;
    const int whole = network.prefix / 8;
    if (!std::equal(network.bytes.begin(), network.bytes.begin() + whole, bytes.bytes.begin())) {
      continue;
    }
    const int rest = network.prefix % 8;
    if (rest == 0) return true;
    const unsigned mask = (0xFFu << (8 - rest)) & 0xFFu;
    if ((network.bytes[whole] & mask) == (bytes.bytes[whole] & mask)) return true;
  }
  return false;
}

std::string TrustedProxies::ClientAddress(
    const net::ip::address& peer, const std::vector<std::string_view>& forwarded_for) const {
  return AddressText(Client(peer, forwarded_for));
}

net::ip::address TrustedProxies::Client(const net::ip::address& peer,
                                        const std::vector<std::string_view>& forwarded_for) const {
  net::ip::address believed = Unmapped(peer);
  if (!Contains(believed)) return believed;
  std::vector<absl::string_view> hops;
  for (std::string_view value : forwarded_for) {
    for (absl::string_view hop :
         absl::StrSplit(absl::string_view(value.data(), value.size()), ',')) {
      hops.push_back(hop);
    }
  }
  // The rightmost entry is what the peer (a trusted proxy) appended: the address it saw. Further
  // left only while that address is a trusted proxy too, and at most hops_ entries in all.
  int taken = 0;
  for (auto hop = hops.rbegin(); hop != hops.rend() && taken < hops_; ++hop) {
    boost::system::error_code error;
    const net::ip::address address =
        net::ip::make_address(std::string(absl::StripAsciiWhitespace(*hop)), error);
    if (error) break;
    believed = Unmapped(address);
    ++taken;
    if (!Contains(believed)) break;
  }
  return believed;
}

}  // namespace dvexport::http
