#include "service/server/stream_export.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "service/encode/protobuf_data_value_encoder.h"
#include "service/encode/utf8_sequence.h"
#include "service/server/serialized_message.h"

namespace dvexport::server {
namespace {

using dvexport::v1::DataValue;
using dvexport::v1::DataValueBatch;

// Copies "bytes" to "*out", replacing each ill-formed UTF-8 subpart with U+FFFD as
// encode::ScanUtf8Sequence defines it (the JSON, CSV and protobuf encoders do the same).
void AssignUtf8(std::string_view bytes, std::string* out) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  const size_t valid = encode::WellFormedUtf8Prefix(s, n);
  if (valid == n) {
    out->assign(bytes.data(), n);
    return;
  }
  // Rare: the well-formed prefix, then the rest repaired.
  out->resize(valid + encode::RepairedUtf8Size(s + valid, n - valid));
  std::memcpy(out->data(), s, valid);
  encode::WriteRepairedUtf8(out->data() + valid, s + valid, n - valid);
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

namespace {

using BatchQueue = ExportReaders::Queue;

// One reader thread of a stream export: queues reader "index"'s values of "session", in wire
// format, in batches of at most "batch_bytes" with their end fields.
absl::Status EncodeBatches(db::ReadSession* session, int index, size_t batch_bytes,
                           BatchQueue* queue) {
  const size_t max_values_bytes =
      batch_bytes > encode::ProtobufDataValueEncoder::kMaxBatchEndSize
          ? batch_bytes - encode::ProtobufDataValueEncoder::kMaxBatchEndSize
          : 1;
  encode::ChunkBuffer buffer(batch_bytes + batch_bytes / 4);
  encode::ProtobufDataValueEncoder encoder(&buffer);
  int64_t values = 0;   // in "buffer"
  std::string carried;  // a value that did not fit its batch, for the next one
  // Queues the first "size" bytes of "buffer" (holding "count" values) and goes on in an emptied
  // buffer with the rest. False if the queue was stopped.
  auto push = [&](size_t size, int64_t count) {
    carried.assign(buffer.view().substr(size));
    buffer.Truncate(size);
    std::unique_ptr<encode::ChunkBuffer> free =
        queue->Push(std::make_unique<encode::ChunkBuffer>(std::move(buffer)), count);
    if (free == nullptr) return false;
    buffer = std::move(*free);
    buffer.Append(carried);
    values -= count;
    return true;
  };
  absl::Status status = ReadValues(session, index, [&](const encode::DataValueRow& row) {
    const size_t before = buffer.size();
    encoder.Add(row);
    ++values;
    if (buffer.size() <= max_values_bytes) return true;
    // Over the bound: the batch ends before this value, or with it if it is alone.
    const bool alone = before == 0;
    return push(alone ? buffer.size() : before, alone ? values : values - 1);
  });
  if (!status.ok()) return status;
  if (values > 0 && !push(buffer.size(), values)) return ClientGoneError();
  return absl::OkStatus();
}

}  // namespace

absl::Status StreamDataValueBatches(db::ReadSession* session, int readers_count, size_t batch_bytes,
                                    grpc::ServerContext* context,
                                    const SerializedBatchWriter& write, StreamExportStats* stats) {
  ExportReaders readers(session, readers_count, batch_bytes + batch_bytes / 4,
                        [session, batch_bytes](int index, BatchQueue* queue) {
                          return EncodeBatches(session, index, batch_bytes, queue);
                        });
  BatchQueue& queue = readers.queue();
  // The values as they are (gRPC copies them into a slice of its own: the buffer goes back to
  // the readers), then the end fields.
  auto send = [&](std::string_view values, int64_t values_so_far, bool last) {
    char end[encode::ProtobufDataValueEncoder::kMaxBatchEndSize];
    const char* const end_of_end =
        encode::ProtobufDataValueEncoder::WriteBatchEnd(end, last, values_so_far);
    grpc::Slice parts[2] = {grpc::Slice(values.data(), values.size()),
                            grpc::Slice(end, static_cast<size_t>(end_of_end - end))};
    const grpc::ByteBuffer message(parts, 2);
    if (context->IsCancelled() || !write(message)) return false;
    ++stats->batches;
    stats->values = values_so_far;
    stats->bytes += static_cast<int64_t>(message.Length());
    return true;
  };
  // Only the end of the queue tells which batch is the last: each is sent when the next arrives.
  BatchQueue::Item pending;
  BatchQueue::Item item;
  bool client_gone = false;
  while (queue.Pop(&item)) {
    if (pending.buffer != nullptr) {
      if (!send(pending.buffer->view(), pending.values_so_far, false)) {
        client_gone = true;
        readers.Stop();
        break;
      }
      queue.Recycle(std::move(pending.buffer));
    }
    pending = std::move(item);
  }
  readers.Join();
  if (client_gone || context->IsCancelled()) {
    return ClientGoneError();
  }
  absl::Status status = queue.status();
  if (!status.ok()) return status;
  const bool sent = pending.buffer != nullptr
                        ? send(pending.buffer->view(), pending.values_so_far, true)
                        : send({}, 0, true);
  if (!sent) return absl::CancelledError("the client went away before the last batch");
  return absl::OkStatus();
}

bool ReadSerializedBatchEnd(const grpc::ByteBuffer& batch, bool* last, int64_t* values_so_far) {
  *last = false;
  *values_so_far = 0;
  bool other = false;
  const bool read = ReadTrailingVarints(batch, [&](int field, uint64_t value) {
    if (field == 2) {  // last
      *last = value != 0;
    } else if (field == 3) {  // values_so_far
      *values_so_far = static_cast<int64_t>(value);
    } else {
      other = true;
    }
  });
  return read && !other;
}

}  // namespace dvexport::server
