#include "service/server/stream_export.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "service/db/data_value_reader.h"
#include "service/encode/protobuf_data_value_encoder.h"
#include "service/server/cancellation_check.h"
#include "service/server/serialized_message.h"

namespace dvexport::server {
namespace {

using dvexport::v1::DataValueBatch;

using BatchQueue = ExportReaders::Queue;

// One reader thread of a stream export: takes slices of the table until none is left and queues
// their values, in wire format, in batches of at most "batch_bytes" with their end fields.
absl::Status EncodeBatches(db::PgConnection& conn, const db::ExportScope& scope,
                           SliceDispenser* slices, size_t batch_bytes,
                           CancellationCheck* cancelled, BatchQueue* queue) {
  const size_t max_values_bytes =
      batch_bytes > encode::ProtobufDataValueEncoder::kMaxBatchEndSize
          ? batch_bytes - encode::ProtobufDataValueEncoder::kMaxBatchEndSize
          : 1;
  encode::ChunkBuffer buffer(batch_bytes + batch_bytes / 4);
  encode::ProtobufDataValueEncoder encoder(&buffer);
  int64_t values = 0;  // in "buffer"
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
  absl::Status status =
      ReadSlices(conn, scope, slices, cancelled, queue, [&](const encode::DataValueRow& row) {
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

absl::Status StreamDataValueBatches(const ReadSources& sources, const db::ExportScope& scope,
                                    size_t batch_bytes, grpc::ServerContext* context,
                                    const SerializedBatchWriter& write, StreamExportStats* stats) {
  ExportReaders readers(sources, batch_bytes + batch_bytes / 4, context,
                        [&scope, batch_bytes](db::PgConnection& conn, SliceDispenser* slices,
                                              CancellationCheck* cancelled, BatchQueue* queue) {
                          return EncodeBatches(conn, scope, slices, batch_bytes, cancelled,
                                               queue);
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
        queue.Stop();
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
