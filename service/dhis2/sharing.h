// DHIS2 2.42's Java sharing decisions for data reads, without I/O: AccessStringHelper.isEnabled,
// DefaultAclService.checkSharingPermission / checkOptionComboSharingPermission / canDataRead,
// and OrganisationUnit.isDescendant. The database layer reads the sharing entries (the jsonb
// "sharing" column) into Sharing; the SQL forms of DHIS2's rules (metadata read in lookups, the
// category option filter of the data query) are in service/db/access_rules.

#ifndef DVEXPORT_SERVICE_DHIS2_SHARING_H_
#define DVEXPORT_SERVICE_DHIS2_SHARING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "service/dhis2/principal.h"

namespace dvexport::dhis2 {

// AccessStringHelper.Permission: the position in an access string and its letter.
enum class Permission {
  kRead,       // 0 'r': metadata read
  kWrite,      // 1 'w': metadata write
  kDataRead,   // 2 'r'
  kDataWrite,  // 3 'w'
};

// One entry of sharing.users or sharing.userGroups. Java decides on the entry's "id" field and
// "access", never on its key (the SQL functions do the opposite).
struct SharingEntry {
  std::optional<std::string> id;      // absent or JSON null: nullopt
  std::optional<std::string> access;  // absent or JSON null: nullopt (counts as enabled)
};

// An object's "sharing" jsonb as DHIS2's Sharing sees it; a NULL column, absent keys or JSON
// nulls are an empty Sharing (no public access string: enabled for everyone).
struct Sharing {
  std::optional<std::string> public_access;  // "public"
  std::optional<std::string> owner;          // "owner" (no part in data reads in Java)
  std::vector<SharingEntry> users;
  std::vector<SharingEntry> user_groups;
};

// AccessStringHelper.isEnabled: a null access string enables everything; otherwise only a valid
// string (8 characters, [r-][w-][r-][w-]----) with the permission's letter at its position.
bool AccessEnabled(const std::optional<std::string>& access, Permission permission);

// DefaultAclService.checkSharingPermission: public, or an entry of one of the principal's groups
// (only when it has groups), or the principal's own entry, whose access enables "permission".
bool SharingAllows(const Principal& principal, const Sharing& sharing, Permission permission);

// aclService.canDataRead(user, dataSet) (E2010): superusers always; otherwise data read or data
// write (data write alone grants the read) by SharingAllows. The owner gets nothing.
bool CanDataReadDataSet(const Principal& principal, const Sharing& sharing);

// aclService.canDataRead(user, attributeOptionCombo) (E2011): superusers, the combo named
// "default" and a combo without options always; otherwise every option allows data read, or
// every option allows data write (two separate "all"s). "options": the combo's distinct
// options' sharing.
bool CanDataReadOptionCombo(const Principal& principal, bool is_default,
                            const std::vector<Sharing>& options);

// OrganisationUnit.isDescendant as isInUserDataViewHierarchy uses it (E2012): "path" (the unit's
// stored /uid/uid/... path) contains one of "view_unit_uids" (the user's data view units, else
// its data capture units) as a substring; false when there are none. No superuser exemption.
bool InDataViewHierarchy(std::string_view path, const std::vector<std::string>& view_unit_uids);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_SHARING_H_
