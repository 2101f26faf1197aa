// DHIS2 identifiers (UIDs).

#ifndef DVEXPORT_SERVICE_DHIS2_UID_H_
#define DVEXPORT_SERVICE_DHIS2_UID_H_

#include <string_view>

namespace dvexport::dhis2 {

// Returns true if `s` is a DHIS2 UID: exactly 11 ASCII characters, a letter
// followed by 10 letters or digits (CodeGenerator.UID_REGEXP,
// ^[a-zA-Z][a-zA-Z0-9]{10}$), e.g. "ImspTQPwCqd".
bool IsValidUid(std::string_view s);

// The UID of DHIS2's default category option combo ("default"), the same in every DHIS2 database
// (2.43's UID.isDefaultOptionCombo compares with it, not with the name).
inline constexpr char kDefaultCategoryOptionComboUid[] = "HllvX50cXC0";

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_UID_H_
