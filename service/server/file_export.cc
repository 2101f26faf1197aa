#include "service/server/file_export.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "common/crc32.h"
#include "service/db/data_value_reader.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/json_data_value_encoder.h"
#include "service/encode/pretty_json_data_value_encoder.h"
#include "service/server/cancellation_check.h"
#include "service/server/parallel_read.h"
#include "service/server/serialized_message.h"

namespace dvexport::server {
namespace {


// The first chunk is flushed after this many rendered bytes, so that the first byte leaves
// within milliseconds of the first row; later chunks are "chunk_size".
constexpr size_t kFirstChunkSize = 16 * 1024;

// FileChunk's fields.
constexpr uint32_t kDataField = 1;         // bytes data
constexpr uint32_t kTrailerField = 2;      // ExportTrailer trailer
constexpr uint32_t kValuesSoFarField = 3;  // int64 values_so_far
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;

// Turns rendered bytes into data chunks on the stream: compresses them if
// asked, keeps the lengths and CRC-32s for the trailer. Each FileChunk goes
// out serialized by hand as three slices: the data field's tag and length, the
// data (one copy, into gRPC's slice), and values_so_far (always written, last):
// no FileChunk object holds a second copy of the bytes, and gRPC serializes
// nothing.
class ChunkSender {
 public:
  ChunkSender(grpc::ServerContext* context, const SerializedChunkWriter& write,
              std::unique_ptr<encode::ParallelGzipCompressor> gzip)
      : context_(context), write_(write), gzip_(std::move(gzip)) {}

  // Sends "rendered" (possibly empty); "last" finishes the compressed
  // stream. False if the client has gone.
  bool Send(std::string_view rendered, int64_t values_so_far, bool last = false) {
    uncompressed_bytes_ += static_cast<int64_t>(rendered.size());
    std::string_view data = rendered;
    if (gzip_ != nullptr) {
      // The compressor checksums its input on its workers; the trailer takes that CRC.
      compressed_.clear();
      gzip_->Compress(rendered, &compressed_);
      if (last) {
        gzip_->Finish(&compressed_);
        uncompressed_crc_ = gzip_->input_crc32();
      }
      data = compressed_;
      file_crc_ = common::Crc32(file_crc_, data);
    } else {
      // Uncompressed, the file is the rendered bytes: one checksum serves both.
      uncompressed_crc_ = file_crc_ = common::Crc32(file_crc_, data);
    }
    if (data.empty()) return true;
    file_bytes_ += static_cast<int64_t>(data.size());
    grpc::Slice parts[3] = {
        TagAndVarint(kDataField, kLengthDelimited, data.size()),
        grpc::Slice(data.data(), data.size()),
        TagAndVarint(kValuesSoFarField, kVarint, static_cast<uint64_t>(values_so_far))};
    return !context_->IsCancelled() && write_(grpc::ByteBuffer(parts, 3));
  }

  bool SendTrailer(int64_t values) {
    dvexport::v1::ExportTrailer trailer;
    trailer.set_values(values);
    trailer.set_uncompressed_bytes(uncompressed_bytes_);
    trailer.set_uncompressed_crc32(uncompressed_crc_);
    trailer.set_file_bytes(file_bytes_);
    trailer.set_file_crc32(file_crc_);
    const std::string bytes = trailer.SerializeAsString();
    grpc::Slice parts[3] = {TagAndVarint(kTrailerField, kLengthDelimited, bytes.size()),
                            grpc::Slice(bytes.data(), bytes.size()),
                            TagAndVarint(kValuesSoFarField, kVarint, static_cast<uint64_t>(values))};
    return write_(grpc::ByteBuffer(parts, 3));
  }

  int64_t file_bytes() const { return file_bytes_; }

 private:
  grpc::ServerContext* context_;
  const SerializedChunkWriter& write_;
  std::unique_ptr<encode::ParallelGzipCompressor> gzip_;
  std::string compressed_;
  int64_t uncompressed_bytes_ = 0;
  uint32_t uncompressed_crc_ = 0;
  int64_t file_bytes_ = 0;
  uint32_t file_crc_ = 0;
};

using ChunkQueue = ExportReaders::Queue;

// One reader thread of an export: takes slices of the table until none is left, reads their rows
// on "conn", renders them with its own "Encoder" and queues the chunks. The document's start and
// end are the sender's: every value rendered here is preceded by Encoder::kValueSeparator.
template <typename Encoder>
absl::Status Render(db::PgConnection& conn, const db::ExportScope& scope, SliceDispenser* slices,
                    size_t chunk_size, CancellationCheck* cancelled, ChunkQueue* queue) {
  // The encoder keeps writing into "buffer"; queued chunks take its contents away.
  encode::ChunkBuffer buffer(chunk_size + chunk_size / 4);
  Encoder encoder(&buffer);
  encoder.SetValuesWritten(true);
  int64_t values = 0;  // in "buffer"
  // Queues what "buffer" holds and goes on in an emptied one. False if the queue was stopped.
  auto push = [&]() {
    std::unique_ptr<encode::ChunkBuffer> free =
        queue->Push(std::make_unique<encode::ChunkBuffer>(std::move(buffer)), values);
    if (free == nullptr) return false;
    buffer = std::move(*free);
    values = 0;
    return true;
  };
  size_t flush_at = std::min(kFirstChunkSize, chunk_size);
  absl::Status status =
      ReadSlices(conn, scope, slices, cancelled, queue, [&](const encode::DataValueRow& row) {
        encoder.Add(row);
        ++values;
        if (buffer.size() < flush_at) return true;
        flush_at = chunk_size;
        return push();
      });
  if (!status.ok()) return status;
  if (!buffer.empty() && !push()) return ClientGoneError();
  return absl::OkStatus();
}

// The rendered start and end of the document, written by the sender around the readers' values.
template <typename Encoder>
class DocumentFrame {
 public:
  explicit DocumentFrame(const db::ExportScope& scope) : buffer_(4096), encoder_(&buffer_) {
    if (scope.header) {
      header_.data_set = scope.header->data_set ? encode::Text{*scope.header->data_set, false}
                                                : encode::Text{{}, true};
      header_.complete_date_micros = scope.header->complete_date_micros;
      header_.period = {scope.header->period, false};
      header_.org_unit = scope.header->org_unit ? encode::Text{*scope.header->org_unit, false}
                                                : encode::Text{{}, true};
    }
    encoder_.Begin(scope.header ? &header_ : nullptr);
  }

  std::string_view start() const { return buffer_.view(); }

  std::string_view End(bool values_written) {
    buffer_.Clear();
    encoder_.SetValuesWritten(values_written);
    encoder_.End();
    return buffer_.view();
  }

 private:
  encode::DataValueSetHeader header_;
  encode::ChunkBuffer buffer_;
  Encoder encoder_;
};

template <typename Encoder>
absl::Status StreamDocument(const ReadSources& sources, const db::ExportScope& scope,
                            size_t chunk_size, grpc::ServerContext* context, ChunkSender* sender,
                            FileExportStats* stats) {
  DocumentFrame<Encoder> frame(scope);
  // The document's start goes out with the first values (or the end), so that the first byte
  // sent is a measure of the first row read.
  std::string first_chunk(frame.start());
  // The database reads and the encoding run on threads of their own, overlapping with
  // compression and sending here.
  ExportReaders readers(sources, chunk_size + chunk_size / 4, context,
                        [&scope, chunk_size](db::PgConnection& conn, SliceDispenser* slices,
                                             CancellationCheck* cancelled, ChunkQueue* queue) {
                          return Render<Encoder>(conn, scope, slices, chunk_size, cancelled,
                                                 queue);
                        });
  ChunkQueue& queue = readers.queue();
  bool client_gone = false;
  bool first_values = true;
  int64_t values = 0;
  ChunkQueue::Item item;
  while (queue.Pop(&item)) {
    std::string_view rendered = item.buffer->view();
    if (first_values && !rendered.empty()) {
      rendered.remove_prefix(Encoder::kValueSeparator.size());
      first_values = false;
      first_chunk.append(rendered);
      rendered = first_chunk;
    }
    values = item.values_so_far;
    if (!sender->Send(rendered, values)) {
      client_gone = true;
      queue.Stop();
      break;
    }
    queue.Recycle(std::move(item.buffer));
  }
  readers.Join();
  stats->values = values;
  stats->file_bytes = sender->file_bytes();
  if (client_gone) return ClientGoneError();
  absl::Status status = queue.status();
  if (!status.ok()) return status;
  std::string_view end = frame.End(values > 0);
  if (first_values) {
    first_chunk.append(end);
    end = first_chunk;
  }
  if (!sender->Send(end, values, /*last=*/true)) {
    return ClientGoneError();
  }
  stats->file_bytes = sender->file_bytes();
  if (!sender->SendTrailer(values)) {
    return absl::CancelledError("the client went away before the trailer");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StreamFile(const ReadSources& sources, const db::ExportScope& scope,
                        dvexport::v1::Format format,
                        std::unique_ptr<encode::ParallelGzipCompressor> gzip, size_t chunk_size,
                        grpc::ServerContext* context, const SerializedChunkWriter& write,
                        FileExportStats* stats) {
  ChunkSender sender(context, write, std::move(gzip));
  switch (format) {
    case dvexport::v1::FORMAT_CSV:
      return StreamDocument<encode::CsvDataValueEncoder>(sources, scope, chunk_size, context,
                                                         &sender, stats);
    case dvexport::v1::FORMAT_JSON_PRETTY:
      return StreamDocument<encode::PrettyJsonDataValueEncoder>(sources, scope, chunk_size,
                                                                context, &sender, stats);
    default:
      return StreamDocument<encode::JsonDataValueEncoder>(sources, scope, chunk_size, context,
                                                          &sender, stats);
  }
}

bool ReadSerializedChunkValues(const grpc::ByteBuffer& chunk, int64_t* values_so_far) {
  bool found = false;
  const bool read = ReadTrailingVarints(chunk, [&](int field, uint64_t value) {
    if (field != static_cast<int>(kValuesSoFarField)) return;
    *values_so_far = static_cast<int64_t>(value);
    found = true;
  });
  return read && found;
}

}  // namespace dvexport::server
