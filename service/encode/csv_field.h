#ifndef DVEXPORT_SERVICE_ENCODE_CSV_FIELD_H_
#define DVEXPORT_SERVICE_ENCODE_CSV_FIELD_H_

// One text field of DHIS2's CSV export (javacsv 2.0's CsvWriter), for the CSV encoders of both
// DHIS2 versions (csv_data_value_encoder.h, csv_243_data_value_encoder.h):
// - null is written as an empty field;
// - leading and trailing bytes 0x00..0x20 are removed (Java's String.trim());
// - the field is quoted when it contains '"', ',', '\n' or '\r', or when it is in the first
//   column and is empty or starts with '#'; inside quotes '"' is doubled;
// - nothing else is escaped; ill-formed UTF-8 is replaced with U+FFFD as described at
//   common::ScanUtf8Sequence.

#include <cstddef>

#include "common/plain_copy.h"
#include "service/encode/data_value_row.h"

namespace dvexport::encode {

// Worst-case output bytes per input byte of a field: an ill-formed byte becomes U+FFFD (3 bytes).
// '"' doubles to 2 bytes; well-formed UTF-8 and other ASCII are copied.
inline constexpr size_t kMaxCsvBytesPerInputByte = 3;

// The quotes around a field.
inline constexpr size_t kMaxCsvFieldOverhead = 2;

// The lanes of "v" that are not copied as they are: those that make a field quoted ('"', ',',
// '\n', '\r') and non-ASCII bytes, which are validated (signed lanes: < 0 selects them).
inline common::ByteVector CsvAttentionMask(common::ByteVector v) {
  return (v < 0) | (v == '"') | (v == ',') | (v == '\n') | (v == '\r');
}

// Writes the "n" bytes at "s" as a field, quoted from the start if "quoted". Not inlined: fields
// that need it are rare.
// REQUIRES: kMaxCsvFieldOverhead + kMaxCsvBytesPerInputByte * n bytes writable at "p".
[[gnu::noinline]] char* WriteCsvFieldSlowly(char* p, const unsigned char* s, size_t n, bool quoted);

// Writes one field as javacsv does (above) and returns the end of what it wrote.
// REQUIRES: kMaxCsvFieldOverhead + kMaxCsvBytesPerInputByte * text.bytes.size() bytes writable.
inline char* WriteCsvField(char* p, const Text& text, bool first_column) {
  if (text.plain) return common::CopyPlain(text.bytes, p);
  const auto* s = reinterpret_cast<const unsigned char*>(text.bytes.data());
  const unsigned char* end = text.is_null ? s : s + text.bytes.size();
  while (s < end && *s <= 0x20) ++s;
  while (end > s && end[-1] <= 0x20) --end;
  const size_t n = static_cast<size_t>(end - s);
  if (first_column && (n == 0 || s[0] == '#')) return WriteCsvFieldSlowly(p, s, n, true);
  if (common::CopyIfPlain(s, n, p, CsvAttentionMask)) return p + n;
  return WriteCsvFieldSlowly(p, s, n, false);
}

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_CSV_FIELD_H_
