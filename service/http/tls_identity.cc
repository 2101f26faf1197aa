#include "service/http/tls_identity.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/system/error_code.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/pem_file.h"

namespace dvexport::http {

namespace net = boost::asio;
using boost::system::error_code;

namespace {

// Advertises the CA's names in the handshake, so that a client holding several certificates
// picks one this CA signed.
void AdvertiseClientCas(SSL_CTX* context, const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return;
  while (X509* certificate = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    SSL_CTX_add_client_CA(context, certificate);
    X509_free(certificate);
  }
  BIO_free(bio);
}

}  // namespace

absl::StatusOr<std::unique_ptr<net::ssl::context>> MakeTlsContext(
    const HttpServerOptions& options) {
  if (options.tls_cert_file.empty() && options.tls_key_file.empty()) {
    if (!options.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError("tls_client_ca needs tls_cert and tls_key");
    }
    return nullptr;
  }
  if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("tls_cert and tls_key go together");
  }
  absl::StatusOr<common::PemKeyPair> pair = common::ReadPemKeyPair(
      options.tls_cert_file, "--tls_cert", options.tls_key_file, "--tls_key");
  if (!pair.ok()) return pair.status();
  auto context = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  error_code error;
  context->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                           net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                           net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use,
                       error);
  if (!error) context->use_certificate_chain(net::buffer(pair->certificate_chain), error);
  if (!error) {
    context->use_private_key(net::buffer(pair->private_key), net::ssl::context::pem, error);
  }
  if (!error && !options.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca =
        common::ReadPemCertificates(options.tls_client_ca_file, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    context->add_certificate_authority(net::buffer(*ca), error);
    if (!error) {
      context->set_verify_mode(net::ssl::verify_peer | net::ssl::verify_fail_if_no_peer_cert,
                               error);
    }
    if (!error) AdvertiseClientCas(context->native_handle(), *ca);
  }
  if (error) {
    return absl::InvalidArgumentError(absl::StrCat("the HTTPS door cannot use --tls_cert ",
                                                   options.tls_cert_file, ": ", error.message()));
  }
  return context;
}

namespace {

// The certificate's subject in RFC 2253's form; empty if it cannot be written.
std::string SubjectText(X509* certificate) {
  std::string subject;
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return subject;
  if (X509_NAME_print_ex(bio, X509_get_subject_name(certificate), 0, XN_FLAG_RFC2253) >= 0) {
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    if (length > 0) subject.assign(data, static_cast<size_t>(length));
  }
  BIO_free(bio);
  return subject;
}

// The certificate's subjectAltName URIs.
std::vector<std::string> SubjectUris(X509* certificate) {
  std::vector<std::string> uris;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return uris;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_URI) continue;
    const ASN1_STRING* uri = name->d.uniformResourceIdentifier;
    uris.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(uri)),
                      static_cast<size_t>(ASN1_STRING_length(uri)));
  }
  GENERAL_NAMES_free(names);
  return uris;
}

}  // namespace

std::optional<pipeline::ClientCertificate> VerifiedCertificate(SSL* ssl) {
  X509* certificate = SSL_get1_peer_certificate(ssl);
  if (certificate == nullptr) return std::nullopt;
  std::optional<pipeline::ClientCertificate> verified;
  if (SSL_get_verify_result(ssl) == X509_V_OK) {
    verified = pipeline::ClientCertificate{SubjectText(certificate), SubjectUris(certificate)};
  }
  X509_free(certificate);
  return verified;
}

}  // namespace dvexport::http
