#ifndef DVEXPORT_SERVICE_ENCODE_DATA_VALUE_ROW_H_
#define DVEXPORT_SERVICE_ENCODE_DATA_VALUE_ROW_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace dvexport::encode {

// A nullable text field. "bytes" should be UTF-8 but may hold anything: the encoders replace
// ill-formed sequences with U+FFFD. When "is_null" is true, "bytes" is ignored.
// The referenced bytes must stay live while the row is being encoded.
struct Text {
  std::string_view bytes;
  bool is_null = false;
  // The bytes are IsPlainText: every encoder writes them as they are, without looking at them.
  // Set for the identifiers of an export (computed once per identifier, not per row).
  bool plain = false;
};

// Whether every encoder writes "bytes" unchanged: not empty, printable ASCII (0x20-0x7E, so
// valid UTF-8 and nothing for JSON or XML to escape) without '"', '\\', '&', '<' or ',', not
// starting with '#' (CSV quotes it in the first column) and without a space at either end (CSV
// trims it). DHIS2's UIDs and most codes are.
inline bool IsPlainText(std::string_view bytes) {
  if (bytes.empty() || bytes.front() == ' ' || bytes.back() == ' ' || bytes.front() == '#') {
    return false;
  }
  for (const char c : bytes) {
    if (c < 0x20 || c > 0x7E || c == '"' || c == '\\' || c == '&' || c == '<' || c == ',') {
      return false;
    }
  }
  return true;
}

// A timestamp without time zone (the database's wall clock, printed as UTC), in one of two forms.
struct Timestamp {
  // The database's text when it has the usual form "YYYY-MM-DD HH:MM:SS[.f{1,6}]" (checked by
  // IsUsualTimestamp, service/encode/timestamp.h), which the JSON, CSV and XML encoders rearrange
  // into DHIS2's form without calendar arithmetic. Empty when "micros" holds the timestamp.
  std::string_view usual_text;
  // (The line parser hands on one text, the same pointer, for a lastupdated equal to created.)
  // Microseconds since 1970-01-01T00:00:00; only read when "usual_text" is empty.
  int64_t micros = 0;
};

// One row of DHIS2's datavalue export, with identifiers already in the output id scheme.
struct DataValueRow {
  Text data_element, period, org_unit, category_option_combo, attribute_option_combo;
  Text value, stored_by, comment;
  Timestamp created, last_updated;
  bool followup = false;  // DB NULL already mapped to false by the caller.
  // The followup column is NULL (DHIS2 2.43 then leaves the key out; 2.42 writes false).
  bool followup_null = false;
  bool deleted = false;
};

// DHIS2 2.43's top-level members of a data value set (DataExportGroup), each written only when
// set, and the members its values then leave out. For 2.43's encoders: a null Text in a row's
// category_option_combo or attribute_option_combo means "left out" (excludeDefaultCoc,
// excludeDefaultAoc): the key is absent (JSON, XML) or the field empty (CSV).
struct DataValueGroupHeader {
  std::optional<Text> data_set;
  // The period's ISO id (JSON), and its ADX form "yyyy-MM-dd/P1M" (XML's header attribute).
  std::optional<Text> period;
  std::optional<Text> period_adx;
  std::optional<Text> org_unit;
  std::optional<Text> attribute_option_combo;
  // The output id schemes that are not UID, as 2.43 names them, in its order: (dataSetIdScheme,
  // "CODE"), (dataElementIdScheme, ...), orgUnitIdScheme, categoryOptionComboIdScheme,
  // attributeOptionComboIdScheme, categoryIdScheme, categoryOptionIdScheme.
  std::vector<std::pair<std::string_view, std::string_view>> id_schemes;
};

// The single data value set header. DHIS2 writes it when exactly one data set, one period and
// one org unit were requested.
struct DataValueSetHeader {
  Text data_set;
  // completedatasetregistration.date in the unit of Timestamp::micros;
  // std::nullopt when there is no registration (written as "completeDate":null).
  std::optional<int64_t> complete_date_micros;
  Text period;
  Text org_unit;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_DATA_VALUE_ROW_H_
