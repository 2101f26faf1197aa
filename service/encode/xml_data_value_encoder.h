#ifndef DVEXPORT_SERVICE_ENCODE_XML_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_XML_DATA_VALUE_ENCODER_H_

#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes a data value set as DHIS2 2.42's XML export does (XmlDataValueSetWriter on staxwax and
// Woodstox with default settings), byte for byte, in one line:
//
//   <?xml version='1.0' encoding='UTF-8'?><dataValueSet xmlns="http://dhis2.org/schema/dxf/2.0">
//   <dataValue dataElement="fbfJHSPpUQD" period="202401" orgUnit="DiszpKrYNg8"
//   categoryOptionCombo="PT59n8BQbqM" attributeOptionCombo="HllvX50cXC0" value="12"
//   storedBy="admin" created="2024-01-05T10:11:12.123+0000"
//   lastUpdated="2024-01-05T10:11:12.123+0000" followUp="false"/>...</dataValueSet>
//
// The attributes of a value are dataElement, period, orgUnit, categoryOptionCombo,
// attributeOptionCombo, value, storedBy, created, lastUpdated, comment, followUp (capital U, as
// DHIS2 writes it), in that order, then deleted="true" only for deleted values; a null text field
// has no attribute at all. With the single data value set header, the root also has dataSet,
// completeDate, period and orgUnit, each only when not null. A document without values is the
// empty element <dataValueSet xmlns="..."/>. Dates use FormatLongGmtDate. Attribute values are
// escaped by WriteXmlAttributeEscaped (xml_attribute.h): what XML 1.0 cannot carry becomes
// U+FFFD, so the output always parses.
//
// A start tag is closed by what follows it: each value is written as `><dataValue .../` and
// End() writes `></dataValueSet>`, or `/>` when the document has no values. So values need no
// separator (kValueSeparator is empty) and several encoders can write the values of one
// document, as with JsonDataValueEncoder: one writes Begin() and End() (after
// SetValuesWritten), the others only Add().
//
// The encoder appends to "*out" and never reads or clears it. Each call makes one capacity
// check, reserving its worst case: 6 bytes per input byte of text plus a fixed overhead. It does
// not allocate otherwise.
//
// Usage: Begin(), any number of Add(), End(). The encoder may then start another document.
class XmlDataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit XmlDataValueEncoder(ChunkBuffer* out) : out_(out) {}

  XmlDataValueEncoder(const XmlDataValueEncoder&) = delete;
  XmlDataValueEncoder& operator=(const XmlDataValueEncoder&) = delete;

  // Starts a document, with the header's attributes on the root if "header" is not nullptr.
  // "*header" is only read during the call.
  void Begin(const DataValueSetHeader* header);

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
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_XML_DATA_VALUE_ENCODER_H_
