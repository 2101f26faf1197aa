#include "service/db/sorted_slices.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

// A slice read by the fetcher, for the writer.
struct Fetched {
  KeySlice slice;
  // Sorted; null for a slice that outgrew it, which the writer reads sorted by PostgreSQL.
  SliceSorter* sorter = nullptr;
};

// The rows of a sorted slice that are sent: its offset skipped, its limit kept.
struct LineRange {
  size_t begin;
  size_t end;
};

LineRange RangeOf(const KeySlice& slice, const SliceSorter& sorter) {
  const size_t begin =
      std::min(sorter.size(), static_cast<size_t>(std::max<int64_t>(0, slice.offset)));
  size_t end = sorter.size();
  if (slice.limit.has_value()) {
    end = std::min(end, begin + static_cast<size_t>(std::max<int64_t>(0, *slice.limit)));
  }
  return {begin, end};
}

// The fetcher and the writer of one export, and what passes between them.
class SlicePipeline {
 public:
  SlicePipeline(OrderedReads* reads, int sorters, size_t max_bytes_each,
                std::optional<int64_t> limit, const SortedSliceSource& source)
      : reads_(reads), limit_(limit), source_(source) {
    sorters_.reserve(sorters);
    for (int i = 0; i < sorters; ++i) {
      sorters_.emplace_back(reads->ranks(), max_bytes_each);
      free_.push_back(&sorters_.back());
    }
  }

  // The fetcher's thread: reads and sorts slices while a sorter is free and the connection is
  // not lent to the writer.
  void Fetch() {
    absl::Status status;
    try {
      status = FetchAll();
    } catch (const std::bad_alloc&) {
      status = absl::ResourceExhaustedError("reading data values: out of memory sorting a slice");
    } catch (const std::exception& e) {
      status = absl::InternalError(absl::StrCat("reading data values: ", e.what()));
    }
    std::lock_guard<std::mutex> lock(mu_);
    fetch_status_ = std::move(status);
    fetcher_done_ = true;
    cv_.notify_all();
  }

  // The caller's thread: writes the slices in the order they were fetched.
  absl::Status Write(const IdentifierTables& tables, RowSink row) {
    DataValueLineParser parser(&tables);
    encode::DataValueRow parsed;
    while (true) {
      Fetched fetched;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !ready_.empty() || fetcher_done_; });
        if (ready_.empty()) return fetch_status_;
        fetched = std::move(ready_.front());
        ready_.pop_front();
      }
      absl::Status status = source_.stopped();
      if (!status.ok()) return status;
      if (fetched.sorter == nullptr) {
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
        const LineRange range = RangeOf(fetched.slice, *fetched.sorter);
        for (size_t i = range.begin; i < range.end && status.ok(); ++i) {
          if ((i - range.begin) % kStopCheckRows == kStopCheckRows - 1) status = source_.stopped();
          if (status.ok()) status = parser.Parse(fetched.sorter->Line(i), &parsed);
          if (status.ok() && !row(static_cast<const encode::DataValueRow&>(parsed))) {
            status = absl::CancelledError("the export was stopped by its consumer");
          }
        }
        std::lock_guard<std::mutex> lock(mu_);
        free_.push_back(fetched.sorter);
        cv_.notify_all();
      }
      if (!status.ok()) return status;
    }
  }

  // Has the fetcher stop (its COPY abandoned) and not start another slice.
  void Stop() {
    stop_.store(true);
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }

 private:
  absl::Status FetchAll() {
    std::optional<int64_t> remaining = limit_;
    while (true) {
      SliceSorter* sorter;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_.load() || (!free_.empty() && !connection_lent_); });
        if (stop_.load()) return absl::OkStatus();
        sorter = free_.back();
        free_.pop_back();
        if (remaining.has_value()) *remaining -= lent_rows_;
        lent_rows_ = 0;
      }
      Fetched fetched;
      if (remaining.has_value() && *remaining <= 0) return absl::OkStatus();
      if (!reads_->Next(&fetched.slice)) return absl::OkStatus();
      if (remaining.has_value()) fetched.slice.limit = *remaining;
      sorter->Reset();
      absl::Status status = source_.fill(fetched.slice, sorter, stop_);
      if (!status.ok() || stop_.load()) return status;
      std::lock_guard<std::mutex> lock(mu_);
      if (!sorter->ok() && reads_->SliceOutgrown()) {
        // Its groups come again in smaller slices.
        free_.push_back(sorter);
        continue;
      }
      if (sorter->ok()) {
        reads_->SliceRead(sorter->bytes());
        sorter->Sort();
        const LineRange range = RangeOf(fetched.slice, *sorter);
        if (remaining.has_value()) *remaining -= static_cast<int64_t>(range.end - range.begin);
        fetched.sorter = sorter;
      } else {
        // One group: read again by the writer, sorted by PostgreSQL; the connection is the
        // writer's until then.
        fetched.slice.sort_here = false;
        free_.push_back(sorter);
        connection_lent_ = true;
      }
      ready_.push_back(std::move(fetched));
      cv_.notify_all();
    }
  }

  OrderedReads* const reads_;  // the fetcher's alone
  const std::optional<int64_t> limit_;
  const SortedSliceSource& source_;
  std::vector<SliceSorter> sorters_;  // never resized after the constructor
  std::atomic<bool> stop_{false};

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<SliceSorter*> free_ ABSL_GUARDED_BY(mu_);
  std::deque<Fetched> ready_ ABSL_GUARDED_BY(mu_);
  // The writer reads a slice that outgrew its sorter on the connection; then the rows it sent.
  bool connection_lent_ ABSL_GUARDED_BY(mu_) = false;
  int64_t lent_rows_ ABSL_GUARDED_BY(mu_) = 0;
  bool fetcher_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status fetch_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::Status ReadSortedSlices(OrderedReads* reads, int sorters, size_t max_bytes_each,
                              std::optional<int64_t> limit, const IdentifierTables& tables,
                              const SortedSliceSource& source, RowSink row) {
  SlicePipeline pipeline(reads, std::max(1, sorters), max_bytes_each, limit, source);
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
  return pipeline.Write(tables, row);
}

}  // namespace dvexport::db
