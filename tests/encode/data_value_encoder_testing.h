#ifndef DVEXPORT_TESTS_ENCODE_DATA_VALUE_ENCODER_TESTING_H_
#define DVEXPORT_TESTS_ENCODE_DATA_VALUE_ENCODER_TESTING_H_

// What the JSON, pretty JSON, XML and CSV encoder tests feed their encoders.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"

namespace dvexport::encode {

// A non-null text viewing "bytes".
inline Text T(std::string_view bytes) { return Text{bytes, false}; }
inline const Text kNullText{{}, true};

// The row of the example in the DHIS2 reference (§3.2).
inline DataValueRow ExampleRow() {
  DataValueRow row;
  row.data_element = T("fbfJHSPpUQD");
  row.period = T("202401");
  row.org_unit = T("DiszpKrYNg8");
  row.category_option_combo = T("PT59n8BQbqM");
  row.attribute_option_combo = T("HllvX50cXC0");
  row.value = T("12");
  row.stored_by = T("admin");
  row.created.micros = 1704449472123000;  // 2024-01-05T10:11:12.123
  row.last_updated.micros = 1704449472123999;
  row.comment = kNullText;
  return row;
}

// The whole document "Encoder" writes for "header" and "rows", into a ChunkBuffer that starts
// with "initial_capacity" bytes.
template <typename Encoder>
std::string Encode(const DataValueSetHeader* header, const std::vector<DataValueRow>& rows,
                   size_t initial_capacity = 1024) {
  ChunkBuffer buffer(initial_capacity);
  Encoder encoder(&buffer);
  encoder.Begin(header);
  for (const DataValueRow& row : rows) encoder.Add(row);
  encoder.End();
  return std::string(buffer.view());
}

}  // namespace dvexport::encode

#endif  // DVEXPORT_TESTS_ENCODE_DATA_VALUE_ENCODER_TESTING_H_
