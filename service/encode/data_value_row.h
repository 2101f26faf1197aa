#ifndef DVEXPORT_SERVICE_ENCODE_DATA_VALUE_ROW_H_
#define DVEXPORT_SERVICE_ENCODE_DATA_VALUE_ROW_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace dvexport::encode {

// A nullable text field. "bytes" should be UTF-8 but may hold anything: the encoders replace
// ill-formed sequences with U+FFFD. When "is_null" is true, "bytes" is ignored.
// The referenced bytes must stay live while the row is being encoded.
struct Text {
  std::string_view bytes;
  bool is_null = false;
};

// One row of DHIS2's datavalue export, with identifiers already in the output id scheme.
struct DataValueRow {
  Text data_element, period, org_unit, category_option_combo, attribute_option_combo;
  Text value, stored_by, comment;
  // Microseconds since 1970-01-01T00:00:00 of the database's timestamp-without-time-zone wall
  // clock; printed as UTC.
  int64_t created_micros = 0;
  int64_t last_updated_micros = 0;
  bool followup = false;  // DB NULL already mapped to false by the caller.
  bool deleted = false;
};

// The single data value set header. DHIS2 writes it when exactly one data set, one period and
// one org unit were requested.
struct DataValueSetHeader {
  Text data_set;
  // completedatasetregistration.date in the same unit as DataValueRow::created_micros;
  // std::nullopt when there is no registration (written as "completeDate":null).
  std::optional<int64_t> complete_date_micros;
  Text period;
  Text org_unit;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_DATA_VALUE_ROW_H_
