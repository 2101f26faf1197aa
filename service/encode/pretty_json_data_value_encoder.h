#ifndef DVEXPORT_SERVICE_ENCODE_PRETTY_JSON_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_PRETTY_JSON_DATA_VALUE_ENCODER_H_

#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes the document of JsonDataValueEncoder indented by two spaces, one member per line, with
// a space after each colon and a final line end:
//
//   {
//     "dataValues": [
//       {
//         "dataElement": "fbfJHSPpUQD",
//         ...
//         "followup": false
//       }
//     ]
//   }
//
// Parsed, it is the same document as JsonDataValueEncoder's: the same keys in the same order,
// the same nulls and strings, escaped exactly as JsonDataValueEncoder escapes them. Written in
// one pass like the compact encoder (one capacity check per call, no allocation otherwise); a
// class of its own so that the compact encoder's hot path knows nothing of indentation.
//
// Usage: Begin(), any number of Add(), End(). The encoder may then start another document.
class PrettyJsonDataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit PrettyJsonDataValueEncoder(ChunkBuffer* out);

  PrettyJsonDataValueEncoder(const PrettyJsonDataValueEncoder&) = delete;
  PrettyJsonDataValueEncoder& operator=(const PrettyJsonDataValueEncoder&) = delete;

  // Starts a document, with the single data value set header if "header" is not nullptr.
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

  // Ends the document.
  void End();

 private:
  ChunkBuffer* const out_;
  LongGmtDateFormatter dates_;
  bool first_value_ = true;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_PRETTY_JSON_DATA_VALUE_ENCODER_H_
