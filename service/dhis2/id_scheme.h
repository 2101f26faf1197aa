// DHIS2 identifier schemes (IdScheme): which property names an object.

#ifndef DVEXPORT_SERVICE_DHIS2_ID_SCHEME_H_
#define DVEXPORT_SERVICE_DHIS2_ID_SCHEME_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dvexport::dhis2 {

// An identifier scheme: the uid, code or name column, or the value of one
// attribute (attributevalues #>> '{<attribute uid>,value}').
struct IdScheme {
  enum class Property { kUid, kCode, kName, kAttribute };

  Property property = Property::kUid;
  // The attribute's UID when property is kAttribute, else empty.
  std::string attribute;

  static IdScheme Uid() { return {}; }
  friend bool operator==(const IdScheme&, const IdScheme&) = default;
};

// Parses a scheme as DHIS2's IdScheme.from does, case-insensitively: "UID",
// "CODE", "NAME", or "ATTRIBUTE:<uid>" (the prefix in any case, the UID as
// stored). Returns nullopt for an empty `text` (unset), and InvalidArgument
// naming `field` for anything else, including DHIS2's "ID" and "UUID", which
// its export cannot use: id_scheme: "ID" is not a valid id scheme (UID, CODE,
// NAME or ATTRIBUTE:<attribute uid>).
absl::StatusOr<std::optional<IdScheme>> ParseIdScheme(std::string_view field,
                                                      std::string_view text);

// "UID", "CODE", "NAME" or "ATTRIBUTE:<uid>".
std::string IdSchemeName(const IdScheme& scheme);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_ID_SCHEME_H_
