#include "service/auth/client_identities.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dvexport::auth {

absl::StatusOr<ClientIdentities> ClientIdentities::Parse(absl::string_view text,
                                                         absl::string_view source) {
  ClientIdentities identities;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    const absl::string_view entry = absl::StripAsciiWhitespace(line);
    if (entry.empty() || entry.front() == '#') continue;
    size_t split = entry.size();
    while (split > 0 && !absl::ascii_isspace(static_cast<unsigned char>(entry[split - 1]))) {
      --split;
    }
    const absl::string_view subject = absl::StripTrailingAsciiWhitespace(entry.substr(0, split));
    const absl::string_view username = entry.substr(split);
    if (subject.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": line ", number,
                       " is not \"<subject DN or URI SAN> <username>\" (one field only)"));
    }
    auto [it, inserted] = identities.users_.emplace(std::string(subject), std::string(username));
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": line ", number, " lists \"",
                                                     subject, "\" again (each subject once)"));
    }
  }
  return identities;
}

absl::StatusOr<ClientIdentities> ClientIdentities::Load(const std::string& path) {
  const std::string source = absl::StrCat("--client_identities ", path);
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::InvalidArgumentError(absl::StrCat(source, ": cannot be read"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return absl::InvalidArgumentError(absl::StrCat(source, ": cannot be read"));
  return Parse(text.str(), source);
}

std::optional<std::string> ClientIdentities::Find(absl::string_view subject,
                                                  const std::vector<std::string>& uri_sans) const {
  if (!subject.empty()) {
    if (auto it = users_.find(std::string(subject)); it != users_.end()) return it->second;
  }
  for (const std::string& uri : uri_sans) {
    if (auto it = users_.find(uri); it != users_.end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace dvexport::auth
