// The COPY text line parser on lines shaped like a real export: small ids that hit the scope's
// maps, short numeric values, a 5-character storedBy, timestamps with fractional seconds, a
// comment on 1% of the values (some with an escaped newline).
//
// Reported: time per row (CPU time / items), bytes_per_second (COPY text parsed).

#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "service/db/data_value_line_parser.h"

namespace dvexport::db {
namespace {

constexpr size_t kRowCount = 16384;  // A power of two.

struct Lines {
  ExportScope scope;
  std::vector<std::string> lines;
  size_t bytes = 0;

  Lines() {
    std::mt19937 rng(1);
    for (int64_t id = 1; id <= 1200; ++id) {
      const std::string uid = "uid" + std::to_string(100000000 + id);
      scope.data_elements[id] = uid;
      scope.periods[id] = "2023" + std::to_string(10 + id % 3);
      scope.org_units[id] = uid;
      scope.category_option_combos[id] = uid;
      scope.attribute_option_combos[id] = uid;
    }
    for (size_t i = 0; i < kRowCount; ++i) {
      std::string line =
          std::to_string(1 + rng() % 300) + '\t' + std::to_string(1 + rng() % 24) + '\t' +
          std::to_string(1 + rng() % 1200) + '\t' + std::to_string(1 + rng() % 20) + "\t1\t" +
          std::to_string(rng() % 1000) + "\tadmin\t2023-0" + std::to_string(1 + rng() % 9) + "-1" +
          std::to_string(rng() % 10) + " 10:2" + std::to_string(rng() % 10) + ":3" +
          std::to_string(rng() % 10) + "." + std::to_string(100000 + rng() % 900000) +
          "\t2024-01-12 10:00:00." + std::to_string(100000 + rng() % 900000) + '\t';
      line += rng() % 100 == 0 ? "checked by the district\\nofficer" : "\\N";
      line += "\tf\tf\n";
      bytes += line.size();
      lines.push_back(std::move(line));
    }
  }
};

void BM_ParseDataValueLine(benchmark::State& state) {
  static const Lines* lines = new Lines();
  static const IdentifierTables* tables = new IdentifierTables(lines->scope);
  DataValueLineParser parser(tables);
  encode::DataValueRow row;
  for (const std::string& line : lines->lines) {
    if (absl::Status status = parser.Parse(line, &row); !status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
  }
  size_t i = 0;
  for (auto _ : state) {
    absl::Status status = parser.Parse(lines->lines[i++ & (kRowCount - 1)], &row);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(row);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * lines->bytes / kRowCount));
}
BENCHMARK(BM_ParseDataValueLine);

}  // namespace
}  // namespace dvexport::db

BENCHMARK_MAIN();
