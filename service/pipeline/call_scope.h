#ifndef DVEXPORT_SERVICE_PIPELINE_CALL_SCOPE_H_
#define DVEXPORT_SERVICE_PIPELINE_CALL_SCOPE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "service/pipeline/call_record.h"
#include "service/pipeline/export.h"

namespace dvexport::pipeline {

// The lifecycle every call of the pipeline shares (an export, a count, a change stream call),
// whatever door it came through: from its construction the call is registered with the pipeline
// (ExportPipeline::CallStarted, so that shutdown waits for it) and its clock runs; the call's
// threads are started here; Finish writes the call's line to the call log and its record to the
// metrics, once; the destruction joins the call's threads and unregisters the call.
//
// The owner declares its CallScope as its last member, so that the threads are joined before
// anything they use is destroyed. Thread-safe, but the record: the call's own threads fill it,
// one at a time, before Finish.
class CallScope {
 public:
  // "rpc": the method's name, for the log and the metrics. "*pipeline" must outlive the scope.
  CallScope(ExportPipeline* pipeline, const CallOrigin& origin, std::string rpc);
  // Joins the call's threads, but detaches the calling one (a call's last thread may be the one
  // that ends the door's call and destroys it: it then touches nothing of the call after), and
  // unregisters the call.
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Starts a thread of the call running "function(args...)".
  template <typename Function, typename... Args>
  void StartThread(Function&& function, Args&&... args) {
    std::lock_guard<std::mutex> lock(threads_mu_);
    threads_.emplace_back(std::forward<Function>(function), std::forward<Args>(args)...);
  }

  // What the call log and the metrics will say of the call.
  CallRecord& record() { return record_; }
  // The request's part of the log line (SummarizeRequest's text, and what a call adds); empty if
  // the request could not be read.
  std::string& summary() { return summary_; }

  // Seconds since the call arrived.
  double Elapsed() const;

  // A streaming call handed its first message to the door: the record's first_byte_seconds, once.
  void FirstByte();

  // The call ended with "status": the record takes its duration and status code, and goes to the
  // call log and the metrics. Only the first call counts.
  void Finish(const absl::Status& status);

  // A unary call ended with "status": if OK, with its one answer ("bytes" serialized, "values"
  // counted), whose time is also the first byte's; then as Finish.
  void FinishAnswer(const absl::Status& status, int64_t bytes, int64_t values = 0);

 private:
  void Report(const absl::Status& status, double seconds);

  ExportPipeline* const pipeline_;
  const std::string peer_;
  const std::chrono::steady_clock::time_point started_;
  CallRecord record_;
  std::string summary_;
  std::atomic<bool> finished_{false};
  std::mutex threads_mu_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(threads_mu_);
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CALL_SCOPE_H_
