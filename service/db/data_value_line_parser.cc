#include "service/db/data_value_line_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "common/civil_date.h"
#include "service/encode/timestamp.h"

namespace dvexport::db {
namespace {

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("malformed data value COPY line: ", what));
}

// Two digits at "p" into "*value".
[[gnu::always_inline]] inline bool TwoDigits(const char* p, int64_t* value) {
  const unsigned a = static_cast<unsigned char>(p[0]) - '0';
  const unsigned b = static_cast<unsigned char>(p[1]) - '0';
  if (a > 9 || b > 9) return false;
  *value = a * 10 + b;
  return true;
}

// Bit i of "*tabs" ("*backslashes") is set when p[i] is a tab (a backslash), for the first
// min(16, size) bytes at "p".
inline void SpecialBytes(const char* p, size_t size, uint32_t* tabs, uint32_t* backslashes) {
#if defined(__SSE2__)
  __m128i bytes;
  if (size >= 16) {
    bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  } else {
    alignas(16) char tail[16] = {};
    std::memcpy(tail, p, size);
    bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
  }
  *tabs = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\t'))));
  *backslashes =
      static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))));
#else
  *tabs = 0;
  *backslashes = 0;
  for (size_t i = 0; i < size && i < 16; ++i) {
    *tabs |= static_cast<uint32_t>(p[i] == '\t') << i;
    *backslashes |= static_cast<uint32_t>(p[i] == '\\') << i;
  }
#endif
}

// The value of the id text of "digits" (1 to 8) digits at "p", where 8 bytes are readable.
// Branch-free: the usual ids vary in length from row to row, and a loop's exit mispredicts on
// every change.
[[gnu::always_inline]] inline int64_t ShortIdValue(const char* p, int digits) {
  uint64_t bytes;
  std::memcpy(&bytes, p, 8);
  // The digits' values in the top "digits" bytes, zeros (leading zero digits) below them.
  uint64_t value = (bytes - 0x3030303030303030) << (8 * (8 - digits));
  value = (value * 10 + (value >> 8)) & 0x00FF00FF00FF00FF;
  value = (value * 100 + (value >> 16)) & 0x0000FFFF0000FFFF;
  value = (value * 10000 + (value >> 32)) & 0x00000000FFFFFFFF;
  return static_cast<int64_t>(value);
}

#if defined(__SSE2__)
// The number of digits (1 to 15) the 16 bytes "bytes" start with; 0 if they start with none or
// are all digits (then the caller reads them one by one).
[[gnu::always_inline]] inline int IdDigits(__m128i bytes) {
  const __m128i offset = _mm_sub_epi8(bytes, _mm_set1_epi8('0'));
  const unsigned digits = static_cast<unsigned>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(offset, _mm_set1_epi8(9)), offset)));
  const unsigned others = digits ^ 0xFFFF;
  return others == 0 ? 0 : __builtin_ctz(others);
}

// The value of the id text of "digits" (1 to 15) digits at "p", where 16 bytes are readable.
[[gnu::always_inline]] inline int64_t IdValue(const char* p, int digits) {
  if (digits <= 8) return ShortIdValue(p, digits);
  return ShortIdValue(p, digits - 8) * 100000000 + ShortIdValue(p + digits - 8, 8);
}
#endif

bool ParseId(const CopyTextField& field, int64_t* id) {
  // Ids are bigint primary keys: positive, at most 18 digits here (no overflow).
  if (field.is_null || field.text.empty() || field.text.size() > 18) return false;
  int64_t value = 0;
  for (char c : field.text) {
    const unsigned digit = static_cast<unsigned char>(c) - '0';
    if (digit > 9) return false;
    value = value * 10 + digit;
  }
  *id = value;
  return true;
}

// "t" or "f"; NULL is false when "nullable".
bool ParseBool(const CopyTextField& field, bool nullable, bool* value) {
  if (field.is_null) {
    *value = false;
    return nullable;
  }
  if (field.text.size() != 1 || (field.text[0] != 't' && field.text[0] != 'f')) return false;
  *value = field.text[0] == 't';
  return true;
}

encode::Text ToText(const CopyTextField& field) {
  return field.is_null ? encode::Text{{}, true} : encode::Text{field.text, false};
}

}  // namespace

namespace {

// Unescapes field "[field, field_end)" of "line" into "*out": a view into the line, NULL, or
// (with "escaped") the field with its escapes undone, appended to "*scratch" (made ready, that
// is cleared and big enough for the line, on first use: its views stay valid as it fills).
absl::Status FinishField(std::string_view line, const char* field, const char* field_end,
                         bool escaped, CopyTextField* out, std::string* scratch,
                         bool* scratch_ready) {
  const size_t size = static_cast<size_t>(field_end - field);
  if (!escaped) {
    *out = CopyTextField{std::string_view(field, size), false};
    return absl::OkStatus();
  }
  if (size == 2 && field[1] == 'N') {
    *out = CopyTextField{{}, true};
    return absl::OkStatus();
  }
  if (!*scratch_ready) {
    scratch->clear();
    if (scratch->capacity() < line.size()) scratch->reserve(line.size());
    *scratch_ready = true;
  }
  const size_t start = scratch->size();
  for (const char* q = field; q < field_end; ++q) {
    if (*q != '\\') {
      scratch->push_back(*q);
      continue;
    }
    if (++q == field_end) return Malformed("a field ends with a lone backslash");
    char c;
    switch (*q) {
      case '\\':
        c = '\\';
        break;
      case 'b':
        c = '\b';
        break;
      case 'f':
        c = '\f';
        break;
      case 'n':
        c = '\n';
        break;
      case 'r':
        c = '\r';
        break;
      case 't':
        c = '\t';
        break;
      case 'v':
        c = '\v';
        break;
      default:
        return Malformed("unknown backslash escape");
    }
    scratch->push_back(c);
  }
  *out = CopyTextField{std::string_view(scratch->data() + start, scratch->size() - start), false};
  return absl::OkStatus();
}

}  // namespace

absl::Status SplitCopyTextLine(std::string_view line, int count, CopyTextField* fields,
                               std::string* scratch) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const char* const begin = line.data();
  // One pass over the line, 16 bytes at a time, finds the tabs and whether a field holds a
  // backslash (an escape never holds a tab byte: a tab in the data is written as "\t").
  int found = 0;
  const char* field = begin;
  bool escaped = false;
  bool scratch_ready = false;
  for (size_t offset = 0; offset < line.size(); offset += 16) {
    uint32_t tabs;
    uint32_t backslashes;
    SpecialBytes(begin + offset, line.size() - offset, &tabs, &backslashes);
    for (uint32_t both = tabs | backslashes; both != 0; both &= both - 1) {
      const uint32_t bit = both & -both;
      if ((backslashes & bit) != 0) {
        escaped = true;
        continue;
      }
      if (found + 1 == count) return Malformed("more fields than expected");
      const char* const tab = begin + offset + static_cast<size_t>(__builtin_ctz(bit));
      if (!escaped) {
        fields[found] =
            CopyTextField{std::string_view(field, static_cast<size_t>(tab - field)), false};
      } else if (absl::Status status = FinishField(line, field, tab, escaped, &fields[found],
                                                   scratch, &scratch_ready);
                 !status.ok()) {
        return status;
      }
      ++found;
      field = tab + 1;
      escaped = false;
    }
  }
  if (found + 1 != count) return Malformed("fewer fields than expected");
  return FinishField(line, field, begin + line.size(), escaped, &fields[found], scratch,
                     &scratch_ready);
}

absl::Status ParseCopyTimestamp(std::string_view text, int64_t* micros) {
  const char* const t = text.data();
  size_t n = text.size();
  const bool bc = n > 3 && std::memcmp(t + n - 3, " BC", 3) == 0;
  if (bc) n -= 3;
  int64_t year = 0;
  size_t y = 0;
  for (; y < n && y < 7; ++y) {
    const unsigned digit = static_cast<unsigned char>(t[y]) - '0';
    if (digit > 9) break;
    year = year * 10 + digit;
  }
  // "-MM-DD HH:MM:SS" after the year, then maybe ".f" to ".ffffff".
  const char* const r = t + y;
  const size_t rest = n - y;
  int64_t month, day, hour, minute, second;
  if (y < 4 || y > 6 || year < 1 || rest < 15 || rest > 22 || r[0] != '-' || r[3] != '-' ||
      r[6] != ' ' || r[9] != ':' || r[12] != ':' || !TwoDigits(r + 1, &month) ||
      !TwoDigits(r + 4, &day) || !TwoDigits(r + 7, &hour) || !TwoDigits(r + 10, &minute) ||
      !TwoDigits(r + 13, &second) || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 59 || (rest > 15 && (r[15] != '.' || rest == 16))) {
    if (text == "infinity" || text == "-infinity") {
      return absl::DataLossError(absl::StrCat("a data value has the timestamp ",
                                              absl::string_view(text.data(), text.size()),
                                              ", which DHIS2's export cannot represent"));
    }
    return Malformed("a timestamp");
  }
  int64_t fraction = 0;
  size_t digits = 0;
  for (size_t i = 16; i < rest; ++i, ++digits) {
    const unsigned digit = static_cast<unsigned char>(r[i]) - '0';
    if (digit > 9) return Malformed("a timestamp's fraction");
    fraction = fraction * 10 + digit;
  }
  static constexpr int64_t kScale[] = {1000000, 100000, 10000, 1000, 100, 10, 1};
  fraction *= kScale[digits];
  if (bc) year = 1 - year;
  const int64_t seconds =
      common::DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  // PostgreSQL's range (4713 BC to 294276 AD) is wider than microseconds since 1970 in 64 bits.
  if (__builtin_mul_overflow(seconds, int64_t{1000000}, micros) ||
      __builtin_add_overflow(*micros, fraction, micros)) {
    return absl::DataLossError("a data value's timestamp is out of range");
  }
  return absl::OkStatus();
}

IdentifierTable::IdentifierTable(const IdentifierMap& map) {
  unsigned bits = 4;
  while ((size_t{1} << bits) < 2 * map.size()) ++bits;
  entries_.assign(size_t{1} << bits, Entry{0, nullptr});
  mask_ = entries_.size() - 1;
  shift_ = 64 - bits;
  identifiers_.reserve(map.size());  // never reallocated: the entries point into it
  for (const auto& [id, identifier] : map) {
    identifiers_.push_back(identifier
                               ? encode::Text{*identifier, false, encode::IsPlainText(*identifier)}
                               : encode::Text{{}, true});
    size_t i = Slot(id);
    while (entries_[i].identifier != nullptr) i = (i + 1) & mask_;
    entries_[i] = Entry{id, &identifiers_.back()};
  }
}

IdentifierTables::IdentifierTables(const ExportScope& scope)
    : data_elements(scope.data_elements),
      periods(scope.periods),
      org_units(scope.org_units),
      category_option_combos(scope.category_option_combos),
      attribute_option_combos(scope.attribute_option_combos) {}

DataValueLineParser::DataValueLineParser(const IdentifierTables* tables)
    : tables_{&tables->data_elements, &tables->periods, &tables->org_units,
              &tables->category_option_combos, &tables->attribute_option_combos} {}

// The tab after the usual timestamp at "p" ("YYYY-MM-DD HH:MM:SS[.ffffff]": 19 to 26 bytes), or
// null. What lies before it is checked by IsUsualTimestamp, which rejects anything else (a
// backslash included).
inline const char* UsualTimestampEnd(const char* p, const char* end) {
  if (end - p >= 27) {
    // The tab is one of the 8 bytes at p + 19: the first zero byte of their XOR with tabs.
    uint64_t word;
    std::memcpy(&word, p + 19, 8);
    const uint64_t x = word ^ 0x0909090909090909ull;
    const uint64_t zeros = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
    return zeros == 0 ? nullptr : p + 19 + __builtin_ctzll(zeros) / 8;
  }
  const char* const last = std::min(end, p + 27);
  for (const char* q = p + 19; q < last; ++q) {
    if (*q == '\t') return q;
  }
  return nullptr;
}

const char* DataValueLineParser::FieldEnd(const char* p, const char* end, bool* escaped) {
  for (const char* chunk = p; chunk < end; chunk += 16) {
    uint32_t tabs;
    uint32_t backslashes;
    SpecialBytes(chunk, static_cast<size_t>(end - chunk), &tabs, &backslashes);
    if (tabs != 0) {
      const int first = __builtin_ctz(tabs);
      if ((backslashes & ((1u << first) - 1)) != 0) *escaped = true;
      return chunk + first;
    }
    if (backslashes != 0) *escaped = true;
  }
  return end;
}

bool DataValueLineParser::NextTextSlowly(const char** p, const char* end, encode::Text* text) {
  bool escaped = false;
  const char* const tab = FieldEnd(*p, end, &escaped);
  if (tab == end) return false;
  CopyTextField field;
  if (!escaped) {
    field = CopyTextField{std::string_view(*p, static_cast<size_t>(tab - *p)), false};
  } else if (!FinishField(std::string_view(*p, static_cast<size_t>(end - *p)), *p, tab, true,
                          &field, &scratch_, &scratch_ready_)
                  .ok()) {
    return false;
  }
  *text = ToText(field);
  *p = tab + 1;
  return true;
}

// The text field at "*p": NULL (\N, common for comment and storedBy) or, for most, a field
// without backslashes that ends within 16 bytes: one vector test, no call.
[[gnu::always_inline]] inline bool DataValueLineParser::NextText(const char** p, const char* end,
                                                                 encode::Text* text) {
  const char* const q = *p;
  if (end - q >= 3 && q[0] == '\\' && q[1] == 'N' && q[2] == '\t') {
    *text = encode::Text{{}, true};
    *p = q + 3;
    return true;
  }
  if (end - q >= 16) {
    uint32_t tabs;
    uint32_t backslashes;
    SpecialBytes(q, 16, &tabs, &backslashes);
    const uint32_t before_tab = (tabs & -tabs) - 1;  // all ones without a tab
    if (tabs != 0 && (backslashes & before_tab) == 0) {
      const size_t size = static_cast<size_t>(__builtin_ctz(tabs));
      *text = encode::Text{std::string_view(q, size), false};
      *p = q + size + 1;
      return true;
    }
  }
  return NextTextSlowly(p, end, text);
}

// Id column "i" at "*p": its identifier, or null for anything unusual.
[[gnu::always_inline]] inline const encode::Text* DataValueLineParser::NextId(int i, const char** p,
                                                                              const char* end) {
  const char* q = *p;
#if defined(__SSE2__)
  if (end - q >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    // Consecutive rows often share their data element, period and option combos: the same
    // digits and tab as this column's last id are the same identifier, with one compare.
    const unsigned same = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_cmpeq_epi8(bytes, _mm_load_si128(reinterpret_cast<const __m128i*>(id_texts_[i])))));
    if ((same & id_masks_[i]) == id_masks_[i]) {
      *p = q + id_lengths_[i];
      return id_identifiers_[i];
    }
    const int digits = IdDigits(bytes);
    if (digits != 0) {
      if (q[digits] != '\t') return nullptr;  // at most 15 digits: q + digits < end
      const encode::Text* found = tables_[i]->Find(IdValue(q, digits));
      if (found == nullptr) return nullptr;
      _mm_store_si128(reinterpret_cast<__m128i*>(id_texts_[i]), bytes);
      id_masks_[i] = (2u << digits) - 1;  // the digits and their tab
      id_lengths_[i] = digits + 1;
      id_identifiers_[i] = found;
      *p = q + digits + 1;
      return found;
    }
  }
#endif
  const char* const start = q;
  int64_t id = 0;
  for (; q < end; ++q) {
    const unsigned digit = static_cast<unsigned char>(*q) - '0';
    if (digit > 9) break;
    id = id * 10 + digit;
  }
  if (q == start || q - start > 18 || q == end || *q != '\t') return nullptr;
  const encode::Text* const found = tables_[i]->Find(id);
  *p = q + 1;
  return found;
}

// created, then lastupdated, at "*p", passed on as text: most values were never updated, and
// their two are the same text. False for anything unusual.
[[gnu::always_inline]] inline bool DataValueLineParser::NextTimestamps(const char** p,
                                                                       const char* end,
                                                                       encode::DataValueRow* row) {
  const char* tab = UsualTimestampEnd(*p, end);
  if (tab == nullptr) return false;
  const std::string_view created(*p, static_cast<size_t>(tab - *p));
  if (!encode::IsUsualTimestamp(created)) return false;
  const char* q = tab + 1;
  row->created.usual_text = created;
  // The same text for both tells the encoders they are equal without comparing them.
  if (q < end && *q == '\t') {
    // Empty: lastupdated equals created (BuildDataValueSelectSql).
    row->last_updated.usual_text = created;
    tab = q;
  } else {
    if ((tab = UsualTimestampEnd(q, end)) == nullptr) return false;
    const std::string_view last_updated(q, static_cast<size_t>(tab - q));
    const bool same = encode::SameTimestampText(last_updated, created);
    if (!same && !encode::IsUsualTimestamp(last_updated)) return false;
    row->last_updated.usual_text = same ? created : last_updated;
  }
  *p = tab + 1;
  return true;
}

bool DataValueLineParser::ParseUsual(std::string_view line, encode::DataValueRow* row) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const char* p = line.data();
  const char* const end = p + line.size();
  scratch_ready_ = false;
  const encode::Text* ids[5];
#pragma GCC unroll 5
  for (int i = 0; i < 5; ++i) {
    if ((ids[i] = NextId(i, &p, end)) == nullptr) return false;
  }
  encode::Text* const texts[2] = {&row->value, &row->stored_by};
  for (encode::Text* text : texts) {
    if (!NextText(&p, end, text)) return false;
  }
  if (!NextTimestamps(&p, end, row)) return false;
  if (!NextText(&p, end, &row->comment)) return false;
  // "f\tf", "t\tf", "\N\tf" and the like.
  if (end - p == 3 && p[1] == '\t' && (p[0] == 't' || p[0] == 'f')) {
    row->followup = p[0] == 't';
    row->followup_null = false;
  } else if (end - p == 4 && p[0] == '\\' && p[1] == 'N' && p[2] == '\t') {
    row->followup = false;
    row->followup_null = true;
  } else {
    return false;
  }
  if (end[-1] != 't' && end[-1] != 'f') return false;
  row->deleted = end[-1] == 't';
  row->data_element = *ids[0];
  row->period = *ids[1];
  row->org_unit = *ids[2];
  row->category_option_combo = *ids[3];
  row->attribute_option_combo = *ids[4];
  return true;
}

absl::Status DataValueLineParser::ParseAnyLine(std::string_view line, encode::DataValueRow* row) {
  const CopyTextField* const f = fields_;
  absl::Status status = SplitCopyTextLine(line, kDataValueColumns, fields_, &scratch_);
  if (!status.ok()) return status;
  const encode::Text* ids[5];
  for (int i = 0; i < 5; ++i) {
    int64_t id;
    if (!ParseId(f[i], &id)) return Malformed(absl::StrCat("column ", i, " is not an id"));
    if ((ids[i] = tables_[i]->Find(id)) == nullptr) {
      return absl::InternalError(
          absl::StrCat("data value row refers to an id outside the export scope in column ", i));
    }
  }
  if (f[7].is_null || f[8].is_null) return Malformed("a NULL timestamp");
  encode::Timestamp* const timestamps[2] = {&row->created, &row->last_updated};
  for (int i = 0; i < 2; ++i) {
    const std::string_view text = f[7 + i].text;
    if (i == 1 && text.empty()) {
      // lastupdated equals created (BuildDataValueSelectSql).
      row->last_updated = row->created;
      break;
    }
    if (encode::IsUsualTimestamp(text)) {
      *timestamps[i] = encode::Timestamp{text, 0};
    } else {
      status = ParseCopyTimestamp(text, &timestamps[i]->micros);
      if (!status.ok()) return status;
      timestamps[i]->usual_text = {};
    }
  }
  row->followup_null = f[10].is_null;
  if (!ParseBool(f[10], /*nullable=*/true, &row->followup) ||
      !ParseBool(f[11], /*nullable=*/false, &row->deleted)) {
    return Malformed("a NULL or malformed flag");
  }
  row->data_element = *ids[0];
  row->period = *ids[1];
  row->org_unit = *ids[2];
  row->category_option_combo = *ids[3];
  row->attribute_option_combo = *ids[4];
  row->value = ToText(f[5]);
  row->stored_by = ToText(f[6]);
  row->comment = ToText(f[9]);
  return absl::OkStatus();
}

}  // namespace dvexport::db
