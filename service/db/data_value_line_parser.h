#ifndef DVEXPORT_SERVICE_DB_DATA_VALUE_LINE_PARSER_H_
#define DVEXPORT_SERVICE_DB_DATA_VALUE_LINE_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "service/db/export_scope.h"
#include "service/encode/data_value_row.h"

namespace dvexport::db {

// One field of a line of COPY ... TO STDOUT in text format.
struct CopyTextField {
  std::string_view text;  // unescaped
  bool is_null = false;   // \N
};

// Splits "line" (its final '\n' optional) into exactly "count" tab-separated
// fields, undoing COPY's backslash escapes (\\ \b \f \n \r \t \v; a field that
// is \N is NULL). Fields without a backslash point into "line"; the others
// into "*scratch", which is cleared and reused: no allocation once it has
// grown to the longest line. DataLoss for another number of fields or an
// unknown escape.
absl::Status SplitCopyTextLine(std::string_view line, int count, CopyTextField* fields,
                               std::string* scratch);

// A timestamp without time zone as COPY writes it with DateStyle ISO,
// "YYYY-MM-DD HH:MM:SS[.ffffff]" (years past 9999 have more digits, years
// before 1 end with " BC"), as microseconds since 1970-01-01T00:00:00.
// DataLoss for anything else, infinity and -infinity included.
absl::Status ParseCopyTimestamp(std::string_view text, int64_t* micros);

// Maps internal ids of one dimension to output identifiers: built once per export from the
// scope's map, then read by every reader thread of the export (it is never changed).
//
// The lookup is the parser's most frequent memory access (one per column whose id differs from
// the row before's, the org unit's mostly each row), so it does not go through the map: the table
// is open addressing of (id, identifier pointer) pairs, 16 bytes each, at most half full, hashed
// by one multiplication: one cache line per lookup instead of absl's control bytes and then
// 48-byte slots. Each identifier is held as the encoders' Text, its IsPlainText found once.
// Built from the map in O(size); it points into the map, which must outlive it.
class IdentifierTable {
 public:
  explicit IdentifierTable(const IdentifierMap& map);

  // Null if the id is unknown; points at a null Text if the object has no identifier in the
  // output scheme.
  [[gnu::always_inline]] const encode::Text* Find(int64_t id) const {
    for (size_t i = Slot(id);; i = (i + 1) & mask_) {
      const Entry& entry = entries_[i];
      if (entry.identifier == nullptr) return nullptr;
      if (entry.id == id) return entry.identifier;
    }
  }

 private:
  struct Entry {
    int64_t id;
    const encode::Text* identifier;  // null: an empty entry
  };

  size_t Slot(int64_t id) const {
    return static_cast<size_t>((static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  std::vector<encode::Text> identifiers_;  // one per entry of the map
  std::vector<Entry> entries_;             // a power of two of them, at least twice the map's size
  size_t mask_;
  unsigned shift_;  // 64 - log2(entries_.size())
};

// The tables of an export's five id columns, built once per export (ReadSession) and shared by
// its readers. "scope" must outlive them.
struct IdentifierTables {
  explicit IdentifierTables(const ExportScope& scope);

  IdentifierTable data_elements, periods, org_units, category_option_combos,
      attribute_option_combos;
};

// Turns the lines of the data value COPY of "scope" (StreamDataValues)
// into rows with the scope's output identifiers.
class DataValueLineParser {
 public:
  // "*tables" (and the scope they were built from) must outlive the parser.
  explicit DataValueLineParser(const IdentifierTables* tables);

  // Fills "*row" from "line"; its text points into "line" or the parser, valid
  // until the next call. DataLoss for a malformed line, Internal for an id
  // outside the scope.
  absl::Status Parse(std::string_view line, encode::DataValueRow* row) {
    if (ParseUsual(line, row)) [[likely]]
      return absl::OkStatus();
    ++general_lines_;
    return ParseAnyLine(line, row);
  }

  // Lines that the one-pass parser (for the usual line) handed to the general one: escapes,
  // NULL ids or timestamps, unusual timestamps, errors. Tests check the usual lines stay usual.
  int64_t general_lines() const { return general_lines_; }

 private:
  // The usual line, parsed in one pass without a field list; false for
  // anything unusual (then ParseAnyLine parses it, or says what is wrong).
  bool ParseUsual(std::string_view line, encode::DataValueRow* row);
  // ParseUsual's steps (inlined into it): one id column, and the two timestamps.
  const encode::Text* NextId(int i, const char** p, const char* end);
  bool NextTimestamps(const char** p, const char* end, encode::DataValueRow* row);
  // Parse through SplitCopyTextLine: any line, and precise errors.
  absl::Status ParseAnyLine(std::string_view line, encode::DataValueRow* row);
  // The tab that ends the field at "p", or "end"; sets "*escaped" if the field
  // holds a backslash.
  static const char* FieldEnd(const char* p, const char* end, bool* escaped);
  // Reads the text field at "*p" (not the last) into "*text" and moves "*p"
  // past its tab; false if there is none or it is malformed.
  bool NextText(const char** p, const char* end, encode::Text* text);
  // NextText for any field (long, escaped, near the end of the line). Not inlined.
  [[gnu::noinline]] bool NextTextSlowly(const char** p, const char* end, encode::Text* text);

  // The tables of the five id columns, in their order.
  const IdentifierTable* const tables_[5];
  // Per id column, the last id of 1 to 15 digits read (with SSE2): the 16 bytes at its start,
  // of which its digits and tab are the first id_lengths_ (id_masks_: a bit per byte), and its
  // identifier. To begin with, a mask of the first byte only and a zero byte match nothing: an
  // id column's text starts with a digit or '\'.
  alignas(16) char id_texts_[5][16] = {};
  unsigned id_masks_[5] = {1, 1, 1, 1, 1};
  int id_lengths_[5] = {};
  const encode::Text* id_identifiers_[5] = {};
  std::string scratch_;
  bool scratch_ready_ = false;  // scratch_ was cleared for the line being parsed
  // The fields of the line being parsed (a member: not initialized again for every line).
  CopyTextField fields_[kDataValueColumns];
  int64_t general_lines_ = 0;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_DATA_VALUE_LINE_PARSER_H_
