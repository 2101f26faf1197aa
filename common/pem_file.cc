#include "common/pem_file.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dvexport::common {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;

absl::Status Problem(absl::string_view what, const std::string& path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": ", problem));
}

// OpenSSL's reason for the last failure on this thread, and its error queue emptied.
std::string OpenSslReason() {
  const unsigned long error = ERR_peek_last_error();  // NOLINT(runtime/int): OpenSSL's type
  std::string reason = error == 0                                  ? "unknown error"
                       : ERR_reason_error_string(error) != nullptr ? ERR_reason_error_string(error)
                                                                   : "unknown error";
  ERR_clear_error();
  return reason;
}

// PEM certificate bundles and keys are kilobytes; a larger file is something else.
constexpr size_t kMaxPemFileBytes = 1 << 20;

// What a file that is not a regular one is, for a message.
absl::string_view KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "of another kind";
}

// The whole file, or why it cannot be read. O_NONBLOCK: opening a FIFO would
// otherwise wait for a writer forever; what is not a regular file (a FIFO,
// /dev/stdin, a terminal) is refused, by fstat of what was opened.
absl::StatusOr<std::string> ReadWhole(const std::string& path, absl::string_view what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Problem(what, path, absl::StrCat("cannot read it: ", std::strerror(errno)));
  struct stat st;
  const bool examined = ::fstat(fd, &st) == 0;
  const int error = errno;
  if (!examined || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (!examined) {
      return Problem(what, path, absl::StrCat("cannot examine it: ", std::strerror(error)));
    }
    return Problem(what, path,
                   absl::StrCat("not a regular file (", KindOf(st.st_mode), "): give a PEM file"));
  }
  std::string contents;
  char buffer[16384];
  ssize_t got;
  while ((got = ::read(fd, buffer, sizeof buffer)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 || contents.size() + static_cast<size_t>(got) > kMaxPemFileBytes) {
      const int error = errno;
      ::close(fd);
      if (got < 0)
        return Problem(what, path, absl::StrCat("cannot read it: ", std::strerror(error)));
      return Problem(what, path, "larger than 1 MiB: not a PEM certificate or key file");
    }
    contents.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  if (contents.empty()) return Problem(what, path, "the file is empty");
  return contents;
}

// The labels of the PEM blocks in "text", in order: "CERTIFICATE", "PRIVATE KEY", ...
std::vector<std::string> PemLabels(absl::string_view text) {
  constexpr absl::string_view kBegin = "-----BEGIN ";
  std::vector<std::string> labels;
  for (size_t at = text.find(kBegin); at != text.npos; at = text.find(kBegin, at + 1)) {
    const size_t start = at + kBegin.size();
    const size_t end = text.find("-----", start);
    const size_t line_end = text.find('\n', start);
    if (end == text.npos || (line_end != text.npos && end > line_end)) continue;
    labels.emplace_back(text.substr(start, end - start));
  }
  return labels;
}

// Says what the file holds instead of "wanted".
absl::Status WrongBlocks(absl::string_view what, const std::string& path,
                         const std::vector<std::string>& labels, absl::string_view wanted) {
  if (labels.empty()) {
    return Problem(what, path, "not PEM (no \"-----BEGIN ...-----\" line)");
  }
  return Problem(
      what, path,
      absl::StrCat("holds no ", wanted, " block (it holds ", absl::StrJoin(labels, ", "), ")"));
}

bool IsPrivateKeyLabel(absl::string_view label) { return absl::EndsWith(label, "PRIVATE KEY"); }

// Refuses to ask for a pass phrase: an encrypted key is an error, never a prompt.
int NoPassphrase(char*, int, int, void*) { return -1; }

// The certificates of "pem", the first one kept in "first" if not null.
absl::Status ParseCertificates(absl::string_view what, const std::string& path,
                               const std::string& pem, X509Ptr* first) {
  const std::vector<std::string> labels = PemLabels(pem);
  int certificates = 0;
  for (const std::string& label : labels) certificates += label == "CERTIFICATE" ? 1 : 0;
  if (certificates == 0) return WrongBlocks(what, path, labels, "CERTIFICATE");
  ERR_clear_error();
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  for (int i = 1; i <= certificates; ++i) {
    X509Ptr certificate(PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr));
    if (certificate == nullptr) {
      return Problem(what, path,
                     absl::StrCat("certificate ", i, " of ", certificates,
                                  " does not parse: ", OpenSslReason()));
    }
    if (i == 1 && first != nullptr) *first = std::move(certificate);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadPemCertificates(const std::string& path, absl::string_view what) {
  absl::StatusOr<std::string> pem = ReadWhole(path, what);
  if (!pem.ok()) return pem.status();
  absl::Status parsed = ParseCertificates(what, path, *pem, nullptr);
  if (!parsed.ok()) return parsed;
  return pem;
}

absl::StatusOr<PemKeyPair> ReadPemKeyPair(const std::string& certificate_path,
                                          absl::string_view certificate_what,
                                          const std::string& key_path, absl::string_view key_what) {
  absl::StatusOr<std::string> chain = ReadWhole(certificate_path, certificate_what);
  if (!chain.ok()) return chain.status();
  X509Ptr certificate;
  absl::Status parsed = ParseCertificates(certificate_what, certificate_path, *chain, &certificate);
  if (!parsed.ok()) return parsed;

  absl::StatusOr<std::string> key_pem = ReadWhole(key_path, key_what);
  if (!key_pem.ok()) return key_pem.status();
  const std::vector<std::string> labels = PemLabels(*key_pem);
  std::string key_label;
  for (const std::string& label : labels) {
    if (IsPrivateKeyLabel(label)) {
      key_label = label;
      break;
    }
  }
  if (key_label.empty()) return WrongBlocks(key_what, key_path, labels, "PRIVATE KEY");
  if (key_label == "ENCRYPTED PRIVATE KEY" ||
      absl::StrContains(*key_pem, "Proc-Type: 4,ENCRYPTED")) {
    return Problem(key_what, key_path,
                   "the private key is encrypted; give it unencrypted (openssl pkey -in KEY -out "
                   "PLAIN.key)");
  }
  ERR_clear_error();
  BioPtr bio(BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size())));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return Problem(key_what, key_path,
                   absl::StrCat("the ", key_label, " does not parse: ", OpenSslReason()));
  }
  if (X509_check_private_key(certificate.get(), key.get()) != 1) {
    ERR_clear_error();
    return Problem(key_what, key_path,
                   absl::StrCat("the private key does not match the certificate in ",
                                certificate_what, " ", certificate_path));
  }
  return PemKeyPair{*std::move(chain), *std::move(key_pem)};
}

}  // namespace dvexport::common
