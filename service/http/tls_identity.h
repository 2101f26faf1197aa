#ifndef DVEXPORT_SERVICE_HTTP_TLS_IDENTITY_H_
#define DVEXPORT_SERVICE_HTTP_TLS_IDENTITY_H_

// TLS for the HTTP door: the server's context, from the same files as the gRPC door's, and the
// client certificate TLS verified.

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "service/http/http_options.h"
#include "service/pipeline/call_origin.h"

namespace dvexport::http {

// The TLS context of the HTTPS door (TLS 1.2 and later) from "options"' tls_cert_file and
// tls_key_file; with tls_client_ca_file, clients must present a certificate that CA signed, and
// the CA's names are advertised in the handshake. Null when neither file is given (plaintext).
// InvalidArgument for files that do not go together or do not load.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeTlsContext(
    const HttpServerOptions& options);

// The client certificate TLS verified on the connection (against --tls_client_ca), if any: its
// subject written as gRPC writes it (RFC 2253), so that one --client_identities file serves both
// doors, and its subjectAltName URIs.
std::optional<pipeline::ClientCertificate> VerifiedCertificate(SSL* ssl);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_TLS_IDENTITY_H_
