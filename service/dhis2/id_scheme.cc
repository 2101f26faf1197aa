#include "service/dhis2/id_scheme.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "service/dhis2/quote.h"
#include "service/dhis2/uid.h"

namespace dvexport::dhis2 {

namespace {

constexpr std::string_view kAttributePrefix = "ATTRIBUTE:";

}  // namespace

absl::StatusOr<std::optional<IdScheme>> ParseIdScheme(std::string_view field,
                                                      std::string_view text) {
  if (text.empty()) return std::nullopt;
  const absl::string_view view(text.data(), text.size());
  IdScheme scheme;
  if (absl::EqualsIgnoreCase(view, "UID")) return scheme;
  if (absl::EqualsIgnoreCase(view, "CODE")) {
    scheme.property = IdScheme::Property::kCode;
    return scheme;
  }
  if (absl::EqualsIgnoreCase(view, "NAME")) {
    scheme.property = IdScheme::Property::kName;
    return scheme;
  }
  // IdScheme.isAttribute: the prefix, then exactly one UID (length 21).
  if (text.size() == kAttributePrefix.size() + 11 &&
      absl::StartsWithIgnoreCase(
          view, absl::string_view(kAttributePrefix.data(), kAttributePrefix.size())) &&
      IsValidUid(text.substr(kAttributePrefix.size()))) {
    scheme.property = IdScheme::Property::kAttribute;
    scheme.attribute = std::string(text.substr(kAttributePrefix.size()));
    return scheme;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), ": ", QuoteForMessage(text),
                   " is not a valid id scheme (UID, CODE, NAME or ATTRIBUTE:<attribute uid>)"));
}

std::string IdSchemeName(const IdScheme& scheme) {
  switch (scheme.property) {
    case IdScheme::Property::kUid:
      return "UID";
    case IdScheme::Property::kCode:
      return "CODE";
    case IdScheme::Property::kName:
      return "NAME";
    case IdScheme::Property::kAttribute:
      return absl::StrCat("ATTRIBUTE:", scheme.attribute);
  }
  return "UID";
}

}  // namespace dvexport::dhis2
