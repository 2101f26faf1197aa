#ifndef DVEXPORT_SERVICE_ENCODE_JSON_243_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_JSON_243_DATA_VALUE_ENCODER_H_

#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

// Writes a data value set as DHIS2 2.43's JSON export does (DataExportOutput.toJson on json-tree
// 1.8.1's JsonAppender, MINIMIZED with excludeNullMembers), byte for byte, in the layout "Layout"
// gives (json_layout.h): CompactJsonLayout, DHIS2's (Json243DataValueEncoder), or
// PrettyJsonLayout, dvexport's indented form of the same document (PrettyJson243DataValueEncoder;
// it ends with a line end, the compact one does not).
//
// The document's members, each only when the header has it: dataSet, period (the ISO id),
// orgUnit, attributeOptionCombo, the header's id schemes in their order, then dataValues:
//
//   {"dataSet":"pBOMPrpg1QX","period":"202407","orgUnit":"DiszpKrYNg8","dataValues":[...]}
//   {"dataValues":[]}
//
// Each value has the keys dataElement, period, orgUnit, categoryOptionCombo,
// attributeOptionCombo, value, storedBy, created, lastUpdated, comment, followup, in that order,
// then "deleted":true only for deleted values. A key is left out when:
// - its text is null (a null category or attribute option combo is one DHIS2 left out,
//   excludeDefaultCoc / excludeDefaultAoc);
// - the header has the member: period (when the header has period or period_adx), orgUnit and
//   attributeOptionCombo are then written once, at the top, whatever the row holds;
// - storedBy or comment is empty (DHIS2's emptyAsNull); an empty value stays "";
// - followup: when followup_null.
// dataElement is always written. REQUIRES: row.data_element is not null (DHIS2's datavalue key).
// Dates use FormatLongGmtDate. Strings are escaped by WriteJson243Escaped (json_243_string.h): as
// 2.43 writes them, except that the output is always well-formed UTF-8 and valid JSON. Member
// names (the id schemes' included) are written as they are.
//
// The encoder appends to "*out" and never reads or clears it, so the caller may hand out and
// Clear() the buffer between calls. Each call makes one capacity check, reserving its worst case:
// 6 bytes per input byte of text plus a fixed overhead. It does not allocate otherwise.
//
// Usage: Begin(header), any number of Add(), End(). The encoder may then start another document.
template <typename Layout>
class Json243DataValueEncoderWithLayout {
 public:
  // "*out" must outlive the encoder.
  explicit Json243DataValueEncoderWithLayout(ChunkBuffer* out) : out_(out) {}

  Json243DataValueEncoderWithLayout(const Json243DataValueEncoderWithLayout&) = delete;
  Json243DataValueEncoderWithLayout& operator=(const Json243DataValueEncoderWithLayout&) = delete;

  // Starts a document with the header's members (none: {"dataValues":[), and takes from
  // "header" the members the values leave out (UseHeader). "header" is only read during the call.
  void Begin(const DataValueGroupHeader& header);

  // Takes from "header" the members the values leave out, as Begin() does, without writing
  // anything: for an encoder that writes only values of a document another encoder began. Until
  // called, values have every member.
  void UseHeader(const DataValueGroupHeader& header);

  // Appends one data value. "row" is only read during the call.
  void Add(const DataValueRow& row);

  // For a document written by several encoders, as JsonDataValueEncoder::SetValuesWritten: one
  // encoder writes Begin() and End(), the others UseHeader() and Add(), after
  // SetValuesWritten(true); the writer of the values chunks removes kValueSeparator from the front
  // of the first of them.
  void SetValuesWritten(bool values_written) { first_value_ = !values_written; }
  static constexpr std::string_view kValueSeparator = ",";

  // Ends the document.
  void End();

 private:
  ChunkBuffer* const out_;
  LongGmtDateFormatter dates_;
  bool first_value_ = true;
  // Whether values carry these keys (false when the header has them).
  bool period_in_values_ = true;
  bool org_unit_in_values_ = true;
  bool attribute_option_combo_in_values_ = true;
};

struct CompactJsonLayout;
struct PrettyJsonLayout;

using Json243DataValueEncoder = Json243DataValueEncoderWithLayout<CompactJsonLayout>;
using PrettyJson243DataValueEncoder = Json243DataValueEncoderWithLayout<PrettyJsonLayout>;

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_JSON_243_DATA_VALUE_ENCODER_H_
