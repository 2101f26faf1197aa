#ifndef DVEXPORT_TESTS_ENCODE_DATA_VALUE_ENCODER_243_TESTING_H_
#define DVEXPORT_TESTS_ENCODE_DATA_VALUE_ENCODER_243_TESTING_H_

// What the tests of DHIS2 2.43's JSON, CSV and XML encoders feed them.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "tests/encode/data_value_encoder_testing.h"

namespace dvexport::encode {

// The header of a request for one data set, one period (July 2024), one org unit and one
// attribute option combo.
inline DataValueGroupHeader FullGroupHeader() {
  DataValueGroupHeader header;
  header.data_set = T("pBOMPrpg1QX");
  header.period = T("202407");
  header.period_adx = T("2024-07-01/P1M");
  header.org_unit = T("DiszpKrYNg8");
  header.attribute_option_combo = T("HllvX50cXC0");
  return header;
}

// The seven id scheme members of idScheme=CODE, in 2.43's order.
inline std::vector<std::pair<std::string_view, std::string_view>> AllCodeIdSchemes() {
  return {{"dataSetIdScheme", "CODE"},
          {"dataElementIdScheme", "CODE"},
          {"orgUnitIdScheme", "CODE"},
          {"categoryOptionComboIdScheme", "CODE"},
          {"attributeOptionComboIdScheme", "CODE"},
          {"categoryIdScheme", "CODE"},
          {"categoryOptionIdScheme", "CODE"}};
}

// The whole document "Encoder" writes for "header" and "rows", into a ChunkBuffer that starts
// with "initial_capacity" bytes.
template <typename Encoder>
std::string Encode243(const DataValueGroupHeader& header, const std::vector<DataValueRow>& rows,
                      size_t initial_capacity = 1024) {
  ChunkBuffer buffer(initial_capacity);
  Encoder encoder(&buffer);
  encoder.Begin(header);
  for (const DataValueRow& row : rows) encoder.Add(row);
  encoder.End();
  return std::string(buffer.view());
}

// The same document written as the pipeline writes a file with several readers: one encoder
// writes the start and the end, one encoder per row writes that row alone (UseHeader,
// SetValuesWritten(true)), and the first value loses Encoder::kValueSeparator.
template <typename Encoder>
std::string EncodeByParts243(const DataValueGroupHeader& header,
                             const std::vector<DataValueRow>& rows) {
  ChunkBuffer frame(0);
  Encoder frame_encoder(&frame);
  frame_encoder.Begin(header);
  std::string document(frame.view());
  for (size_t i = 0; i < rows.size(); ++i) {
    ChunkBuffer values(0);
    Encoder encoder(&values);
    encoder.UseHeader(header);
    encoder.SetValuesWritten(true);
    encoder.Add(rows[i]);
    std::string_view rendered = values.view();
    if (i == 0) rendered.remove_prefix(Encoder::kValueSeparator.size());
    document.append(rendered);
  }
  frame.Clear();
  frame_encoder.SetValuesWritten(!rows.empty());
  frame_encoder.End();
  document.append(frame.view());
  return document;
}

}  // namespace dvexport::encode

#endif  // DVEXPORT_TESTS_ENCODE_DATA_VALUE_ENCODER_243_TESTING_H_
