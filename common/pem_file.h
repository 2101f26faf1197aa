#ifndef DVEXPORT_COMMON_PEM_FILE_H_
#define DVEXPORT_COMMON_PEM_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::common {

// The certificates in the PEM file at "path" (a CA bundle, or a certificate chain), each parsed
// by OpenSSL. InvalidArgument "<what> <path>: <problem>" when the file cannot be read (with the
// system's reason), is empty, is not PEM, holds no CERTIFICATE block (the message lists the
// blocks it holds, e.g. a PRIVATE KEY), or holds a certificate that does not parse.
absl::StatusOr<std::string> ReadPemCertificates(const std::string& path, absl::string_view what);

// A certificate chain and the private key of its first certificate, as PEM text.
struct PemKeyPair {
  std::string certificate_chain;
  std::string private_key;
};

// Reads "certificate_path" as ReadPemCertificates does and "key_path" as an unencrypted PEM
// private key, and checks that the key belongs to the first certificate. InvalidArgument naming
// the file ("<certificate_what> <path>" or "<key_what> <path>") and the problem: unreadable,
// empty, not PEM, no PRIVATE KEY block, an encrypted key, a key that does not parse, or a key
// that does not match the certificate.
absl::StatusOr<PemKeyPair> ReadPemKeyPair(const std::string& certificate_path,
                                          absl::string_view certificate_what,
                                          const std::string& key_path, absl::string_view key_what);

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_PEM_FILE_H_
