#include "service/db/sorted_slices.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

// How far ahead of the line it writes the writer has the CPU fetch lines (SliceSorter::Prefetch).
constexpr size_t kPrefetchLines = 8;

// A slice read by the fetchers, for the writer.
struct Fetched {
  KeySlice slice;
  // The set of sorters that holds its parts, sorted; -1 for a slice that outgrew them, which the
  // writer reads sorted by PostgreSQL.
  int set = -1;
};

// The rows of a sorted slice of "size" rows that are sent: its offset skipped, its limit kept.
struct LineRange {
  size_t begin;
  size_t end;
};

LineRange RangeOf(const KeySlice& slice, size_t size) {
  const size_t begin = std::min(size, static_cast<size_t>(std::max<int64_t>(0, slice.offset)));
  size_t end = size;
  if (slice.limit.has_value()) {
    end = std::min(end, begin + static_cast<size_t>(std::max<int64_t>(0, *slice.limit)));
  }
  return {begin, end};
}

// "body"'s status, or the exception it threw as one.
absl::Status Guarded(absl::FunctionRef<absl::Status()> body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("reading data values: out of memory sorting a slice");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("reading data values: ", e.what()));
  }
}

// The thread of a slice's second part: runs one job at a time, which the fetcher waits for.
class PartThread {
 public:
  PartThread() : thread_([this] { Run(); }) {}
  ~PartThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void Start(std::function<absl::Status()> job) {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = std::move(job);
    done_ = false;
    cv_.notify_all();
  }

  absl::Status Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return std::move(status_);
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return quit_ || job_ != nullptr; });
      if (job_ == nullptr) return;
      std::function<absl::Status()> job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      absl::Status status = Guarded(job);
      lock.lock();
      status_ = std::move(status);
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<absl::Status()> job_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = true;
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started once the members above are
};

// The fetchers and the writer of one export, and what passes between them.
class SlicePipeline {
 public:
  SlicePipeline(OrderedReads* reads, const SortedSliceShape& shape, std::optional<int64_t> limit,
                const SortedSliceSource& source)
      : reads_(reads), parts_(std::clamp(shape.parts, 1, 2)), limit_(limit), source_(source) {
    const int sets = std::max(1, shape.slices_ahead);
    sorters_.reserve(sets * parts_);
    for (int i = 0; i < sets * parts_; ++i)
      sorters_.emplace_back(reads->ranks(), shape.max_bytes_each);
    for (int set = 0; set < sets; ++set) free_.push_back(set);
    if (parts_ > 1) part_thread_ = std::make_unique<PartThread>();
  }

  // The fetcher's thread: reads and sorts slices while a set of sorters is free and the first
  // connection is not lent to the writer.
  void Fetch() {
    absl::Status status = Guarded([this] { return FetchAll(); });
    std::lock_guard<std::mutex> lock(mu_);
    fetch_status_ = std::move(status);
    fetcher_done_ = true;
    cv_.notify_all();
  }

  // The caller's thread: writes the slices in the order they were fetched.
  absl::Status Write(const IdentifierTables& tables, RowSink row,
                     absl::FunctionRef<void()> before_wait) {
    DataValueLineParser parser(&tables);
    while (true) {
      Fetched fetched;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (ready_.empty() && !fetcher_done_) {
          lock.unlock();
          before_wait();
          lock.lock();
        }
        cv_.wait(lock, [this] { return !ready_.empty() || fetcher_done_; });
        if (ready_.empty()) return fetch_status_;
        fetched = std::move(ready_.front());
        ready_.pop_front();
      }
      absl::Status status = source_.stopped();
      if (!status.ok()) return status;
      if (fetched.set < 0) {
        int64_t sent = 0;
        status = source_.stream_sorted_there(fetched.slice, [&](const encode::DataValueRow& r) {
          ++sent;
          return row(r);
        });
        std::lock_guard<std::mutex> lock(mu_);
        lent_rows_ = sent;
        connection_lent_ = false;
        cv_.notify_all();
      } else {
        status = WriteSet(fetched, &parser, row);
        std::lock_guard<std::mutex> lock(mu_);
        free_.push_back(fetched.set);
        cv_.notify_all();
      }
      if (!status.ok()) return status;
    }
  }

  // Has the fetchers stop (their COPYs abandoned) and not start another slice.
  void Stop() {
    stop_.store(true);
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }

 private:
  SliceSorter* SetOf(int set) { return &sorters_[static_cast<size_t>(set) * parts_]; }

  size_t RowsOf(int set) {
    size_t rows = 0;
    for (int k = 0; k < parts_; ++k) rows += SetOf(set)[k].size();
    return rows;
  }

  // Writes the rows of a sorted slice's set: its parts merged, the slice's offset skipped and
  // its limit kept.
  absl::Status WriteSet(const Fetched& fetched, DataValueLineParser* parser, RowSink row) {
    const SliceSorter* parts = SetOf(fetched.set);
    const LineRange range = RangeOf(fetched.slice, RowsOf(fetched.set));
    size_t next[2] = {0, 0};
    encode::DataValueRow parsed;
    absl::Status status;
    for (size_t n = 0; n < range.end && status.ok(); ++n) {
      int from = 0;
      if (parts_ > 1 && (next[0] == parts[0].size() ||
                         (next[1] < parts[1].size() &&
                          SliceSorter::Before(parts[1], next[1], parts[0], next[0])))) {
        from = 1;
      }
      // The line kPrefetchLines after this one in each part (lines of the parts alternate).
      for (int k = 0; k < parts_; ++k) parts[k].Prefetch(next[k] + kPrefetchLines);
      const std::string_view line = parts[from].Line(next[from]++);
      if (n < range.begin) continue;
      if ((n - range.begin) % kStopCheckRows == kStopCheckRows - 1) status = source_.stopped();
      if (status.ok()) status = parser->Parse(line, &parsed);
      if (status.ok() && !row(static_cast<const encode::DataValueRow&>(parsed))) {
        status = absl::CancelledError("the export was stopped by its consumer");
      }
    }
    return status;
  }

  // Reads part "part" of "slice" into "sorter", and sorts it if it held every line.
  absl::Status FillPart(const KeySlice& slice, int part, SliceSorter* sorter) {
    absl::Status status = source_.fill(slice, part, sorter, stop_);
    // The other part stops too: the slice cannot be written.
    if (!status.ok()) stop_.store(true);
    if (status.ok() && !stop_.load() && sorter->ok()) sorter->Sort();
    return status;
  }

  // Reads every part of "slice" into "set", at once.
  absl::Status FillSet(const KeySlice& slice, int set) {
    SliceSorter* parts = SetOf(set);
    for (int k = 0; k < parts_; ++k) parts[k].Reset();
    if (parts_ == 1) return FillPart(slice, 0, &parts[0]);
    part_thread_->Start([this, &slice, parts] { return FillPart(slice, 1, &parts[1]); });
    absl::Status status = FillPart(slice, 0, &parts[0]);
    absl::Status second = part_thread_->Wait();
    // The failure, not the other part's stop.
    if (status.ok() || (!second.ok() && absl::IsCancelled(status))) return second;
    return status;
  }

  absl::Status FetchAll() {
    std::optional<int64_t> remaining = limit_;
    while (true) {
      int set;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_.load() || (!free_.empty() && !connection_lent_); });
        if (stop_.load()) return absl::OkStatus();
        set = free_.back();
        free_.pop_back();
        if (remaining.has_value()) *remaining -= lent_rows_;
        lent_rows_ = 0;
      }
      Fetched fetched;
      if (remaining.has_value() && *remaining <= 0) return absl::OkStatus();
      if (!reads_->Next(&fetched.slice)) return absl::OkStatus();
      if (remaining.has_value()) fetched.slice.limit = *remaining;
      absl::Status status = FillSet(fetched.slice, set);
      if (!status.ok() || stop_.load()) return status;
      bool held = true;
      size_t bytes = 0;
      for (int k = 0; k < parts_; ++k) {
        held = held && SetOf(set)[k].ok();
        bytes += SetOf(set)[k].bytes();
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!held && reads_->SliceOutgrown()) {
        // Its groups come again in smaller slices.
        free_.push_back(set);
        continue;
      }
      if (held) {
        reads_->SliceRead(bytes);
        const LineRange range = RangeOf(fetched.slice, RowsOf(set));
        if (remaining.has_value()) *remaining -= static_cast<int64_t>(range.end - range.begin);
        fetched.set = set;
      } else {
        // One group: read again by the writer, sorted by PostgreSQL; the first connection is the
        // writer's until then.
        fetched.slice.sort_here = false;
        free_.push_back(set);
        connection_lent_ = true;
      }
      ready_.push_back(std::move(fetched));
      cv_.notify_all();
    }
  }

  OrderedReads* const reads_;  // the fetcher's alone
  const int parts_;
  const std::optional<int64_t> limit_;
  const SortedSliceSource& source_;
  std::vector<SliceSorter> sorters_;         // parts_ per set; never resized after the constructor
  std::unique_ptr<PartThread> part_thread_;  // with two parts
  std::atomic<bool> stop_{false};

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> free_ ABSL_GUARDED_BY(mu_);  // sets
  std::deque<Fetched> ready_ ABSL_GUARDED_BY(mu_);
  // The writer reads a slice that outgrew its sorters on the first connection; then the rows it
  // sent.
  bool connection_lent_ ABSL_GUARDED_BY(mu_) = false;
  int64_t lent_rows_ ABSL_GUARDED_BY(mu_) = 0;
  bool fetcher_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status fetch_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::Status ReadSortedSlices(OrderedReads* reads, const SortedSliceShape& shape,
                              std::optional<int64_t> limit, const IdentifierTables& tables,
                              const SortedSliceSource& source, RowSink row,
                              absl::FunctionRef<void()> before_wait) {
  SlicePipeline pipeline(reads, shape, limit, source);
  std::thread fetcher([&pipeline] { pipeline.Fetch(); });
  // The fetcher is stopped and joined however the writer ends, an exception included.
  struct Joiner {
    SlicePipeline& pipeline;
    std::thread& fetcher;
    ~Joiner() {
      pipeline.Stop();
      fetcher.join();
    }
  } joiner{pipeline, fetcher};
  return pipeline.Write(tables, row, before_wait);
}

}  // namespace dvexport::db
