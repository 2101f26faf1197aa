#include "service/server/file_export.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "service/db/data_value_reader.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/crc32.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/json_data_value_encoder.h"
#include "service/encode/pretty_json_data_value_encoder.h"
#include "service/server/cancellation_check.h"

namespace dvexport::server {
namespace {

using dvexport::v1::FileChunk;

// The first chunk is flushed after this many rendered bytes, so that the first byte leaves
// within milliseconds of the first row; later chunks are "chunk_size".
constexpr size_t kFirstChunkSize = 16 * 1024;

// Rendered chunks waiting between the reading thread and the sending thread. Bounded: a slow
// client fills it, then the reader waits, and PostgreSQL waits on its socket.
constexpr size_t kQueuedChunks = 3;

// Turns rendered bytes into data chunks on the stream: compresses them if
// asked, keeps the lengths and CRC-32s for the trailer.
class ChunkSender {
 public:
  ChunkSender(grpc::ServerContext* context, grpc::ServerWriter<FileChunk>* writer,
              std::unique_ptr<encode::ParallelGzipCompressor> gzip)
      : context_(context), writer_(writer), gzip_(std::move(gzip)) {}

  // Sends "rendered" (possibly empty); "last" finishes the compressed
  // stream. False if the client has gone.
  bool Send(std::string_view rendered, int64_t values_so_far, bool last) {
    uncompressed_bytes_ += static_cast<int64_t>(rendered.size());
    FileChunk chunk;
    std::string* data = chunk.mutable_data();
    if (gzip_ != nullptr) {
      // The compressor checksums its input on its workers; the trailer takes that CRC.
      gzip_->Compress(rendered, data);
      if (last) {
        gzip_->Finish(data);
        uncompressed_crc_ = gzip_->input_crc32();
      }
      file_crc_ = encode::Crc32(file_crc_, *data);
    } else {
      // Uncompressed, the file is the rendered bytes: one checksum serves both.
      data->assign(rendered.data(), rendered.size());
      uncompressed_crc_ = file_crc_ = encode::Crc32(file_crc_, *data);
    }
    if (data->empty()) return true;
    file_bytes_ += static_cast<int64_t>(data->size());
    chunk.set_values_so_far(values_so_far);
    return !context_->IsCancelled() && writer_->Write(chunk);
  }

  bool SendTrailer(int64_t values) {
    FileChunk chunk;
    dvexport::v1::ExportTrailer* trailer = chunk.mutable_trailer();
    trailer->set_values(values);
    trailer->set_uncompressed_bytes(uncompressed_bytes_);
    trailer->set_uncompressed_crc32(uncompressed_crc_);
    trailer->set_file_bytes(file_bytes_);
    trailer->set_file_crc32(file_crc_);
    chunk.set_values_so_far(values);
    return writer_->Write(chunk);
  }

  int64_t file_bytes() const { return file_bytes_; }

 private:
  grpc::ServerContext* context_;
  grpc::ServerWriter<FileChunk>* writer_;
  std::unique_ptr<encode::ParallelGzipCompressor> gzip_;
  int64_t uncompressed_bytes_ = 0;
  uint32_t uncompressed_crc_ = 0;
  int64_t file_bytes_ = 0;
  uint32_t file_crc_ = 0;
};

// Hands rendered chunks from the thread that reads and encodes to the thread that sends, through
// a bounded queue; emptied buffers come back for reuse, so memory stays at a few chunks.
class ChunkQueue {
 public:
  struct Chunk {
    std::unique_ptr<encode::ChunkBuffer> buffer;
    int64_t values_so_far = 0;
    bool last = false;
  };

  explicit ChunkQueue(size_t buffer_capacity) {
    for (size_t i = 0; i < kQueuedChunks; ++i) {
      free_.push_back(std::make_unique<encode::ChunkBuffer>(buffer_capacity));
    }
  }

  // Reader: queues "chunk", waiting for a free buffer to take in exchange. Null if the sender
  // has stopped.
  std::unique_ptr<encode::ChunkBuffer> Push(Chunk chunk) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return stopped_ || !free_.empty(); });
    if (stopped_) return nullptr;
    std::unique_ptr<encode::ChunkBuffer> free = std::move(free_.back());
    free_.pop_back();
    filled_.push_back(std::move(chunk));
    changed_.notify_all();
    return free;
  }

  // Reader: no more chunks; "status" tells why.
  void Close(absl::Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    status_ = std::move(status);
    changed_.notify_all();
  }

  // Sender: waits for the next chunk; false once the reader has closed the queue and every
  // chunk was taken.
  bool Pop(Chunk* chunk) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return closed_ || !filled_.empty(); });
    if (filled_.empty()) return false;
    *chunk = std::move(filled_.front());
    filled_.pop_front();
    return true;
  }

  // Sender: gives an emptied buffer back.
  void Recycle(std::unique_ptr<encode::ChunkBuffer> buffer) {
    buffer->Clear();
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(buffer));
    changed_.notify_all();
  }

  // Sender: the client has gone; the reader stops at its next Push or database wait.
  void Stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

  // Cheap enough for every database wait of the reader.
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }

  absl::Status status() {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::unique_ptr<encode::ChunkBuffer>> free_;
  std::deque<Chunk> filled_;
  bool closed_ = false;
  std::atomic<bool> stopped_{false};
  absl::Status status_;
};

// Reads the rows of "scope" from "conn", renders them with "Encoder" and queues the chunks;
// runs on its own thread while the RPC thread compresses and sends. Returns the values read.
template <typename Encoder>
int64_t Render(db::PgConnection& conn, const db::ExportScope& scope, size_t chunk_size,
               grpc::ServerContext* context, ChunkQueue* queue) {
  int64_t values = 0;
  encode::ChunkBuffer buffer(chunk_size + chunk_size / 4);
  Encoder encoder(&buffer);
  encode::DataValueSetHeader header;
  if (scope.header) {
    header.data_set = scope.header->data_set ? encode::Text{*scope.header->data_set, false}
                                             : encode::Text{{}, true};
    header.complete_date_micros = scope.header->complete_date_micros;
    header.period = {scope.header->period, false};
    header.org_unit = scope.header->org_unit ? encode::Text{*scope.header->org_unit, false}
                                             : encode::Text{{}, true};
  }
  // Swaps the rendered bytes out of "buffer" (which the encoder keeps writing into) and queues
  // them. False if the sender has stopped.
  auto push = [&](bool last) {
    auto filled = std::make_unique<encode::ChunkBuffer>(std::move(buffer));
    std::unique_ptr<encode::ChunkBuffer> free = queue->Push({std::move(filled), values, last});
    if (free == nullptr) return false;
    buffer = std::move(*free);
    return true;
  };
  encoder.Begin(scope.header ? &header : nullptr);
  size_t flush_at = std::min(kFirstChunkSize, chunk_size);
  bool stopped = false;
  absl::Status status = db::ReadDataValues(
      conn, scope,
      [&](const encode::DataValueRow& row) {
        encoder.Add(row);
        ++values;
        if (buffer.size() < flush_at) return true;
        flush_at = chunk_size;
        if (!push(false)) {
          stopped = true;
          return false;
        }
        return true;
      },
      [queue, cancelled = CancellationCheck(context)]() mutable {
        return queue->stopped() || cancelled();
      });
  if (stopped) {
    status = absl::CancelledError("the client went away; the export was stopped");
  } else if (status.ok()) {
    encoder.End();
    if (!push(true)) status = absl::CancelledError("the client went away; the export was stopped");
  }
  queue->Close(std::move(status));
  return values;
}

}  // namespace

absl::Status StreamFile(db::PgConnection& conn, const db::ExportScope& scope,
                        dvexport::v1::Format format,
                        std::unique_ptr<encode::ParallelGzipCompressor> gzip, size_t chunk_size,
                        grpc::ServerContext* context, grpc::ServerWriter<FileChunk>* writer,
                        FileExportStats* stats) {
  ChunkSender sender(context, writer, std::move(gzip));
  ChunkQueue queue(chunk_size + chunk_size / 4);
  int64_t values = 0;
  // The database read and the encoding run on their own thread, overlapping with compression
  // and sending here; "conn" is used by that thread only until it is joined.
  std::thread reader([&] {
    values =
        format == dvexport::v1::FORMAT_CSV
            ? Render<encode::CsvDataValueEncoder>(conn, scope, chunk_size, context, &queue)
        : format == dvexport::v1::FORMAT_JSON_PRETTY
            ? Render<encode::PrettyJsonDataValueEncoder>(conn, scope, chunk_size, context, &queue)
            : Render<encode::JsonDataValueEncoder>(conn, scope, chunk_size, context, &queue);
  });
  bool client_gone = false;
  bool finished = false;
  ChunkQueue::Chunk chunk;
  while (queue.Pop(&chunk)) {
    if (!sender.Send(chunk.buffer->view(), chunk.values_so_far, chunk.last)) {
      client_gone = true;
      queue.Stop();
      break;
    }
    finished = chunk.last;
    queue.Recycle(std::move(chunk.buffer));
  }
  reader.join();
  stats->values = values;
  stats->file_bytes = sender.file_bytes();
  absl::Status status = queue.status();
  if (client_gone) {
    return absl::CancelledError("the client went away; the export was stopped");
  }
  if (status.ok() && !finished) status = absl::InternalError("the export ended without its end");
  if (status.ok() && !sender.SendTrailer(values)) {
    status = absl::CancelledError("the client went away before the trailer");
  }
  return status;
}

}  // namespace dvexport::server
