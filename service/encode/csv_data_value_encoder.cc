#include "service/encode/csv_data_value_encoder.h"

#include <cassert>
#include <cstring>
#include <string_view>

#include "service/encode/csv_field.h"
#include "service/encode/long_gmt_date.h"

namespace dvexport::encode {

namespace {

constexpr std::string_view kHeaderLine =
    "dataelement,period,orgunit,categoryoptioncombo,attributeoptioncombo,value,storedby,"
    "lastupdated,comment,followup,deleted\n";

constexpr std::string_view kTrue = "true";
constexpr std::string_view kFalse = "false";
constexpr std::string_view kNull = "null";

constexpr size_t kTextFieldsPerRow = 8;
constexpr size_t kColumnsPerRow = 11;

// Everything in a line but the field contents, at its longest.
constexpr size_t kMaxRowOverhead = kTextFieldsPerRow * kMaxCsvFieldOverhead +
                                   (kColumnsPerRow - 1) /* commas */ + kMaxLongGmtDateLength +
                                   kFalse.size() + kNull.size() + 1 /* newline */;

inline char* WriteLiteral(char* p, std::string_view literal) {
  std::memcpy(p, literal.data(), literal.size());
  return p + literal.size();
}

inline size_t FieldBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

}  // namespace

CsvDataValueEncoder::CsvDataValueEncoder(ChunkBuffer* out) : out_(out) {}

void CsvDataValueEncoder::Begin(const DataValueSetHeader* /*header*/) { out_->Append(kHeaderLine); }

void CsvDataValueEncoder::Add(const DataValueRow& row) {
  const size_t field_bytes = FieldBytes(row.data_element) + FieldBytes(row.period) +
                             FieldBytes(row.org_unit) + FieldBytes(row.category_option_combo) +
                             FieldBytes(row.attribute_option_combo) + FieldBytes(row.value) +
                             FieldBytes(row.stored_by) + FieldBytes(row.comment);
  const size_t max_size = kMaxRowOverhead + kMaxCsvBytesPerInputByte * field_bytes;
  char* const start = out_->Reserve(max_size);
  char* p = WriteCsvField(start, row.data_element, /*first_column=*/true);
  *p++ = ',';
  p = WriteCsvField(p, row.period, false);
  *p++ = ',';
  p = WriteCsvField(p, row.org_unit, false);
  *p++ = ',';
  p = WriteCsvField(p, row.category_option_combo, false);
  *p++ = ',';
  p = WriteCsvField(p, row.attribute_option_combo, false);
  *p++ = ',';
  p = WriteCsvField(p, row.value, false);
  *p++ = ',';
  p = WriteCsvField(p, row.stored_by, false);
  *p++ = ',';
  p += dates_.Format(row.last_updated, p);
  *p++ = ',';
  p = WriteCsvField(p, row.comment, false);
  *p++ = ',';
  if (row.followup) {
    p = WriteLiteral(p, kTrue);
  } else {
    p = WriteLiteral(p, kFalse);
  }
  *p++ = ',';
  if (row.deleted) {
    p = WriteLiteral(p, kTrue);
  } else {
    p = WriteLiteral(p, kNull);
  }
  *p++ = '\n';
  assert(static_cast<size_t>(p - start) <= max_size);
  out_->Commit(static_cast<size_t>(p - start));
}

void CsvDataValueEncoder::End() {}

}  // namespace dvexport::encode
