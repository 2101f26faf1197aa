#ifndef DVEXPORT_SERVICE_ENCODE_JSON_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_JSON_DATA_VALUE_ENCODER_H_

#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes a data value set as DHIS2 2.42's JSON export does (Jackson), byte for byte, in the
// layout "Layout" gives: CompactJsonLayout (JsonDataValueEncoder, below) or PrettyJsonLayout
// (PrettyJsonDataValueEncoder, pretty_json_data_value_encoder.h). A layout is only the white
// space around the members: the literals built from it are constants, so each layout's Add() is
// the same straight-line code with its own literals.
//
// Each value has the keys dataElement, period, orgUnit, categoryOptionCombo,
// attributeOptionCombo, value, storedBy, created, lastUpdated, comment, followup, in that order,
// then "deleted":true only for deleted values. Null text fields are written as null. Dates use
// FormatLongGmtDate. Strings are escaped as Jackson escapes them, by common::WriteJsonEscaped
// (common/json_string.h), and ill-formed UTF-8 becomes U+FFFD, so the output is always well-formed
// UTF-8 and valid JSON.
//
// The encoder appends to "*out" and never reads or clears it, so the caller may hand out and
// Clear() the buffer between calls. Each call makes one capacity check, reserving its worst case:
// 6 bytes per input byte of text (a byte below 0x20 becomes \u00XX; nothing grows more) plus
// a fixed overhead. It does not allocate otherwise.
//
// Usage: Begin(), any number of Add(), End(). The encoder may then start another document.
template <typename Layout>
class JsonDataValueEncoderWithLayout {
 public:
  // "*out" must outlive the encoder.
  explicit JsonDataValueEncoderWithLayout(ChunkBuffer* out) : out_(out) {}

  JsonDataValueEncoderWithLayout(const JsonDataValueEncoderWithLayout&) = delete;
  JsonDataValueEncoderWithLayout& operator=(const JsonDataValueEncoderWithLayout&) = delete;

  // Starts a document, with the single data value set header (dataSet, completeDate, period,
  // orgUnit before dataValues) if "header" is not nullptr. "*header" is only read during the
  // call.
  void Begin(const DataValueSetHeader* header);

  // Appends one data value. "row" is only read during the call.
  void Add(const DataValueRow& row);

  // For a document written by several encoders: tells this one whether the document already
  // holds values that other encoders wrote, so that Add() writes kValueSeparator before each
  // value but the document's first, and End() closes the document accordingly. One encoder
  // writes Begin() and End(), the others only Add(), each after SetValuesWritten(true); the
  // writer of the values chunks removes kValueSeparator from the front of the first of them.
  void SetValuesWritten(bool values_written) { first_value_ = !values_written; }
  static constexpr std::string_view kValueSeparator = ",";

  // Ends the document.
  void End();

 private:
  ChunkBuffer* const out_;
  LongGmtDateFormatter dates_;
  bool first_value_ = true;
};

// DHIS2's compact layout, no white space at all:
//
//   {"dataValues":[{"dataElement":"fbfJHSPpUQD","period":"202401",...,"followup":false},...]}
//
// With a header: {"dataSet":..,"completeDate":..,"period":..,"orgUnit":..,"dataValues":[...]}.
struct CompactJsonLayout;

using JsonDataValueEncoder = JsonDataValueEncoderWithLayout<CompactJsonLayout>;

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_JSON_DATA_VALUE_ENCODER_H_
