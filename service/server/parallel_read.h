#ifndef DVEXPORT_SERVICE_SERVER_PARALLEL_READ_H_
#define DVEXPORT_SERVICE_SERVER_PARALLEL_READ_H_

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
#include "service/db/read_session.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"

namespace dvexport::server {

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
  bool stopped_ = false;
  absl::Status status_;
};

// How an export ends when its client has gone (or another reader failed and stopped the queue).
inline absl::Status ClientGoneError() {
  return absl::CancelledError("the client went away; the export was stopped");
}

// One reader's loop: reader "index" of "session" reads its values into
// "add(const encode::DataValueRow&)", which returns false once the queue was stopped
// (ClientGoneError then).
template <typename Add>
absl::Status ReadValues(db::ReadSession* session, int index, Add&& add) {
  bool stopped = false;
  absl::Status status = session->Read(index, [&](const encode::DataValueRow& row) {
    if (add(row)) return true;
    stopped = true;
    return false;
  });
  if (stopped) return ClientGoneError();
  return status;
}

// The reading side of one export: a thread per reader of "session" (each "read(index, queue)"),
// and the queue their buffers come out of: kSpareBuffers buffers of "buffer_capacity" plus one
// per extra reader circulate besides each reader's own. The caller pops the queue, and Stop()s
// it if the client goes away; Join() (or the destructor) waits for the readers. A reader that
// fails, or a stopped queue, cancels the session's other database waits.
class ExportReaders {
 public:
  using Queue = HandOffQueue<encode::ChunkBuffer>;
  static constexpr size_t kSpareBuffers = 3;

  // "read" returns the reader's status, which closes its side of the queue.
  template <typename Read>
  ExportReaders(db::ReadSession* session, int readers, size_t buffer_capacity, Read read)
      : session_(session),
        queue_(readers, kSpareBuffers + static_cast<size_t>(readers) - 1, [buffer_capacity] {
          return std::make_unique<encode::ChunkBuffer>(buffer_capacity);
        }) {
    threads_.reserve(static_cast<size_t>(readers));
    for (int i = 0; i < readers; ++i) {
      threads_.emplace_back([this, i, read] {
        absl::Status status = read(i, &queue_);
        if (!status.ok()) session_->Cancel();
        queue_.Close(std::move(status));
      });
    }
  }

  ExportReaders(const ExportReaders&) = delete;
  ExportReaders& operator=(const ExportReaders&) = delete;

  ~ExportReaders() { Join(); }

  Queue& queue() { return queue_; }

  // The client has gone: the readers stop at their next Push or database wait.
  void Stop() {
    queue_.Stop();
    session_->Cancel();
  }

  void Join() {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
  db::ReadSession* session_;
  Queue queue_;
  std::vector<std::thread> threads_;  // last: started once the members they use exist
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_PARALLEL_READ_H_
