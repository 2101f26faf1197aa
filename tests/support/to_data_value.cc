#include "tests/support/to_data_value.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/utf8_sequence.h"
#include "tests/support/postgres_timestamp.h"

namespace dvexport::encode {
namespace {

// Copies "bytes" to "*out", replacing each ill-formed UTF-8 subpart with U+FFFD as
// common::ScanUtf8Sequence defines it (the JSON, CSV and protobuf encoders do the same).
void AssignUtf8(std::string_view bytes, std::string* out) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  const size_t valid = common::WellFormedUtf8Prefix(s, n);
  if (valid == n) {
    out->assign(bytes.data(), n);
    return;
  }
  // Rare: the well-formed prefix, then the rest repaired.
  out->resize(valid + common::RepairedUtf8Size(s + valid, n - valid));
  std::memcpy(out->data(), s, valid);
  common::WriteRepairedUtf8(out->data() + valid, s + valid, n - valid);
}

void SetTimestamp(int64_t micros, google::protobuf::Timestamp* out) {
  int64_t seconds = micros / 1000000;
  int64_t rest = micros % 1000000;
  if (rest < 0) {
    --seconds;
    rest += 1000000;
  }
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(rest * 1000));
}

}  // namespace

void ToDataValue(const DataValueRow& row, dvexport::v1::DataValue* out) {
  if (!row.data_element.is_null) AssignUtf8(row.data_element.bytes, out->mutable_data_element());
  AssignUtf8(row.period.bytes, out->mutable_period());
  if (!row.org_unit.is_null) AssignUtf8(row.org_unit.bytes, out->mutable_org_unit());
  if (!row.category_option_combo.is_null) {
    AssignUtf8(row.category_option_combo.bytes, out->mutable_category_option_combo());
  }
  if (!row.attribute_option_combo.is_null) {
    AssignUtf8(row.attribute_option_combo.bytes, out->mutable_attribute_option_combo());
  }
  if (!row.value.is_null) AssignUtf8(row.value.bytes, out->mutable_value());
  if (!row.stored_by.is_null) AssignUtf8(row.stored_by.bytes, out->mutable_stored_by());
  SetTimestamp(test_support::MicrosOf(row.created), out->mutable_created());
  SetTimestamp(test_support::MicrosOf(row.last_updated), out->mutable_last_updated());
  if (!row.comment.is_null) AssignUtf8(row.comment.bytes, out->mutable_comment());
  out->set_followup(row.followup);
  out->set_deleted(row.deleted);
}

}  // namespace dvexport::encode
