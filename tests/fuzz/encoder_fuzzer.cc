// libFuzzer target: arbitrary bytes in every DataValueRow field through the
// JSON and CSV encoders. The JSON must parse with the strict parser and give
// back each field with ill-formed UTF-8 replaced by U+FFFD; the CSV must
// parse as strict RFC 4180 and give back each field after that replacement
// and Java's trim (javacsv), exactly as randomized_encoder_test checks.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "service/encode/chunk_buffer.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/json_data_value_encoder.h"
#include "tests/encode/rfc4180_parser.h"
#include "tests/encode/strict_json_parser.h"
#include "tests/encode/unicode_reference.h"

namespace {

using dvexport::encode::DataValueRow;
using dvexport::encode::Text;
namespace ts = dvexport::encode::test_support;

void Check(bool condition) {
  if (!condition) std::abort();
}

template <typename Encoder>
std::string Encode(const std::vector<DataValueRow>& rows, size_t chunk) {
  dvexport::encode::ChunkBuffer buffer(16);
  Encoder encoder(&buffer);
  std::string out;
  encoder.Begin(nullptr);
  for (const DataValueRow& row : rows) {
    encoder.Add(row);
    if (buffer.size() >= chunk) {
      out += buffer.view();
      buffer.Clear();
    }
  }
  encoder.End();
  out += buffer.view();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  size_t chunk = in.ConsumeIntegralInRange<size_t>(1, 4096);
  int n = in.ConsumeIntegralInRange(0, 8);
  std::vector<std::vector<std::optional<std::string>>> texts(n);
  std::vector<DataValueRow> rows(n);
  for (int r = 0; r < n; ++r) {
    for (int f = 0; f < 8; ++f) {
      if (in.ConsumeIntegralInRange(0, 9) == 0) {
        texts[r].push_back(std::nullopt);
      } else {
        texts[r].push_back(in.ConsumeRandomLengthString(64));
      }
    }
    Text* fields[] = {&rows[r].data_element,
                      &rows[r].period,
                      &rows[r].org_unit,
                      &rows[r].category_option_combo,
                      &rows[r].attribute_option_combo,
                      &rows[r].value,
                      &rows[r].stored_by,
                      &rows[r].comment};
    for (int f = 0; f < 8; ++f) {
      *fields[f] = texts[r][f] ? Text{*texts[r][f], false} : Text{"x", true};
    }
    rows[r].created.micros = in.ConsumeIntegral<int64_t>();
    rows[r].last_updated.micros = in.ConsumeIntegral<int64_t>();
    rows[r].followup = in.ConsumeBool();
    rows[r].deleted = in.ConsumeBool();
  }

  const std::string json = Encode<dvexport::encode::JsonDataValueEncoder>(rows, chunk);
  auto parsed = ts::ParseJsonStrictly(json);
  Check(parsed.ok());
  Check(parsed->members.size() == 1 && parsed->members[0].first == "dataValues");
  const auto& values = parsed->members[0].second.elements;
  Check(values.size() == rows.size());
  static constexpr int kTextMember[] = {0, 1, 2, 3, 4, 5, 6, -1, -1, 7};
  for (int r = 0; r < n; ++r) {
    Check(values[r].members.size() == (rows[r].deleted ? 12u : 11u));
    for (int m = 0; m < 10; ++m) {
      if (kTextMember[m] < 0) continue;
      const auto& input = texts[r][kTextMember[m]];
      const ts::JsonValue& v = values[r].members[m].second;
      if (!input) {
        Check(v.type == ts::JsonValue::Type::kNull);
      } else {
        Check(v.type == ts::JsonValue::Type::kString && v.text == ts::ReplaceIllFormedUtf8(*input));
      }
    }
  }

  const std::string csv = Encode<dvexport::encode::CsvDataValueEncoder>(rows, chunk);
  Check(ts::IsWellFormedUtf8(csv));
  auto records = ts::ParseCsvStrictly(csv);
  Check(records.ok());
  Check(records->size() == rows.size() + 1);
  static constexpr int kTextColumn[] = {0, 1, 2, 3, 4, 5, 6, -1, 7};
  for (int r = 0; r < n; ++r) {
    const ts::CsvRecord& record = (*records)[r + 1];
    Check(record.size() == 11u);
    for (int c = 0; c < 9; ++c) {
      if (kTextColumn[c] < 0) continue;
      const auto& input = texts[r][kTextColumn[c]];
      std::string expected(input ? ts::JavaTrim(ts::ReplaceIllFormedUtf8(*input)) : "");
      Check(record[c].value == expected);
    }
  }
  return 0;
}
