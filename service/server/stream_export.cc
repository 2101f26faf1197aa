#include "service/server/stream_export.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstring>
#include <utility>

#include "service/db/data_value_reader.h"
#include "service/encode/utf8_sequence.h"
#include "service/server/cancellation_check.h"

namespace dvexport::server {
namespace {

using dvexport::v1::DataValue;
using dvexport::v1::DataValueBatch;

// Bytes of the batch besides its values: last (2) and values_so_far (up to 11).
constexpr size_t kBatchOverhead = 16;

// The index of the first byte of "bytes" from "i" on that is not ASCII, or its size.
size_t SkipAscii(std::string_view bytes, size_t i) {
  const char* s = bytes.data();
  const size_t n = bytes.size();
  for (; n - i >= 8; i += 8) {
    uint64_t word;
    std::memcpy(&word, s + i, 8);
    if ((word & 0x8080808080808080ULL) != 0) break;
  }
  while (i < n && static_cast<unsigned char>(s[i]) < 0x80) ++i;
  return i;
}

// Copies "bytes" to "*out", replacing each ill-formed UTF-8 subpart with U+FFFD as
// encode::ScanUtf8Sequence defines it (the JSON and CSV encoders do the same).
void AssignUtf8(std::string_view bytes, std::string* out) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = SkipAscii(bytes, 0);
  while (i < n) {
    const encode::Utf8Sequence sequence = encode::ScanUtf8Sequence(s + i, n - i);
    if (!sequence.well_formed) break;
    i = SkipAscii(bytes, i + sequence.length);
  }
  if (i == n) {
    out->assign(bytes.data(), n);
    return;
  }
  // Rare: the well-formed prefix, then the rest byte by byte.
  out->assign(bytes.data(), i);
  while (i < n) {
    if (s[i] < 0x80) {
      out->push_back(static_cast<char>(s[i++]));
      continue;
    }
    const encode::Utf8Sequence sequence = encode::ScanUtf8Sequence(s + i, n - i);
    if (sequence.well_formed) {
      out->append(bytes.data() + i, sequence.length);
    } else {
      out->append(encode::kUtf8ReplacementCharacter, encode::kUtf8ReplacementCharacterLength);
    }
    i += sequence.length;
  }
}

void SetTimestamp(int64_t micros, google::protobuf::Timestamp* out) {
  int64_t seconds = micros / 1000000;
  int64_t rest = micros % 1000000;
  if (rest < 0) {
    --seconds;
    rest += 1000000;
  }
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(rest * 1000));
}

}  // namespace

void ToDataValue(const encode::DataValueRow& row, DataValue* out) {
  if (!row.data_element.is_null) AssignUtf8(row.data_element.bytes, out->mutable_data_element());
  AssignUtf8(row.period.bytes, out->mutable_period());
  if (!row.org_unit.is_null) AssignUtf8(row.org_unit.bytes, out->mutable_org_unit());
  if (!row.category_option_combo.is_null) {
    AssignUtf8(row.category_option_combo.bytes, out->mutable_category_option_combo());
  }
  if (!row.attribute_option_combo.is_null) {
    AssignUtf8(row.attribute_option_combo.bytes, out->mutable_attribute_option_combo());
  }
  if (!row.value.is_null) AssignUtf8(row.value.bytes, out->mutable_value());
  if (!row.stored_by.is_null) AssignUtf8(row.stored_by.bytes, out->mutable_stored_by());
  SetTimestamp(row.created_micros, out->mutable_created());
  SetTimestamp(row.last_updated_micros, out->mutable_last_updated());
  if (!row.comment.is_null) AssignUtf8(row.comment.bytes, out->mutable_comment());
  out->set_followup(row.followup);
  out->set_deleted(row.deleted);
}

absl::Status StreamDataValueBatches(db::PgConnection& conn, const db::ExportScope& scope,
                                    size_t batch_bytes, grpc::ServerContext* context,
                                    grpc::ServerWriter<DataValueBatch>* writer,
                                    StreamExportStats* stats) {
  // The batch and its values are reused: Clear() keeps the value messages and
  // their strings' capacity, so a long export stops allocating after its
  // first batch.
  DataValueBatch batch;
  DataValue next;
  size_t batch_size = kBatchOverhead;
  auto send = [&](bool last) {
    batch.set_last(last);
    batch.set_values_so_far(stats->values);
    if (context->IsCancelled() || !writer->Write(batch)) return false;
    ++stats->batches;
    stats->bytes += batch.GetCachedSize();
    batch.mutable_data_values()->Clear();
    batch_size = kBatchOverhead;
    return true;
  };

  bool client_gone = false;
  absl::Status status = db::ReadDataValues(
      conn, scope,
      [&](const encode::DataValueRow& row) {
        next.Clear();
        ToDataValue(row, &next);
        const size_t value_size = next.ByteSizeLong();
        const size_t framed_size =  // field tag, length, value
            1 + google::protobuf::io::CodedOutputStream::VarintSize64(value_size) + value_size;
        if (batch.data_values_size() > 0 && batch_size + framed_size > batch_bytes) {
          if (!send(false)) {
            client_gone = true;
            return false;
          }
        }
        batch.add_data_values()->Swap(&next);
        batch_size += framed_size;
        ++stats->values;
        return true;
      },
      CancellationCheck(context));
  if (client_gone || context->IsCancelled()) {
    return absl::CancelledError("the client went away; the export was stopped");
  }
  if (!status.ok()) return status;
  if (!send(true)) return absl::CancelledError("the client went away before the last batch");
  return absl::OkStatus();
}

}  // namespace dvexport::server
