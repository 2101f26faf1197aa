#ifndef DVEXPORT_SERVICE_PIPELINE_CALL_ORIGIN_H_
#define DVEXPORT_SERVICE_PIPELINE_CALL_ORIGIN_H_

// What a door knows of one call when it starts it: who is calling from where, with what, until
// when. Plain data: the doors fill it in from their transport, the pipeline reads it.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "service/auth/verify.h"

namespace dvexport::pipeline {

// One end of a connection as a door saw it: an IPv4 or IPv6 address and its port, or a peer of
// another kind (a Unix socket, a scoped IPv6 address) as its transport names it.
struct NetworkPeer {
  enum class Family { kOther, kIpv4, kIpv6 };
  Family family = Family::kOther;
  // Network byte order: the first 4 bytes for IPv4, all 16 for IPv6.
  std::array<uint8_t, 16> bytes{};
  uint16_t port = 0;
  // kOther: the transport's own name for the peer ("unix:/run/dvexport.sock").
  std::string other;

  static NetworkPeer Ipv4(const std::array<uint8_t, 4>& address, uint16_t port);
  static NetworkPeer Ipv6(const std::array<uint8_t, 16>& address, uint16_t port);
  static NetworkPeer Other(std::string name);

  friend bool operator==(const NetworkPeer&, const NetworkPeer&) = default;
};

// The peer as the call log names it, in one form for both doors: "ipv4:127.0.0.1:5555",
// "ipv6:[::1]:5555", or a kOther peer's own name.
std::string PeerName(const NetworkPeer& peer);

// The address alone, as the failed-attempt limits, a token's IP list and the call log's
// "client" read it: "127.0.0.1", "::1" (an IPv4-mapped IPv6 address stays as it is written,
// "::ffff:10.0.0.1"), or a kOther peer's own name.
std::string AddressText(const NetworkPeer& peer);

// The certificate a client presented and TLS verified against the server's client CA
// (--tls_client_ca): the names --client_identities maps to a DHIS2 user.
struct ClientCertificate {
  std::string subject;            // RFC 2253, as gRPC writes it ("CN=district,O=Example")
  std::vector<std::string> uris;  // its subjectAltName URIs

  friend bool operator==(const ClientCertificate&, const ClientCertificate&) = default;
};

struct CallOrigin {
  // "grpc" or "http": the metrics' transport label and the call log's "transport".
  std::string transport;
  // The connection's far end.
  NetworkPeer peer;
  // Who the call is from when that is not "peer" as it is: the address trusted proxies named
  // (X-Forwarded-For), or the IPv4 address of an IPv4-mapped peer. Its port means nothing.
  std::optional<NetworkPeer> client;
  // The call's deadline; max(): none.
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
  // What the caller presents: its authorization values in order, and the request's method,
  // Referer and transport (a token's method and referrer lists). Its certificate_user is the
  // pipeline's to fill in (CallSession, from "certificate"); a door leaves it empty.
  auth::Credentials credentials;
  // The client's certificate, if TLS verified one; the pipeline decides whether it names a user.
  std::optional<ClientCertificate> certificate;
  // DHIS2's rules E2001-E2009 as DHIS2's URL reports them (the last failing rule) rather than
  // gRPC's first failing rule.
  bool last_rule_wins = false;
};

// The address the call is from ("client", else "peer"), as AddressText writes it.
std::string ClientAddressText(const CallOrigin& origin);

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CALL_ORIGIN_H_
