#include "service/encode/csv_243_data_value_encoder.h"

#include <cassert>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "service/encode/csv_field.h"
#include "service/encode/group_header.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {
namespace {

constexpr std::string_view kHeaderLine =
    "dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,"
    "lastupdated,comment,followup,deleted\n";

constexpr std::string_view kTrue = "true";
constexpr std::string_view kFalse = "false";

constexpr size_t kTextFieldsPerRow = 8;
constexpr size_t kColumnsPerRow = 11;

// Everything in a line but the field contents, at its longest.
constexpr size_t kMaxRowOverhead = kTextFieldsPerRow * kMaxCsvFieldOverhead +
                                   (kColumnsPerRow - 1) /* commas */ + kMaxLongGmtDateLength +
                                   2 * kFalse.size() + 1 /* newline */;

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

inline size_t FieldBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

// "member" as a field of a column other than the first, or empty when the header lacks it.
std::string RenderedField(const std::optional<Text>& member) {
  const Text* text = GroupHeaderMember(member);
  if (text == nullptr) return std::string();
  std::string field(kMaxCsvFieldOverhead + kMaxCsvBytesPerInputByte * text->bytes.size(), '\0');
  const char* end = WriteCsvField(field.data(), *text, /*first_column=*/false);
  field.resize(static_cast<size_t>(end - field.data()));
  return field;
}

}  // namespace

void Csv243DataValueEncoder::UseHeader(const DataValueGroupHeader& header) {
  period_.used = GroupHeaderMember(header.period) != nullptr;
  period_.field = RenderedField(header.period);
  org_unit_.used = GroupHeaderMember(header.org_unit) != nullptr;
  org_unit_.field = RenderedField(header.org_unit);
  attribute_option_combo_.used = GroupHeaderMember(header.attribute_option_combo) != nullptr;
  attribute_option_combo_.field = RenderedField(header.attribute_option_combo);
}

void Csv243DataValueEncoder::Begin(const DataValueGroupHeader& header) {
  UseHeader(header);
  out_->Append(kHeaderLine);
}

void Csv243DataValueEncoder::Add(const DataValueRow& row) {
  const size_t field_bytes = FieldBytes(row.data_element) + FieldBytes(row.period) +
                             FieldBytes(row.org_unit) + FieldBytes(row.category_option_combo) +
                             FieldBytes(row.attribute_option_combo) + FieldBytes(row.value) +
                             FieldBytes(row.stored_by) + FieldBytes(row.comment);
  const size_t max_size = kMaxRowOverhead + kMaxCsvBytesPerInputByte * field_bytes +
                          period_.field.size() + org_unit_.field.size() +
                          attribute_option_combo_.field.size();
  char* const start = out_->Reserve(max_size);
  char* p = WriteCsvField(start, row.data_element, /*first_column=*/true);
  *p++ = ',';
  p = period_.used ? WriteLiteral(p, period_.field) : WriteCsvField(p, row.period, false);
  *p++ = ',';
  p = org_unit_.used ? WriteLiteral(p, org_unit_.field) : WriteCsvField(p, row.org_unit, false);
  *p++ = ',';
  p = WriteCsvField(p, row.category_option_combo, false);
  *p++ = ',';
  p = attribute_option_combo_.used ? WriteLiteral(p, attribute_option_combo_.field)
                                   : WriteCsvField(p, row.attribute_option_combo, false);
  *p++ = ',';
  p = WriteCsvField(p, row.value, false);
  *p++ = ',';
  p = WriteCsvField(p, row.stored_by, false);
  *p++ = ',';
  p += dates_.Format(row.last_updated, p);
  *p++ = ',';
  p = WriteCsvField(p, row.comment, false);
  *p++ = ',';
  if (!row.followup_null) {
    if (row.followup) {
      p = WriteLiteral(p, kTrue);
    } else {
      p = WriteLiteral(p, kFalse);
    }
  }
  *p++ = ',';
  if (row.deleted) {
    p = WriteLiteral(p, kTrue);
  } else {
    p = WriteLiteral(p, kFalse);
  }
  *p++ = '\n';
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

}  // namespace dvexport::encode
