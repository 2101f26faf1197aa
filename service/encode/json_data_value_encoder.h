#ifndef DVEXPORT_SERVICE_ENCODE_JSON_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_JSON_DATA_VALUE_ENCODER_H_

#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes a data value set as DHIS2 2.42's JSON export does (Jackson, compact), byte for byte:
//
//   {"dataValues":[{"dataElement":"fbfJHSPpUQD","period":"202401",...,"followup":false},...]}
//
// Each value has the keys dataElement, period, orgUnit, categoryOptionCombo,
// attributeOptionCombo, value, storedBy, created, lastUpdated, comment, followup, in that order,
// then "deleted":true only for deleted values. Null text fields are written as null. Dates use
// FormatLongGmtDate.
//
// Strings are escaped as Jackson's UTF-8 generator does: \" \\ \b \t \n \f \r; the other bytes
// below 0x20 as \u00XX (upper-case hex); characters beyond the BMP as an escaped surrogate pair
// (U+1F600 as \uD83D\uDE00); everything else, including '/', DEL and U+2028/U+2029, as raw
// UTF-8. Ill-formed UTF-8 in the input is replaced with U+FFFD as described at
// ScanUtf8Sequence, so the output is always well-formed UTF-8 and valid JSON.
//
// The encoder appends to "*out" and never reads or clears it, so the caller may hand out and
// Clear() the buffer between calls. Each call makes one capacity check, reserving its worst case:
// 6 bytes per input byte of text (a byte below 0x20 becomes \u00XX; nothing grows more) plus
// a fixed overhead of 273 bytes. It does not allocate otherwise.
//
// Usage: Begin(), any number of Add(), End(). The encoder may then start another document.
class JsonDataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit JsonDataValueEncoder(ChunkBuffer* out);

  JsonDataValueEncoder(const JsonDataValueEncoder&) = delete;
  JsonDataValueEncoder& operator=(const JsonDataValueEncoder&) = delete;

  // Starts a document: `{"dataValues":[` when "header" is nullptr, otherwise
  // `{"dataSet":..,"completeDate":..,"period":..,"orgUnit":..,"dataValues":[`.
  // "*header" is only read during the call.
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

  // Ends the document: `]}`.
  void End();

 private:
  ChunkBuffer* const out_;
  LongGmtDateFormatter dates_;
  bool first_value_ = true;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_JSON_DATA_VALUE_ENCODER_H_
