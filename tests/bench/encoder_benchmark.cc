// Encoder throughput on rows shaped like a real export: 11-character UIDs, monthly periods,
// short numeric values, a 5-character storedBy, a comment on 1% of the values.
//
// Reported: time_per_value (CPU time per data value), bytes_per_second (output bytes for the
// encoders and the protobuf batches, input bytes for gzip), items_per_second (values).

#include <google/protobuf/io/coded_stream.h>

#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "common/json_string.h"
#include "dvexport/v1/export.pb.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/csv_243_data_value_encoder.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/json_243_data_value_encoder.h"
#include "service/encode/json_243_string.h"
#include "service/encode/json_data_value_encoder.h"
#include "service/encode/long_gmt_date.h"
#include "service/encode/parallel_gzip_compressor.h"
#include "service/encode/pretty_json_data_value_encoder.h"
#include "service/encode/protobuf_data_value_encoder.h"
#include "service/encode/xml_243_data_value_encoder.h"
#include "service/encode/xml_attribute.h"
#include "service/encode/xml_data_value_encoder.h"
#include "service/encode/zip_compressor.h"
#include "service/encode/zstd_compressor.h"
#include "tests/support/gzip_compressor.h"
#include "tests/support/postgres_timestamp.h"
#include "tests/support/to_data_value.h"

namespace dvexport::encode {
namespace {

constexpr size_t kRowCount = 16384;  // A power of two.
constexpr size_t kChunkSize = 256 * 1024;

class RealisticRows {
 public:
  RealisticRows() {
    std::mt19937 rng(1);
    auto uid = [&] {
      static constexpr char kAlphabet[] =
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
      std::string s(1, kAlphabet[rng() % 52]);
      for (int i = 0; i < 10; ++i) s += kAlphabet[rng() % 62];
      return s;
    };
    std::vector<std::string> data_elements, org_units, category_option_combos;
    for (int i = 0; i < 300; ++i) data_elements.push_back(uid());
    for (int i = 0; i < 1200; ++i) org_units.push_back(uid());
    for (int i = 0; i < 20; ++i) category_option_combos.push_back(uid());
    const std::string attribute_option_combo = uid();
    const char* const stored_by[] = {"admin", "dataw", "jdoe1", "kamar", "sesay"};

    strings_.reserve(kRowCount * 10);
    auto keep = [&](std::string s) -> std::string_view {
      return strings_.emplace_back(std::move(s));
    };
    for (size_t i = 0; i < kRowCount; ++i) {
      DataValueRow row;
      row.data_element = Text{keep(data_elements[rng() % data_elements.size()])};
      row.period = Text{keep(std::to_string(202301 + rng() % 12 + (rng() % 2) * 100))};
      row.org_unit = Text{keep(org_units[rng() % org_units.size()])};
      row.category_option_combo =
          Text{keep(category_option_combos[rng() % category_option_combos.size()])};
      row.attribute_option_combo = Text{keep(attribute_option_combo)};
      row.value = Text{keep(std::to_string(rng() % 2000))};
      row.stored_by = Text{keep(stored_by[rng() % 5])};
      row.created.micros =
          1672531200000000 + static_cast<int64_t>(rng() % 63072000) * 1000000 + rng() % 1000000;
      row.last_updated.micros = row.created.micros + (rng() % 4 == 0 ? rng() % 86400000000ULL : 0);
      // As the line parser hands them on: PostgreSQL's text.
      row.created.usual_text =
          keep(::dvexport::test_support::PostgresTimestampText(row.created.micros));
      row.last_updated.usual_text =
          keep(::dvexport::test_support::PostgresTimestampText(row.last_updated.micros));
      if (rng() % 100 == 0) {
        row.comment = Text{keep("Checked against the register, " + std::to_string(rng() % 100))};
      } else {
        row.comment = Text{{}, true};
      }
      rows_.push_back(row);
    }
  }

  const std::vector<DataValueRow>& rows() const { return rows_; }

 private:
  std::vector<std::string> strings_;  // Reserved up front: views into it stay valid.
  std::vector<DataValueRow> rows_;
};

const RealisticRows& Rows() {
  static const auto* rows = new RealisticRows();
  return *rows;
}

// Starts a document without header: 2.42's encoders take a header pointer, 2.43's a
// DataValueGroupHeader.
template <typename Encoder>
void BeginWithoutHeader(Encoder& encoder) {
  if constexpr (requires { encoder.Begin(DataValueGroupHeader{}); }) {
    encoder.Begin(DataValueGroupHeader{});
  } else {
    encoder.Begin(nullptr);
  }
}

template <typename Encoder>
void BM_Encode(benchmark::State& state) {
  const std::vector<DataValueRow>& rows = Rows().rows();
  ChunkBuffer buffer(kChunkSize + 4096);
  Encoder encoder(&buffer);
  size_t bytes = 0;
  size_t values = 0;
  BeginWithoutHeader(encoder);
  for (auto _ : state) {
    for (const DataValueRow& row : rows) {
      encoder.Add(row);
      if (buffer.size() >= kChunkSize) {  // Hand the chunk out, as the server does.
        bytes += buffer.size();
        benchmark::DoNotOptimize(buffer.data());
        buffer.Clear();
      }
    }
    values += rows.size();
  }
  encoder.End();
  bytes += buffer.size();
  state.SetItemsProcessed(static_cast<int64_t>(values));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["time_per_value"] = benchmark::Counter(
      static_cast<double>(values), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_FormatLongGmtDate(benchmark::State& state) {
  const std::vector<DataValueRow>& rows = Rows().rows();
  char out[kMaxLongGmtDateLength];
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        FormatLongGmtDate(rows[i++ & (kRowCount - 1)].last_updated.micros, out));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FormatLongGmtDate);

void BM_FormatUsualTimestamp(benchmark::State& state) {
  const std::vector<DataValueRow>& rows = Rows().rows();
  char out[kMaxLongGmtDateLength];
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        FormatUsualTimestamp(rows[i++ & (kRowCount - 1)].last_updated.usual_text, out));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FormatUsualTimestamp);

// The escapers' slow path (WriteJsonEscapedSlowly, WriteXmlAttributeEscapedSlowly), which the
// realistic rows never reach: comments with quotes, line breaks and accented, Cyrillic and
// emoji text, 1,000 of them, about 60 bytes each. bytes_per_second counts input bytes.
std::vector<std::string> TextsThatNeedEscaping() {
  static constexpr const char* kPieces[] = {
      "Checked \"twice\" against the register",
      "r\u00e9vis\u00e9 par l'\u00e9quipe",
      "\u041f\u0440\u043e\u0432\u0435\u0440\u0435\u043d\u043e",
      "line one\nline two\r\n",
      "A & B < C",
      "\xF0\x9F\x98\x80 ok",
      "tab\there"};
  std::mt19937 rng(2);
  std::vector<std::string> texts;
  for (int i = 0; i < 1000; ++i) {
    std::string text;
    while (text.size() < 50) {
      text += kPieces[rng() % std::size(kPieces)];
      text += ' ';
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

template <char* (*kWriteEscaped)(char*, std::string_view)>
void BM_Escape(benchmark::State& state) {
  const std::vector<std::string> texts = TextsThatNeedEscaping();
  std::vector<char> out(64 * 1024);
  size_t bytes = 0;
  for (auto _ : state) {
    for (const std::string& text : texts) {
      benchmark::DoNotOptimize(kWriteEscaped(out.data(), text));
      bytes += text.size();
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_Escape<common::WriteJsonEscaped>)->Name("BM_EscapeJsonText");
BENCHMARK(BM_Escape<WriteXmlAttributeEscaped>)->Name("BM_EscapeXmlAttributeText");
BENCHMARK(BM_Escape<WriteJson243Escaped>)->Name("BM_EscapeJson243Text");

BENCHMARK(BM_Encode<JsonDataValueEncoder>)->Name("BM_EncodeJson");
BENCHMARK(BM_Encode<CsvDataValueEncoder>)->Name("BM_EncodeCsv");
BENCHMARK(BM_Encode<PrettyJsonDataValueEncoder>)->Name("BM_EncodeJsonPretty");
BENCHMARK(BM_Encode<XmlDataValueEncoder>)->Name("BM_EncodeXml");
BENCHMARK(BM_Encode<Json243DataValueEncoder>)->Name("BM_EncodeJson243");
BENCHMARK(BM_Encode<Csv243DataValueEncoder>)->Name("BM_EncodeCsv243");
BENCHMARK(BM_Encode<Xml243DataValueEncoder>)->Name("BM_EncodeXml243");

// The typed stream's work per value as StreamDataValueBatches does it: ProtobufDataValueEncoder
// writes each value in wire format into the batch's buffer, handed out at kChunkSize with the
// batch's end fields. bytes_per_second counts the serialized batches.
void BM_EncodeProtobufBatch(benchmark::State& state) {
  const std::vector<DataValueRow>& rows = Rows().rows();
  ChunkBuffer buffer(kChunkSize + kChunkSize / 4);
  ProtobufDataValueEncoder encoder(&buffer);
  size_t bytes = 0;
  size_t values = 0;
  auto hand_out = [&](bool last) {
    char* p = buffer.Reserve(ProtobufDataValueEncoder::kMaxBatchEndSize);
    buffer.Commit(static_cast<size_t>(
        ProtobufDataValueEncoder::WriteBatchEnd(p, last, static_cast<int64_t>(values)) - p));
    bytes += buffer.size();
    benchmark::DoNotOptimize(buffer.data());
    buffer.Clear();
  };
  for (auto _ : state) {
    for (const DataValueRow& row : rows) {
      encoder.Add(row);
      ++values;
      if (buffer.size() >= kChunkSize) hand_out(false);
    }
  }
  hand_out(true);
  state.SetItemsProcessed(static_cast<int64_t>(values));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["time_per_value"] = benchmark::Counter(
      static_cast<double>(values), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeProtobufBatch);

// The typed stream's work per value as it was before ProtobufDataValueEncoder (kept to show what
// that encoder saves): ToDataValue (a copy with UTF-8 repair into a DataValue message), its
// framed size, and a DataValueBatch of at most kChunkSize serialized bytes, serialized into a
// reused string (gRPC's Write serialized it likewise). bytes_per_second counts the serialized
// batches.
void BM_ProtobufMessagesBatch(benchmark::State& state) {
  const std::vector<DataValueRow>& rows = Rows().rows();
  constexpr size_t kBatchOverhead = 16;  // last and values_so_far, as in batch_stream_export.cc.
  dvexport::v1::DataValueBatch batch;
  dvexport::v1::DataValue next;
  std::string wire;
  size_t batch_size = kBatchOverhead;
  size_t bytes = 0;
  size_t values = 0;
  auto serialize = [&](bool last) {
    batch.set_last(last);
    batch.set_values_so_far(static_cast<int64_t>(values));
    batch.SerializeToString(&wire);
    bytes += wire.size();
    benchmark::DoNotOptimize(wire.data());
    batch.mutable_data_values()->Clear();
    batch_size = kBatchOverhead;
  };
  for (auto _ : state) {
    for (const DataValueRow& row : rows) {
      next.Clear();
      ToDataValue(row, &next);
      const size_t value_size = next.ByteSizeLong();
      const size_t framed_size =
          1 + google::protobuf::io::CodedOutputStream::VarintSize64(value_size) + value_size;
      if (batch.data_values_size() > 0 && batch_size + framed_size > kChunkSize) serialize(false);
      batch.add_data_values()->Swap(&next);
      batch_size += framed_size;
      ++values;
    }
  }
  serialize(true);
  state.SetItemsProcessed(static_cast<int64_t>(values));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["time_per_value"] = benchmark::Counter(
      static_cast<double>(values), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ProtobufMessagesBatch);

// gzip level 1 over 256 KiB chunks of the JSON output, for comparison with the encoder.
void BM_GzipJsonLevel1(benchmark::State& state) {
  ChunkBuffer buffer(4 * 1024 * 1024);
  JsonDataValueEncoder encoder(&buffer);
  encoder.Begin(nullptr);
  for (const DataValueRow& row : Rows().rows()) encoder.Add(row);
  encoder.End();
  const std::string_view json = buffer.view();
  auto compressor = GzipCompressor::Create(1).value();
  std::string out;
  size_t bytes = 0;
  for (auto _ : state) {
    for (size_t offset = 0; offset < json.size(); offset += kChunkSize) {
      compressor->Compress(json.substr(offset, kChunkSize), &out);
      out.clear();
    }
    bytes += json.size();
  }
  compressor->Finish(&out);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["time_per_value"] =
      benchmark::Counter(static_cast<double>(state.iterations() * Rows().rows().size()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_GzipJsonLevel1);

// The pigz-style compressor on the same JSON, level state.range(0), 2 worker threads; real time,
// since the work is on the workers.
void BM_ParallelGzipJson(benchmark::State& state) {
  ChunkBuffer buffer(4 * 1024 * 1024);
  JsonDataValueEncoder encoder(&buffer);
  encoder.Begin(nullptr);
  for (const DataValueRow& row : Rows().rows()) encoder.Add(row);
  encoder.End();
  const std::string_view json = buffer.view();
  ParallelGzipOptions options;
  options.level = static_cast<int>(state.range(0));
  auto compressor = ParallelGzipCompressor::Create(options).value();
  std::string out;
  size_t bytes = 0;
  for (auto _ : state) {
    for (size_t offset = 0; offset < json.size(); offset += kChunkSize) {
      compressor->Compress(json.substr(offset, kChunkSize), &out);
      out.clear();
    }
    compressor->Finish(&out);
    out.clear();
    bytes += json.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["time_per_value"] =
      benchmark::Counter(static_cast<double>(state.iterations() * Rows().rows().size()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParallelGzipJson)->Arg(1)->Arg(6)->UseRealTime();

// A file compressor over 256 KiB chunks of the JSON output, one stream per iteration; real time,
// since the work is on the workers. "ratio": uncompressed over compressed bytes.
void RunFileCompressor(benchmark::State& state, FileCompressor& compressor) {
  ChunkBuffer buffer(4 * 1024 * 1024);
  JsonDataValueEncoder encoder(&buffer);
  encoder.Begin(nullptr);
  for (const DataValueRow& row : Rows().rows()) encoder.Add(row);
  encoder.End();
  const std::string_view json = buffer.view();
  std::string out;
  size_t bytes = 0;
  size_t compressed = 0;
  for (auto _ : state) {
    for (size_t offset = 0; offset < json.size(); offset += kChunkSize) {
      compressor.Compress(json.substr(offset, kChunkSize), &out);
      compressed += out.size();
      out.clear();
    }
    compressor.Finish(&out);
    compressed += out.size();
    out.clear();
    bytes += json.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["ratio"] = static_cast<double>(bytes) / static_cast<double>(compressed);
  state.counters["time_per_value"] =
      benchmark::Counter(static_cast<double>(state.iterations() * Rows().rows().size()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// zstd at level state.range(0) on libzstd's 2 workers.
void BM_ZstdJson(benchmark::State& state) {
  ZstdOptions options;
  options.level = static_cast<int>(state.range(0));
  RunFileCompressor(state, *ZstdCompressor::Create(options).value());
}
BENCHMARK(BM_ZstdJson)->Arg(1)->Arg(3)->UseRealTime();

// zip (the parallel deflate, 2 workers) at level state.range(0).
void BM_ZipJson(benchmark::State& state) {
  ZipOptions options;
  options.entry_name = "dataValues.json";
  options.deflate.level = static_cast<int>(state.range(0));
  RunFileCompressor(state, *ZipCompressor::Create(options).value());
}
BENCHMARK(BM_ZipJson)->Arg(1)->Arg(6)->UseRealTime();

// The parallel gzip through the same loop as zstd and zip, for the ratio.
void BM_GzipFileCompressorJson(benchmark::State& state) {
  ParallelGzipOptions options;
  options.level = static_cast<int>(state.range(0));
  RunFileCompressor(state, *ParallelGzipCompressor::Create(options).value());
}
// Levels 1-3 are ISA-L's, 4 and 6 zlib's: the speed and ratio on either side of the switch.
BENCHMARK(BM_GzipFileCompressorJson)->Arg(1)->Arg(2)->Arg(3)->Arg(4)->Arg(6)->UseRealTime();

}  // namespace
}  // namespace dvexport::encode

BENCHMARK_MAIN();
