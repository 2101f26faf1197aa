#ifndef DVEXPORT_SERVICE_ENCODE_GROUP_HEADER_H_
#define DVEXPORT_SERVICE_ENCODE_GROUP_HEADER_H_

// How DHIS2 2.43's encoders (JSON, CSV, XML) read a DataValueGroupHeader.

#include <optional>

#include "service/encode/data_value_row.h"

namespace dvexport::encode {

// The member when the header has it (set and not null), otherwise nullptr.
inline const Text* GroupHeaderMember(const std::optional<Text>& member) {
  return member.has_value() && !member->is_null ? &*member : nullptr;
}

// Whether the header has a period, in either form: the values then leave theirs out.
inline bool GroupHeaderHasPeriod(const DataValueGroupHeader& header) {
  return GroupHeaderMember(header.period) != nullptr ||
         GroupHeaderMember(header.period_adx) != nullptr;
}

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_GROUP_HEADER_H_
