#include "service/db/data_value_line_parser.h"

#include <charconv>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("malformed data value COPY line: ", what));
}

// Days from 1970-01-01 to year-month-day of the proleptic Gregorian calendar
// (astronomical years: 1 BC is 0). Howard Hinnant's days_from_civil.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Two digits at "p" into "*value".
bool TwoDigits(const char* p, int64_t* value) {
  const unsigned a = static_cast<unsigned char>(p[0]) - '0';
  const unsigned b = static_cast<unsigned char>(p[1]) - '0';
  if (a > 9 || b > 9) return false;
  *value = a * 10 + b;
  return true;
}

bool ParseId(const CopyTextField& field, int64_t* id) {
  if (field.is_null) return false;
  const char* end = field.text.data() + field.text.size();
  auto [ptr, error] = std::from_chars(field.text.data(), end, *id);
  return error == std::errc() && ptr == end;
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

encode::Text IdText(const std::optional<std::string>* id) {
  return *id ? encode::Text{**id, false} : encode::Text{{}, true};
}

}  // namespace

absl::Status SplitCopyTextLine(std::string_view line, int count, CopyTextField* fields,
                               std::string* scratch) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  // Unescaped fields are never longer than the line: views into "*scratch"
  // stay valid as it fills.
  scratch->clear();
  if (scratch->capacity() < line.size()) scratch->reserve(line.size());
  const char* p = line.data();
  const char* const end = p + line.size();
  for (int i = 0; i < count; ++i) {
    const char* tab = static_cast<const char*>(std::memchr(p, '\t', static_cast<size_t>(end - p)));
    const bool last = i + 1 == count;
    if (last != (tab == nullptr)) {
      return Malformed(last ? "more fields than expected" : "fewer fields than expected");
    }
    const char* field_end = last ? end : tab;
    const size_t size = static_cast<size_t>(field_end - p);
    const char* backslash = static_cast<const char*>(std::memchr(p, '\\', size));
    if (backslash == nullptr) {
      fields[i] = CopyTextField{std::string_view(p, size), false};
    } else if (size == 2 && p[1] == 'N') {
      fields[i] = CopyTextField{{}, true};
    } else {
      const size_t start = scratch->size();
      scratch->append(p, static_cast<size_t>(backslash - p));
      for (const char* q = backslash; q < field_end; ++q) {
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
      fields[i] =
          CopyTextField{std::string_view(scratch->data() + start, scratch->size() - start), false};
    }
    p = field_end + 1;
  }
  return absl::OkStatus();
}

absl::Status ParseCopyTimestamp(std::string_view text, int64_t* micros) {
  if (text == "infinity" || text == "-infinity") {
    return absl::DataLossError(absl::StrCat("a data value has the timestamp ",
                                            absl::string_view(text.data(), text.size()),
                                            ", which DHIS2's export cannot represent"));
  }
  bool bc = false;
  if (text.size() > 3 && text.substr(text.size() - 3) == " BC") {
    bc = true;
    text.remove_suffix(3);
  }
  const size_t dash = text.find('-');
  int64_t year = 0;
  if (dash < 4 || dash > 6) return Malformed("a timestamp's year");
  auto [year_end, error] = std::from_chars(text.data(), text.data() + dash, year);
  if (error != std::errc() || year_end != text.data() + dash || year < 1) {
    return Malformed("a timestamp's year");
  }
  // "-MM-DD HH:MM:SS" after the year.
  std::string_view rest = text.substr(dash);
  int64_t month, day, hour, minute, second;
  if (rest.size() < 15 || rest[0] != '-' || rest[3] != '-' || rest[6] != ' ' || rest[9] != ':' ||
      rest[12] != ':' || !TwoDigits(&rest[1], &month) || !TwoDigits(&rest[4], &day) ||
      !TwoDigits(&rest[7], &hour) || !TwoDigits(&rest[10], &minute) ||
      !TwoDigits(&rest[13], &second) || month < 1 || month > 12 || day < 1 || day > 31 ||
      hour > 23 || minute > 59 || second > 59) {
    return Malformed("a timestamp");
  }
  int64_t fraction = 0;
  rest.remove_prefix(15);
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 7) {
      return Malformed("a timestamp's fraction");
    }
    int digits = 0;
    for (char c : rest.substr(1)) {
      const unsigned d = static_cast<unsigned char>(c) - '0';
      if (d > 9) return Malformed("a timestamp's fraction");
      fraction = fraction * 10 + d;
      ++digits;
    }
    for (; digits < 6; ++digits) fraction *= 10;
  }
  if (bc) year = 1 - year;
  const int64_t seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  // PostgreSQL's range (4713 BC to 294276 AD) fits, but not by much.
  if (__builtin_mul_overflow(seconds, int64_t{1000000}, micros) ||
      __builtin_add_overflow(*micros, fraction, micros)) {
    return absl::DataLossError("a data value's timestamp is out of range");
  }
  return absl::OkStatus();
}

DataValueLineParser::DataValueLineParser(const ExportScope* scope)
    : data_elements_(&scope->data_elements),
      periods_(&scope->periods),
      org_units_(&scope->org_units),
      category_option_combos_(&scope->category_option_combos),
      attribute_option_combos_(&scope->attribute_option_combos) {}

absl::Status DataValueLineParser::Parse(std::string_view line, encode::DataValueRow* row) {
  CopyTextField f[kDataValueColumns];
  absl::Status status = SplitCopyTextLine(line, kDataValueColumns, f, &scratch_);
  if (!status.ok()) return status;
  IdentifierLookup* lookups[5] = {&data_elements_, &periods_, &org_units_, &category_option_combos_,
                                  &attribute_option_combos_};
  const std::optional<std::string>* ids[5];
  for (int i = 0; i < 5; ++i) {
    int64_t id;
    if (!ParseId(f[i], &id)) return Malformed(absl::StrCat("column ", i, " is not an id"));
    if ((ids[i] = lookups[i]->Find(id)) == nullptr) {
      return absl::InternalError(
          absl::StrCat("data value row refers to an id outside the export scope in column ", i));
    }
  }
  if (f[7].is_null || f[8].is_null) return Malformed("a NULL timestamp");
  status = ParseCopyTimestamp(f[7].text, &row->created_micros);
  if (status.ok()) status = ParseCopyTimestamp(f[8].text, &row->last_updated_micros);
  if (!status.ok()) return status;
  if (!ParseBool(f[10], /*nullable=*/true, &row->followup) ||
      !ParseBool(f[11], /*nullable=*/false, &row->deleted)) {
    return Malformed("a NULL or malformed flag");
  }
  row->data_element = IdText(ids[0]);
  row->period = IdText(ids[1]);
  row->org_unit = IdText(ids[2]);
  row->category_option_combo = IdText(ids[3]);
  row->attribute_option_combo = IdText(ids[4]);
  row->value = ToText(f[5]);
  row->stored_by = ToText(f[6]);
  row->comment = ToText(f[9]);
  return absl::OkStatus();
}

}  // namespace dvexport::db
