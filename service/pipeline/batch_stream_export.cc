#include "service/pipeline/batch_stream_export.h"

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "service/dhis2/change_token.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/protobuf_data_value_encoder.h"
#include "service/pipeline/reader_export.h"

namespace dvexport::pipeline {
namespace {

using encode::ProtobufDataValueEncoder;

static_assert(dhis2::kChangeTokenLength <= ProtobufDataValueEncoder::kMaxChangeTokenSize);

// StreamDataValues: typed values as DataValueBatch messages of at most options.batch_bytes
// serialized bytes (one value larger than that makes a batch of its own), written in wire format
// by encode::ProtobufDataValueEncoder straight from the rows: no message objects, and no second
// serialization by the door. The last batch has last = true, possibly with no values.
class BatchStreamExport final : public ReaderExport {
 public:
  BatchStreamExport(ExportPipeline* pipeline, CallOrigin origin, ExportConsumer* consumer,
                    const absl::StatusOr<dvexport::v1::ExportRequest>& request)
      : ReaderExport(pipeline, std::move(origin), consumer, "StreamDataValues") {
    Start(request.status(), request.ok() ? &*request : nullptr);
  }

 private:
  // Reader "index": encodes its values in wire format into batches of at most batch_bytes with
  // room for the batch's end fields, and hands each over when the next value does not fit.
  absl::Status ReadValues(int index) override {
    const size_t batch_bytes = options().batch_bytes;
    const size_t max_values_bytes = batch_bytes > ProtobufDataValueEncoder::kMaxBatchEndSize
                                        ? batch_bytes - ProtobufDataValueEncoder::kMaxBatchEndSize
                                        : 1;
    encode::ChunkBuffer buffer(batch_bytes + batch_bytes / 4);
    ProtobufDataValueEncoder encoder(&buffer);
    int64_t values = 0;  // in "buffer"
    bool stopped = false;
    // Hands over the first "size" bytes of "buffer" (holding "count" values) and keeps the rest
    // (a value that did not fit) for the next batch.
    auto hand_over = [&](size_t size, int64_t count) {
      if (!HandOver(buffer.view().substr(0, size), count)) return false;
      const std::string carried(buffer.view().substr(size));
      buffer.Clear();
      buffer.Append(carried);
      values -= count;
      return true;
    };
    absl::Status status = session().Read(index, [&](const encode::DataValueRow& row) {
      const size_t before = buffer.size();
      encoder.Add(row);
      ++values;
      if (buffer.size() <= max_values_bytes) return true;
      // Over the bound: the batch ends before this value, or with it if it is alone.
      const bool alone = before == 0;
      if (hand_over(alone ? buffer.size() : before, alone ? values : values - 1)) return true;
      stopped = true;
      return false;
    });
    if (stopped) return ClientGoneError();
    if (!status.ok()) return status;
    if (values > 0 && !hand_over(buffer.size(), values)) return ClientGoneError();
    return absl::OkStatus();
  }

  // Only the end of the export tells which batch is the last: each is queued when the next one
  // arrives, and WriteEnd sends the one held back with last = true.
  bool HandOver(std::string_view batch, int64_t count) {
    std::lock_guard<std::mutex> lock(order_mu_);
    std::optional<Chunk> previous;
    if (pending_) previous = Frame(/*last=*/false);
    values_so_far_ += count;
    // Room for the end fields too, so that Frame appends them without copying the batch again.
    pending_.emplace();
    pending_->reserve(batch.size() + ProtobufDataValueEncoder::kMaxBatchEndSize);
    pending_->append(batch);
    return !previous || Push(*std::move(previous));
  }

  absl::Status WriteEnd() override {
    std::lock_guard<std::mutex> lock(order_mu_);
    if (!Push(Frame(/*last=*/true))) {
      return absl::CancelledError("the client went away before the last batch");
    }
    return absl::OkStatus();
  }

  // The batch held back (or none) with its end fields.
  Chunk Frame(bool last) ABSL_EXCLUSIVE_LOCKS_REQUIRED(order_mu_) {
    char end[ProtobufDataValueEncoder::kMaxBatchEndSize];
    const char* const end_of_end = ProtobufDataValueEncoder::WriteBatchEnd(
        end, last, values_so_far_, last ? session().change_token() : std::string_view());
    Chunk chunk{.kind = Chunk::Kind::kBatch,
                .bytes = pending_ ? *std::move(pending_) : std::string(),
                .values_so_far = values_so_far_};
    chunk.bytes.append(end, static_cast<size_t>(end_of_end - end));
    pending_.reset();
    return chunk;
  }

  std::mutex order_mu_;
  std::optional<std::string> pending_ ABSL_GUARDED_BY(order_mu_);
  int64_t values_so_far_ ABSL_GUARDED_BY(order_mu_) = 0;
};

}  // namespace

std::unique_ptr<Export> StartBatchStreamExport(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportRequest>& request, ExportConsumer* consumer) {
  return std::make_unique<BatchStreamExport>(pipeline, std::move(origin), consumer, request);
}

}  // namespace dvexport::pipeline
