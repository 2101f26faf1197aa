#ifndef DVEXPORT_SERVICE_SERVER_PARALLEL_READ_H_
#define DVEXPORT_SERVICE_SERVER_PARALLEL_READ_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "service/db/data_value_reader.h"
#include "service/db/export_scope.h"
#include "service/db/pg_connection.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/server/cancellation_check.h"

namespace dvexport::server {

// Where an export's rows come from: one or more connections whose transactions see one snapshot,
// and the slices of the datavalue table they share out. One connection and the single slice
// "whole table" (nullopt) is the plain case; with several, each reader thread takes the next
// unread slice until none is left, so a slice dense with the export's rows does not leave the
// other threads idle.
//
// More connections may come as "openers", each run on its reader's own thread so that opening a
// connection and importing the snapshot never delays the first rows; an opener that returns null
// leaves its share of the slices to the other readers.
struct ReadSources {
  std::vector<db::PgConnection*> connections;
  std::vector<std::function<db::PgConnection*()>> openers;
  std::vector<std::optional<db::BlockRange>> slices{std::nullopt};

  int readers() const { return static_cast<int>(connections.size() + openers.size()); }
};

// Hands each slice of a ReadSources to exactly one reader. Thread-safe.
class SliceDispenser {
 public:
  explicit SliceDispenser(const std::vector<std::optional<db::BlockRange>>* slices)
      : slices_(slices) {}

  // The next slice nobody has taken, or nullptr when all are taken.
  const std::optional<db::BlockRange>* Next() {
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    return i < slices_->size() ? &(*slices_)[i] : nullptr;
  }

 private:
  const std::vector<std::optional<db::BlockRange>>* slices_;
  std::atomic<size_t> next_{0};
};

// Carries filled buffers (rendered chunks, batches of values) from the reader threads of one
// export to the thread that sends them, in the order they were queued. Bounded: "spare" buffers
// circulate besides the one each reader fills, so a slow client stops the readers (and
// PostgreSQL waits on its sockets) instead of letting memory grow. Emptied buffers come back
// for reuse. "Buffer" needs Clear().
template <typename Buffer>
class HandOffQueue {
 public:
  struct Item {
    std::unique_ptr<Buffer> buffer;
    int64_t values_so_far = 0;  // in this buffer and every one queued before it
  };

  // "make" creates a buffer; called "spare" times here.
  template <typename Make>
  HandOffQueue(int producers, size_t spare, Make make) : open_producers_(producers) {
    for (size_t i = 0; i < spare; ++i) free_.push_back(make());
  }

  // Reader: queues "filled", which holds "values" values, waiting for an emptied buffer to take
  // in exchange. Null if the queue was stopped (the client went away, or another reader failed).
  std::unique_ptr<Buffer> Push(std::unique_ptr<Buffer> filled, int64_t values) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return stopped_ || !free_.empty(); });
    if (stopped_) return nullptr;
    std::unique_ptr<Buffer> free = std::move(free_.back());
    free_.pop_back();
    values_ += values;
    filled_.push_back(Item{std::move(filled), values_});
    changed_.notify_all();
    return free;
  }

  // Reader: this reader has queued everything it will. A failure stops the other readers and
  // becomes the queue's status (the first failure wins).
  void Close(absl::Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    --open_producers_;
    if (!status.ok()) {
      if (status_.ok()) status_ = std::move(status);
      stopped_ = true;
    }
    changed_.notify_all();
  }

  // Sender: waits for the next buffer; false once every reader has closed and every buffer was
  // taken.
  bool Pop(Item* item) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return open_producers_ == 0 || !filled_.empty(); });
    if (filled_.empty()) return false;
    *item = std::move(filled_.front());
    filled_.pop_front();
    return true;
  }

  // Sender: gives an emptied buffer back.
  void Recycle(std::unique_ptr<Buffer> buffer) {
    buffer->Clear();
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(buffer));
    changed_.notify_all();
  }

  // Sender: the client has gone; each reader stops at its next Push or database wait.
  void Stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

  // Cheap enough for every database wait of the readers.
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }

  // The first reader's failure, or OK.
  absl::Status status() {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::unique_ptr<Buffer>> free_;
  std::deque<Item> filled_;
  int open_producers_;
  int64_t values_ = 0;
  std::atomic<bool> stopped_{false};
  absl::Status status_;
};

// How an export ends when its client has gone (or another reader failed and stopped the queue).
inline absl::Status ClientGoneError() {
  return absl::CancelledError("the client went away; the export was stopped");
}

// One reader's loop: takes slices from "slices" until none is left and reads each one's values
// on "conn" into "add(const encode::DataValueRow&)", which returns false once the queue was
// stopped (ClientGoneError then). Asks "queue" and "cancelled" while waiting for the database.
template <typename Queue, typename Add>
absl::Status ReadSlices(db::PgConnection& conn, const db::ExportScope& scope,
                        SliceDispenser* slices, CancellationCheck* cancelled, const Queue* queue,
                        Add&& add) {
  for (const std::optional<db::BlockRange>* slice = slices->Next(); slice != nullptr;
       slice = slices->Next()) {
    bool stopped = false;
    absl::Status status = db::ReadDataValues(
        conn, scope,
        [&](const encode::DataValueRow& row) {
          if (add(row)) return true;
          stopped = true;
          return false;
        },
        [queue, cancelled]() { return queue->stopped() || (*cancelled)(); }, *slice);
    if (stopped) return ClientGoneError();
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// Runs "read(connection)" on a thread of its own for each reader of "sources" (ReadSources::
// readers()) and returns once all have returned; for an opener that returned null, "read" gets
// nullptr. "read" is called concurrently and must be thread-safe.
template <typename Read>
void RunReaders(const ReadSources& sources, Read read) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(sources.readers()));
  for (db::PgConnection* conn : sources.connections) {
    threads.emplace_back([&read, conn] { read(conn); });
  }
  for (const std::function<db::PgConnection*()>& open : sources.openers) {
    threads.emplace_back([&read, &open] { read(open()); });
  }
  for (std::thread& thread : threads) thread.join();
}

// The reading side of one export: a thread that runs one reader per reader of "sources" (each
// "read(connection, slices, cancelled, queue)" on its connection, sharing the slices, the
// cancellation check and the queue), and the queue their buffers come out of: kSpareBuffers
// buffers of "buffer_capacity" plus one per extra reader circulate besides each reader's own.
// The caller pops the queue, and Stop()s it if the client goes away; Join() (or the destructor)
// waits for the readers.
class ExportReaders {
 public:
  using Queue = HandOffQueue<encode::ChunkBuffer>;
  static constexpr size_t kSpareBuffers = 3;

  // "read" returns the reader's status, which closes its side of the queue.
  template <typename Read>
  ExportReaders(const ReadSources& sources, size_t buffer_capacity, grpc::ServerContext* context,
                Read read)
      : queue_(sources.readers(), kSpareBuffers + static_cast<size_t>(sources.readers()) - 1,
               [buffer_capacity] { return std::make_unique<encode::ChunkBuffer>(buffer_capacity); }),
        slices_(&sources.slices),
        cancelled_(context),
        thread_([this, &sources, read = std::move(read)] {
          RunReaders(sources, [&](db::PgConnection* conn) {
            // A reader without a connection leaves its slices to the others.
            if (conn == nullptr) return queue_.Close(absl::OkStatus());
            queue_.Close(read(*conn, &slices_, &cancelled_, &queue_));
          });
        }) {}

  ExportReaders(const ExportReaders&) = delete;
  ExportReaders& operator=(const ExportReaders&) = delete;

  ~ExportReaders() { Join(); }

  Queue& queue() { return queue_; }

  void Join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  Queue queue_;
  SliceDispenser slices_;
  CancellationCheck cancelled_;
  std::thread thread_;  // last: started once the members it uses exist
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_PARALLEL_READ_H_
