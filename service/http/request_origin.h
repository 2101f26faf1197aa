#ifndef DVEXPORT_SERVICE_HTTP_REQUEST_ORIGIN_H_
#define DVEXPORT_SERVICE_HTTP_REQUEST_ORIGIN_H_

// Who an HTTP request comes from, as the pipeline is told it (pipeline::CallOrigin): the socket's
// peer, the client's address behind trusted proxies, and the credentials the request carries
// (no I/O).

#include <boost/asio/ip/address.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "service/http/trusted_proxies.h"
#include "service/pipeline/export.h"

namespace dvexport::http {

// "address" and "port" as the pipeline names a peer.
pipeline::NetworkPeer NetworkPeerOf(const boost::asio::ip::address& address, unsigned short port);

// The CallOrigin of "request" on a connection from "peer" (the socket's address, unmapped) and
// "port": transport "http", the client address "proxies" believe from X-Forwarded-For, no
// deadline, the Authorization values in order, "certificate" (the connection's verified client
// certificate), the method and Referer; DHIS2's URL reports the last failing rule of
// E2001-E2009.
pipeline::CallOrigin RequestOrigin(
    const boost::beast::http::request<boost::beast::http::empty_body>& request,
    const boost::asio::ip::address& peer, unsigned short port, const TrustedProxies& proxies,
    const std::optional<pipeline::ClientCertificate>& certificate);

// Whether the request presents an ApiToken: its first Authorization header is the credential
// (Tomcat's getHeader, as DHIS2 reads it).
bool PresentsApiToken(const pipeline::CallOrigin& origin);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_REQUEST_ORIGIN_H_
