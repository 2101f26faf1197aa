#include "service/dhis2/sharing.h"

#include <algorithm>

namespace dvexport::dhis2 {
namespace {

struct PermissionChar {
  size_t position;
  char letter;
};

PermissionChar CharOf(Permission permission) {
  switch (permission) {
    case Permission::kRead:
      return {0, 'r'};
    case Permission::kWrite:
      return {1, 'w'};
    case Permission::kDataRead:
      return {2, 'r'};
    case Permission::kDataWrite:
      return {3, 'w'};
  }
  return {0, 'r'};
}

// AccessStringHelper.validateAccessString.
bool ValidAccessString(const std::string& access) {
  if (access.size() != 8 || access.compare(4, 4, "----") != 0) return false;
  return (access[0] == '-' || access[0] == 'r') && (access[1] == '-' || access[1] == 'w') &&
         (access[2] == '-' || access[2] == 'r') && (access[3] == '-' || access[3] == 'w');
}

}  // namespace

bool AccessEnabled(const std::optional<std::string>& access, Permission permission) {
  if (!access) return true;
  const PermissionChar c = CharOf(permission);
  return ValidAccessString(*access) && (*access)[c.position] == c.letter;
}

bool SharingAllows(const Principal& principal, const Sharing& sharing, Permission permission) {
  if (AccessEnabled(sharing.public_access, permission)) return true;
  if (!principal.group_uids.empty()) {
    for (const SharingEntry& entry : sharing.user_groups) {
      if (AccessEnabled(entry.access, permission) && entry.id &&
          std::binary_search(principal.group_uids.begin(), principal.group_uids.end(), *entry.id)) {
        return true;
      }
    }
  }
  for (const SharingEntry& entry : sharing.users) {
    if (AccessEnabled(entry.access, permission) && entry.id && *entry.id == principal.uid) {
      return true;
    }
  }
  return false;
}

bool CanDataReadDataSet(const Principal& principal, const Sharing& sharing) {
  if (principal.superuser) return true;
  return SharingAllows(principal, sharing, Permission::kDataRead) ||
         SharingAllows(principal, sharing, Permission::kDataWrite);
}

bool CanDataReadOptionCombo(const Principal& principal, bool is_default,
                            const std::vector<Sharing>& options) {
  if (principal.superuser || is_default || options.empty()) return true;
  auto all = [&](Permission permission) {
    return std::all_of(options.begin(), options.end(), [&](const Sharing& option) {
      return SharingAllows(principal, option, permission);
    });
  };
  return all(Permission::kDataRead) || all(Permission::kDataWrite);
}

bool InDataViewHierarchy(std::string_view path, const std::vector<std::string>& view_unit_uids) {
  return std::any_of(view_unit_uids.begin(), view_unit_uids.end(), [&](const std::string& uid) {
    return path.find(uid) != std::string_view::npos;
  });
}

}  // namespace dvexport::dhis2
