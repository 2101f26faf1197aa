#include "client/cli/identity.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "client/cli/password_prompt.h"

namespace dvexport::cli {

IdentitySources ProcessIdentitySources() {
  IdentitySources sources;
  sources.getenv = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  sources.prompt = [](const std::string& prompt) { return PromptForPassword(prompt); };
  return sources;
}

absl::StatusOr<client::CallCredentialsSpec> ResolveIdentity(const CommandLine& command,
                                                            const IdentitySources& sources) {
  if (!command.token_file.empty()) {
    absl::StatusOr<std::string> token = client::ReadTokenFile(command.token_file);
    if (!token.ok()) return token.status();
    return client::CallCredentialsSpec::Token(*std::move(token));
  }
  if (!command.user.empty()) {
    std::optional<std::string> password = sources.getenv(kPasswordVariable);
    if (password.has_value()) {
      if (password->empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--user ", command.user, ": ", kPasswordVariable, " is set but empty"));
      }
    } else {
      absl::StatusOr<std::string> typed =
          sources.prompt(absl::StrCat("DHIS2 password for ", command.user, ": "));
      if (!typed.ok()) {
        return absl::Status(
            typed.status().code(),
            absl::StrCat("--user ", command.user, ": ", kPasswordVariable,
                         " is not set, and the password prompt failed: ", typed.status().message(),
                         " (set ", kPasswordVariable, ", or use --token-file FILE)"));
      }
      if (typed->empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--user ", command.user, ": no password was typed"));
      }
      password = *std::move(typed);
    }
    client::CallCredentialsSpec spec =
        client::CallCredentialsSpec::Password(command.user, *std::move(password));
    absl::Status valid = client::AuthorizationValue(spec).status();
    if (!valid.ok()) return valid;
    return spec;
  }
  std::optional<std::string> token = sources.getenv(kTokenVariable);
  if (token.has_value()) {
    absl::StatusOr<std::string> checked = client::TokenFromVariable(kTokenVariable, *token);
    if (!checked.ok()) return checked.status();
    return client::CallCredentialsSpec::Token(*std::move(checked));
  }
  return client::CallCredentialsSpec{};
}

}  // namespace dvexport::cli
