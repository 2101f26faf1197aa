#include "client/credentials.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace dvexport::client {
namespace {

// A token longer than this is no DHIS2 token (those have 40 to 60 characters);
// the file is not read further.
constexpr size_t kMaxTokenFileBytes = 4096;

// OK if "token" can be sent as it is: printable ASCII without space. The
// message names "source" and the position, never the token.
absl::Status CheckTokenCharacters(absl::string_view source, absl::string_view token) {
  if (token.empty())
    return absl::InvalidArgumentError(absl::StrCat(source, ": the token is empty"));
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": the token holds a character that no token holds (at position ",
                       i + 1, "): expected one line holding only the token"));
    }
  }
  return absl::OkStatus();
}

// Sends one fixed metadata entry; needs no thread of its own.
class AuthorizationPlugin final : public grpc::MetadataCredentialsPlugin {
 public:
  explicit AuthorizationPlugin(std::string value) : value_(std::move(value)) {}

  bool IsBlocking() const override { return false; }
  const char* GetType() const override { return "dvexport.dhis2"; }

  grpc::Status GetMetadata(grpc::string_ref, grpc::string_ref, const grpc::AuthContext&,
                           std::multimap<grpc::string, grpc::string>* metadata) override {
    metadata->emplace("authorization", value_);
    return grpc::Status::OK;
  }

  // gRPC may log this: it names the scheme only.
  grpc::string DebugString() override {
    return absl::StartsWith(value_, "Basic ") ? "dvexport DHIS2 credentials (Basic)"
                                              : "dvexport DHIS2 credentials (ApiToken)";
  }

 private:
  const std::string value_;
};

}  // namespace

CallCredentialsSpec CallCredentialsSpec::Token(std::string token) {
  CallCredentialsSpec spec;
  spec.token = std::move(token);
  return spec;
}

CallCredentialsSpec CallCredentialsSpec::Password(std::string username, std::string password) {
  CallCredentialsSpec spec;
  spec.username = std::move(username);
  spec.password = std::move(password);
  return spec;
}

std::string CallCredentialsSpec::Describe() const {
  if (!token.empty()) return "token";
  if (!username.empty()) return absl::StrCat("user ", username);
  return "none";
}

absl::StatusOr<std::string> AuthorizationValue(const CallCredentialsSpec& spec) {
  if (!spec.token.empty()) {
    if (!spec.username.empty() || !spec.password.empty()) {
      return absl::InvalidArgumentError(
          "credentials: a token and a username or password exclude each other");
    }
    absl::Status status = CheckTokenCharacters("credentials", spec.token);
    if (!status.ok()) return status;
    return absl::StrCat("ApiToken ", spec.token);
  }
  if (spec.username.empty()) {
    return absl::InvalidArgumentError(spec.password.empty()
                                          ? "credentials: none given"
                                          : "credentials: a password needs a username");
  }
  if (spec.username.find(':') != std::string::npos) {
    return absl::InvalidArgumentError(
        "credentials: the username holds ':', which HTTP Basic cannot carry");
  }
  for (const char c : spec.username) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError("credentials: the username holds a control character");
    }
  }
  if (spec.password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("credentials: user ", spec.username, " has an empty password"));
  }
  return absl::StrCat("Basic ",
                      absl::Base64Escape(absl::StrCat(spec.username, ":", spec.password)));
}

absl::StatusOr<std::shared_ptr<grpc::CallCredentials>> MakeCallCredentials(
    const CallCredentialsSpec& spec) {
  if (spec.empty()) return std::shared_ptr<grpc::CallCredentials>();
  absl::StatusOr<std::string> value = AuthorizationValue(spec);
  if (!value.ok()) return value.status();
  return grpc::experimental::MetadataCredentialsFromPlugin(
      std::make_unique<AuthorizationPlugin>(*std::move(value)), GRPC_SECURITY_NONE);
}

absl::Status ApplyCallCredentials(const CallCredentialsSpec& spec, grpc::ClientContext* context) {
  if (spec.empty()) return absl::OkStatus();
  absl::StatusOr<std::shared_ptr<grpc::CallCredentials>> credentials = MakeCallCredentials(spec);
  if (!credentials.ok()) return credentials.status();
  context->set_credentials(*credentials);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  const std::string source = absl::StrCat("--token-file ", path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(source, ": cannot be read: ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(source, ": not a regular file"));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: its group or others may access it (mode %04o): a token must be private to its "
        "owner (chmod 600 %s)",
        source, st.st_mode & 07777, path));
  }
  std::string contents;
  char buffer[1024];
  while (contents.find('\n') == std::string::npos && contents.size() < kMaxTokenFileBytes) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat(source, ": cannot be read: ", std::strerror(error)));
    }
    contents.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  const std::string token(absl::StripAsciiWhitespace(contents.substr(0, contents.find('\n'))));
  absl::Status status = CheckTokenCharacters(source, token);
  if (!status.ok()) return status;
  return token;
}

absl::StatusOr<std::string> TokenFromVariable(absl::string_view variable, absl::string_view value) {
  const std::string token(absl::StripAsciiWhitespace(value));
  absl::Status status = CheckTokenCharacters(variable, token);
  if (!status.ok()) return status;
  return token;
}

}  // namespace dvexport::client
