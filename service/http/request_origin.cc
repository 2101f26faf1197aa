#include "service/http/request_origin.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dvexport::http {

namespace bhttp = boost::beast::http;

pipeline::NetworkPeer NetworkPeerOf(const boost::asio::ip::address& address, unsigned short port) {
  if (address.is_v4()) return pipeline::NetworkPeer::Ipv4(address.to_v4().to_bytes(), port);
  return pipeline::NetworkPeer::Ipv6(address.to_v6().to_bytes(), port);
}

pipeline::CallOrigin RequestOrigin(const bhttp::request<bhttp::empty_body>& request,
                                   const boost::asio::ip::address& peer, unsigned short port,
                                   const TrustedProxies& proxies,
                                   const std::optional<pipeline::ClientCertificate>& certificate) {
  pipeline::CallOrigin origin;
  origin.transport = "http";
  origin.peer = NetworkPeerOf(peer, port);
  std::vector<std::string_view> forwarded_for;
  for (auto [field, end] = request.equal_range("X-Forwarded-For"); field != end; ++field) {
    forwarded_for.push_back(field->value());
  }
  origin.client = NetworkPeerOf(proxies.Client(peer, forwarded_for), 0);
  // No deadline over HTTP: the slot queue's wait, the statement timeout and the stall timeout
  // bound an export.
  origin.deadline = std::chrono::system_clock::time_point::max();
  for (auto [field, end] = request.equal_range(bhttp::field::authorization); field != end;
       ++field) {
    origin.credentials.authorization.emplace_back(field->value());
  }
  origin.credentials.transport = auth::Transport::kHttp;
  origin.certificate = certificate;
  origin.credentials.method = std::string(request.method_string());
  const auto referer = request.find(bhttp::field::referer);
  if (referer != request.end()) origin.credentials.referrer = std::string(referer->value());
  // DHIS2's URL reports the last failing rule of E2001-E2009.
  origin.last_rule_wins = true;
  return origin;
}

bool PresentsApiToken(const pipeline::CallOrigin& origin) {
  return !origin.credentials.authorization.empty() &&
         absl::StartsWithIgnoreCase(origin.credentials.authorization.front(), "ApiToken");
}

}  // namespace dvexport::http
