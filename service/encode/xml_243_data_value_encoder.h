#ifndef DVEXPORT_SERVICE_ENCODE_XML_243_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_XML_243_DATA_VALUE_ENCODER_H_

#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes a data value set as DHIS2 2.43's XML export does (DataExportOutput.toXml on staxwax and
// Woodstox with default settings), byte for byte, in one line:
//
//   <?xml version='1.0' encoding='UTF-8'?><dataValueSet xmlns="http://dhis2.org/schema/dxf/2.0"
//   period="2024-01-01/P1M" orgUnit="DiszpKrYNg8"><dataValue dataElement="fbfJHSPpUQD"
//   categoryOptionCombo="PT59n8BQbqM" attributeOptionCombo="HllvX50cXC0" value="12"
//   storedBy="admin" created="2024-01-05T10:11:12.123+0000"
//   lastUpdated="2024-01-05T10:11:12.123+0000"/>...</dataValueSet>
//
// The root's attributes after xmlns, each only when the header has it: dataSet, period (in ADX
// form: the header's period_adx), orgUnit, attributeOptionCombo, the header's id schemes in their
// order. A document without values is the empty element <dataValueSet xmlns="..." .../>.
//
// The attributes of a value are dataElement, period, orgUnit, categoryOptionCombo,
// attributeOptionCombo, value, storedBy, created, lastUpdated, comment, in that order, then
// followUp="true" only when followup is true and deleted="true" only for deleted values. An
// attribute is left out when:
// - its text is null (a null category or attribute option combo is one DHIS2 left out,
//   excludeDefaultCoc / excludeDefaultAoc);
// - the header has it: period (when the header has period or period_adx), orgUnit and
//   attributeOptionCombo, whatever the row holds;
// - storedBy or comment is empty (DHIS2's emptyAsNull); an empty value stays value="".
// Dates use FormatLongGmtDate. Attribute values are escaped by WriteXmlAttributeEscaped
// (xml_attribute.h), as for 2.42: what XML 1.0 cannot carry becomes U+FFFD, so the output always
// parses.
//
// A start tag is closed by what follows it, as in XmlDataValueEncoder, so values need no
// separator and several encoders can write the values of one document: one writes Begin() and
// End() (after SetValuesWritten), the others UseHeader() and Add().
//
// The encoder appends to "*out" and never reads or clears it. Each call makes one capacity
// check, reserving its worst case: 6 bytes per input byte of text plus a fixed overhead. It does
// not allocate otherwise.
//
// Usage: Begin(header), any number of Add(), End(). The encoder may then start another document.
class Xml243DataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit Xml243DataValueEncoder(ChunkBuffer* out) : out_(out) {}

  Xml243DataValueEncoder(const Xml243DataValueEncoder&) = delete;
  Xml243DataValueEncoder& operator=(const Xml243DataValueEncoder&) = delete;

  // Starts a document with the header's attributes on the root, and takes from "header" the
  // attributes the values leave out (UseHeader). "header" is only read during the call.
  void Begin(const DataValueGroupHeader& header);

  // Takes from "header" the attributes the values leave out, as Begin() does, without writing
  // anything. Until called, values have every attribute.
  void UseHeader(const DataValueGroupHeader& header);

  // Appends one data value. "row" is only read during the call.
  void Add(const DataValueRow& row);

  // Tells the encoder whether the document already holds values (see above).
  void SetValuesWritten(bool values_written) { values_written_ = values_written; }
  static constexpr std::string_view kValueSeparator = "";

  // Ends the document.
  void End();

 private:
  ChunkBuffer* const out_;
  LongGmtDateFormatter dates_;
  bool values_written_ = false;
  // Whether values carry these attributes (false when the header has them).
  bool period_in_values_ = true;
  bool org_unit_in_values_ = true;
  bool attribute_option_combo_in_values_ = true;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_XML_243_DATA_VALUE_ENCODER_H_
