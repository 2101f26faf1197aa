#ifndef DVEXPORT_SERVICE_DB_SLICE_DISPENSER_H_
#define DVEXPORT_SERVICE_DB_SLICE_DISPENSER_H_

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "service/db/export_scope.h"

namespace dvexport::db {

// Hands each slice of the datavalue table to exactly one of the readers of an
// export, in table order: each reader takes the next unread slice when it is
// done with one, so that a slice dense with the export's rows does not leave
// the others idle. Thread-safe.
class SliceDispenser {
 public:
  // A single nullopt slice: the whole table.
  SliceDispenser() : slices_{std::nullopt} {}

  // Starts over with "slices".
  void Reset(std::vector<std::optional<BlockRange>> slices) {
    std::lock_guard<std::mutex> lock(mu_);
    slices_ = std::move(slices);
    next_ = 0;
  }

  // The next slice nobody has taken; false when all are taken.
  bool Next(std::optional<BlockRange>* slice) {
    std::lock_guard<std::mutex> lock(mu_);
    if (next_ >= slices_.size()) return false;
    *slice = slices_[next_++];
    return true;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return slices_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::optional<BlockRange>> slices_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_SLICE_DISPENSER_H_
