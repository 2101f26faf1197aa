#include "common/pem_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dvexport::common {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Certificates and keys that openssl makes once for the suite: a CA, a
// certificate it signs with its key, a second key, and that key encrypted.
class PemFileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char dir[] = "/tmp/pem_file_test.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = new std::string(dir);
    const std::string script = absl::StrCat(
        "set -e; cd ", *dir_, "\n",
        "key() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        "-keyout $1.key -subj /CN=$1 \"${@:2}\" 2>/dev/null; }\n",
        "key ca -x509 -days 2 -out ca.pem\n", "key server -out server.csr\n",
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-out server.pem 2>/dev/null\n",
        "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out other.key\n",
        "openssl pkey -in other.key -aes256 -passout pass:secret -out encrypted.key\n",
        "cat server.pem ca.pem > chain.pem\n");
    ASSERT_EQ(std::system(("bash -c '" + script + "'").c_str()), 0);
  }

  static void TearDownTestSuite() {
    std::system(("rm -rf " + *dir_).c_str());
    delete dir_;
  }

  static std::string File(const std::string& name) { return *dir_ + "/" + name; }

  static std::string Contents(const std::string& name) {
    std::ifstream in(File(name), std::ios::binary);
    std::stringstream contents;
    contents << in.rdbuf();
    return contents.str();
  }

  static std::string Write(const std::string& name, const std::string& contents) {
    std::ofstream(File(name), std::ios::binary) << contents;
    return File(name);
  }

  static std::string* dir_;
};

std::string* PemFileTest::dir_ = nullptr;

TEST_F(PemFileTest, ReadsCertificatesAndABundle) {
  absl::StatusOr<std::string> ca = ReadPemCertificates(File("ca.pem"), "--tls-ca");
  ASSERT_TRUE(ca.ok()) << ca.status();
  EXPECT_EQ(*ca, Contents("ca.pem"));
  absl::StatusOr<std::string> chain = ReadPemCertificates(File("chain.pem"), "--tls-ca");
  ASSERT_TRUE(chain.ok()) << chain.status();
  EXPECT_EQ(*chain, Contents("chain.pem"));
}

TEST_F(PemFileTest, ReadsACertificateAndItsKey) {
  absl::StatusOr<PemKeyPair> pair =
      ReadPemKeyPair(File("chain.pem"), "--tls_cert", File("server.key"), "--tls_key");
  ASSERT_TRUE(pair.ok()) << pair.status();
  EXPECT_EQ(pair->certificate_chain, Contents("chain.pem"));
  EXPECT_EQ(pair->private_key, Contents("server.key"));
}

TEST_F(PemFileTest, NamesAFileThatCannotBeRead) {
  const std::string missing = File("missing.pem");
  absl::Status status = ReadPemCertificates(missing, "--tls-ca").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "--tls-ca " + missing + ": cannot read it: No such file or directory");
  EXPECT_EQ(ReadPemCertificates(*dir_, "--tls-ca").status().message(),
            "--tls-ca " + *dir_ + ": not a regular file (a directory): give a PEM file");
}

// A FIFO nobody writes would block open(2) forever (and a server with it would not even take
// SIGTERM): refused at once, as is a character device (/dev/stdin is one on a terminal).
TEST_F(PemFileTest, RefusesAFifoAndACharacterDeviceAtOnce) {
  const std::string fifo = File("fifo.pem");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = ReadPemCertificates(fifo, "--tls-ca").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "--tls-ca " + fifo + ": not a regular file (a FIFO): give a PEM file");
  status = ReadPemKeyPair(File("server.pem"), "--tls_cert", fifo, "--tls_key").status();
  EXPECT_EQ(status.message(),
            "--tls_key " + fifo + ": not a regular file (a FIFO): give a PEM file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(ReadPemCertificates("/dev/zero", "--tls_client_ca").status().message(),
            "--tls_client_ca /dev/zero: not a regular file (a character device): give a PEM file");
  ::unlink(fifo.c_str());
}

TEST_F(PemFileTest, NamesAnEmptyFile) {
  const std::string empty = Write("empty.pem", "");
  EXPECT_EQ(ReadPemCertificates(empty, "--tls-ca").status().message(),
            "--tls-ca " + empty + ": the file is empty");
}

TEST_F(PemFileTest, NamesAFileThatIsNotPem) {
  const std::string garbage = Write("garbage.pem", "this is not a certificate\n");
  absl::Status status = ReadPemCertificates(garbage, "--tls-ca").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "--tls-ca " + garbage + ": not PEM (no \"-----BEGIN ...-----\" line)");
}

TEST_F(PemFileTest, NamesAKeyGivenForACertificate) {
  EXPECT_EQ(
      ReadPemCertificates(File("server.key"), "--tls-ca").status().message(),
      "--tls-ca " + File("server.key") + ": holds no CERTIFICATE block (it holds PRIVATE KEY)");
}

TEST_F(PemFileTest, NamesACertificateThatDoesNotParse) {
  const std::string broken =
      Write("broken.pem",
            "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n");
  absl::Status status = ReadPemCertificates(broken, "--tls-ca").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("--tls-ca " + broken + ": certificate 1 of 1 does not parse: "));
}

TEST_F(PemFileTest, NamesACertificateGivenForAKey) {
  absl::Status status =
      ReadPemKeyPair(File("server.pem"), "--tls_cert", File("ca.pem"), "--tls_key").status();
  EXPECT_EQ(status.message(),
            "--tls_key " + File("ca.pem") + ": holds no PRIVATE KEY block (it holds CERTIFICATE)");
}

TEST_F(PemFileTest, NamesAKeyThatDoesNotMatchTheCertificate) {
  absl::Status status =
      ReadPemKeyPair(File("server.pem"), "--tls_cert", File("other.key"), "--tls_key").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "--tls_key " + File("other.key") +
                                  ": the private key does not match the certificate in "
                                  "--tls_cert " +
                                  File("server.pem"));
}

TEST_F(PemFileTest, RefusesAnEncryptedKeyWithoutAskingForAPassphrase) {
  absl::Status status =
      ReadPemKeyPair(File("server.pem"), "--tls_cert", File("encrypted.key"), "--tls_key").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("--tls_key " + File("encrypted.key") + ": the private key is encrypted"));
}

TEST_F(PemFileTest, NamesTheCertificateFileOfAPairFirst) {
  const std::string garbage = Write("garbage-cert.pem", "garbage");
  absl::Status status =
      ReadPemKeyPair(garbage, "--tls_cert", File("server.key"), "--tls_key").status();
  EXPECT_THAT(std::string(status.message()), StartsWith("--tls_cert " + garbage + ": not PEM"));
}

TEST_F(PemFileTest, NamesAKeyThatDoesNotParse) {
  const std::string broken =
      Write("broken.key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
  absl::Status status =
      ReadPemKeyPair(File("server.pem"), "--tls_cert", broken, "--tls_key").status();
  EXPECT_THAT(std::string(status.message()),
              StartsWith("--tls_key " + broken + ": the PRIVATE KEY does not parse: "));
}

}  // namespace
}  // namespace dvexport::common
