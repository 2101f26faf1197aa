#ifndef DVEXPORT_SERVICE_ENCODE_CSV_243_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_CSV_243_DATA_VALUE_ENCODER_H_

#include <string>
#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes data values as DHIS2 2.43's CSV export does (DataExportOutput.toCsv on javacsv 2.0's
// CsvWriter), byte for byte:
//
//   dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,
//   lastupdated,comment,followup,deleted            <- one line, always written
//   fbfJHSPpUQD,202401,DiszpKrYNg8,PT59n8BQbqM,HllvX50cXC0,12,admin,
//   2024-01-05T10:11:12.123+0000,,false,false       <- one line per value
//
// The same header line, columns and field rules (csv_field.h) as 2.42's CsvDataValueEncoder,
// with 2.43's differences:
// - deleted is true or false (2.42: true or null);
// - followup is empty when followup_null (2.42: false);
// - a null category or attribute option combo (one DHIS2 left out, excludeDefaultCoc /
//   excludeDefaultAoc) is an empty field, as any null text;
// - the header's period (its ISO id), orgUnit and attributeOptionCombo, when it has them, are
//   written in every line in place of the row's (DHIS2 fills the group's back in). The header's
//   other members are not written at all.
//
// The encoder appends to "*out" and never reads or clears it. Each call makes one capacity
// check, reserving its worst case: 3 bytes per input byte of text plus a fixed overhead and the
// header's fields. It does not allocate otherwise (UseHeader() keeps a copy of the header's
// fields).
//
// Usage: Begin(header), any number of Add(), End(). The encoder may then start another document.
class Csv243DataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit Csv243DataValueEncoder(ChunkBuffer* out) : out_(out) {}

  Csv243DataValueEncoder(const Csv243DataValueEncoder&) = delete;
  Csv243DataValueEncoder& operator=(const Csv243DataValueEncoder&) = delete;

  // Writes the header line and takes the fields the lines fill in from "header" (UseHeader).
  // "header" is only read during the call.
  void Begin(const DataValueGroupHeader& header);

  // Takes the fields the lines fill in from "header", as Begin() does, without writing anything:
  // for an encoder that writes only lines of a document another encoder began. Until called,
  // every line has the row's own fields.
  void UseHeader(const DataValueGroupHeader& header);

  // Appends one line. "row" is only read during the call.
  void Add(const DataValueRow& row);

  // Writes nothing; present so that every encoder is driven the same way.
  void End() {}

  // Lines need no separator, so several encoders can write the lines of one file.
  void SetValuesWritten(bool /*values_written*/) {}
  static constexpr std::string_view kValueSeparator = "";

 private:
  // A header member rendered as a field, and whether the lines use it instead of the row's.
  struct HeaderField {
    std::string field;
    bool used = false;
  };

  ChunkBuffer* const out_;
  LongGmtDateFormatter dates_;
  HeaderField period_, org_unit_, attribute_option_combo_;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_CSV_243_DATA_VALUE_ENCODER_H_
