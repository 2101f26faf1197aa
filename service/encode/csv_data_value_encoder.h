#ifndef DVEXPORT_SERVICE_ENCODE_CSV_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_CSV_DATA_VALUE_ENCODER_H_

#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes data values as DHIS2 2.42's CSV export does (javacsv 2.0 CsvWriter), byte for byte:
//
//   dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,
//   lastupdated,comment,followup,deleted            <- one line, always written
//   fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,
//   2024-01-05T10:11:12.123+0000,,false,null        <- one line per value
//
// There is no created column. followup is true/false; deleted is true, or the literal null for
// values that are not deleted (DHIS2 prints a null Boolean). Text fields follow javacsv:
// - null is written as an empty field;
// - leading and trailing bytes 0x00..0x20 are removed (Java's String.trim());
// - the field is quoted when it contains '"', ',', '\n' or '\r', or when it is in the first
//   column and is empty or starts with '#'; inside quotes '"' is doubled;
// - nothing else is escaped. Lines end with '\n'; there is no byte order mark.
// Ill-formed UTF-8 is replaced with U+FFFD as described at common::ScanUtf8Sequence, so the output
// is always well-formed UTF-8.
//
// The encoder appends to "*out" and never reads or clears it, so the caller may hand out and
// Clear() the buffer between calls. Each call makes one capacity check, reserving its worst case:
// 3 bytes per input byte of text (an ill-formed byte becomes U+FFFD; '"' only doubles) plus
// a fixed overhead of 67 bytes. It does not allocate otherwise.
//
// Usage: Begin(), any number of Add(), End(). The encoder may then start another document.
class CsvDataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit CsvDataValueEncoder(ChunkBuffer* out);

  CsvDataValueEncoder(const CsvDataValueEncoder&) = delete;
  CsvDataValueEncoder& operator=(const CsvDataValueEncoder&) = delete;

  // Writes the header line. "header" is ignored: DHIS2's CSV has no data value set header.
  void Begin(const DataValueSetHeader* header);

  // Appends one line. "row" is only read during the call.
  void Add(const DataValueRow& row);

  // Writes nothing; present so that both encoders are driven the same way.
  void End();

  // Present so that every encoder is driven the same way: lines need no separator, so
  // several CsvDataValueEncoders can write the lines of one file (see JsonDataValueEncoder).
  void SetValuesWritten(bool /*values_written*/) {}
  static constexpr std::string_view kValueSeparator = "";

 private:
  ChunkBuffer* const out_;
  LongGmtDateFormatter dates_;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_CSV_DATA_VALUE_ENCODER_H_
