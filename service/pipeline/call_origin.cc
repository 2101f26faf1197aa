#include "service/pipeline/call_origin.h"

#include <arpa/inet.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dvexport::pipeline {

NetworkPeer NetworkPeer::Ipv4(const std::array<uint8_t, 4>& address, uint16_t port) {
  NetworkPeer peer;
  peer.family = Family::kIpv4;
  std::memcpy(peer.bytes.data(), address.data(), address.size());
  peer.port = port;
  return peer;
}

NetworkPeer NetworkPeer::Ipv6(const std::array<uint8_t, 16>& address, uint16_t port) {
  NetworkPeer peer;
  peer.family = Family::kIpv6;
  peer.bytes = address;
  peer.port = port;
  return peer;
}

NetworkPeer NetworkPeer::Other(std::string name) {
  NetworkPeer peer;
  peer.other = std::move(name);
  return peer;
}

std::string AddressText(const NetworkPeer& peer) {
  char text[INET6_ADDRSTRLEN] = {};
  switch (peer.family) {
    case NetworkPeer::Family::kIpv4:
      return inet_ntop(AF_INET, peer.bytes.data(), text, sizeof(text)) != nullptr ? text : "";
    case NetworkPeer::Family::kIpv6:
      return inet_ntop(AF_INET6, peer.bytes.data(), text, sizeof(text)) != nullptr ? text : "";
    case NetworkPeer::Family::kOther:
      break;
  }
  return peer.other;
}

std::string PeerName(const NetworkPeer& peer) {
  switch (peer.family) {
    case NetworkPeer::Family::kIpv4:
      return absl::StrCat("ipv4:", AddressText(peer), ":", peer.port);
    case NetworkPeer::Family::kIpv6:
      return absl::StrCat("ipv6:[", AddressText(peer), "]:", peer.port);
    case NetworkPeer::Family::kOther:
      break;
  }
  return peer.other;
}

std::string ClientAddressText(const CallOrigin& origin) {
  return AddressText(origin.client.has_value() ? *origin.client : origin.peer);
}

}  // namespace dvexport::pipeline
