#include "service/pipeline/count.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/call_scope.h"
#include "service/pipeline/call_session.h"
#include "service/pipeline/export_pipeline.h"
#include "service/pipeline/pending_start.h"

namespace dvexport::pipeline {
namespace {

// One count: its session, and its thread once authenticated.
class RunningCount final : public Count {
 public:
  RunningCount(ExportPipeline* pipeline, CallOrigin origin, std::string summary, Done done)
      : origin_(std::move(origin)),
        done_(std::move(done)),
        scope_(pipeline, origin_, "CountDataValues") {
    scope_.summary() = std::move(summary);
    session_.Bind(pipeline, origin_.deadline);
  }

  void Start(const absl::StatusOr<dvexport::v1::ExportRequest>& request) {
    const absl::StatusOr<dhis2::ExportParams> params =
        request.ok()
            ? session_.Open(*request, origin_.last_rule_wins ? dhis2::RuleOrder::kLastFailure
                                                             : dhis2::RuleOrder::kFirstFailure)
            : absl::StatusOr<dhis2::ExportParams>(request.status());
    // Authenticated first, as exports are (ReaderExport::Start).
    session_.Authenticate(origin_, &scope_.record(), [this, params](absl::Status authenticated) {
      if (!authenticated.ok() || !params.ok()) {
        session_.Close();
        End(!authenticated.ok() ? std::move(authenticated) : params.status());
        return;
      }
      scope_.StartThread(&RunningCount::Run, this, *params);
    });
  }

  void Cancel(absl::Status why) override {
    {
      std::lock_guard<std::mutex> lock(cancel_mu_);
      if (cancelled_.ok()) cancelled_ = std::move(why);
    }
    session_.Cancel();
  }

 private:
  void Run(dhis2::ExportParams params) {
    // A count starts no change stream: nothing would ever hold its token.
    params.start_change_stream = false;
    db::ReadSession& session = session_.get();
    absl::Status status = session.Begin(params, session_.principal());
    absl::StatusOr<int64_t> count = status.ok() ? session.Count() : status;
    if (count.ok()) {
      status = session.Finish();
      if (!status.ok()) count = status;
    }
    session_.Close();
    End(std::move(count));
  }

  void End(absl::StatusOr<int64_t> count) {
    if (absl::IsCancelled(count.status()) || absl::IsDeadlineExceeded(count.status())) {
      std::lock_guard<std::mutex> lock(cancel_mu_);
      if (!cancelled_.ok()) count = cancelled_;
    }
    if (count.ok()) {
      dvexport::v1::CountResponse response;
      response.set_count(*count);
      scope_.FinishAnswer(count.status(), static_cast<int64_t>(response.ByteSizeLong()), *count);
    } else {
      scope_.Finish(count.status());
    }
    done_(std::move(count));
  }

  const CallOrigin origin_;
  const Done done_;
  CallSession session_;
  std::mutex cancel_mu_;
  absl::Status cancelled_ ABSL_GUARDED_BY(cancel_mu_);  // the first Cancel's "why"
  // Last: its threads are joined before the members above are destroyed.
  CallScope scope_;
};

std::unique_ptr<Count> StartNow(ExportPipeline* pipeline, CallOrigin origin,
                                const absl::StatusOr<dvexport::v1::ExportRequest>& request,
                                Count::Done done) {
  auto count = std::make_unique<RunningCount>(
      pipeline, std::move(origin), request.ok() ? SummarizeRequest(*request) : "", std::move(done));
  count->Start(request);
  return count;
}

// A count that waits for the database's DHIS2 (Dhis2VersionGate), as an export does
// (pending_start.h), then the count it started.
class PendingCount final : public Count {
 public:
  PendingCount(ExportPipeline* pipeline, CallOrigin origin,
               absl::StatusOr<dvexport::v1::ExportRequest> request, Done done)
      : pending_(&pipeline->version_gate(),
                 [pipeline, origin = std::move(origin), request = std::move(request),
                  done = std::move(done)] { return StartNow(pipeline, origin, request, done); }) {}

  void Wait() { pending_.Wait(); }
  void Cancel(absl::Status why) override { pending_.Cancel(std::move(why)); }

 private:
  PendingStart<Count> pending_;
};

}  // namespace

std::unique_ptr<Count> Count::Start(ExportPipeline* pipeline, CallOrigin origin,
                                    const absl::StatusOr<dvexport::v1::ExportRequest>& request,
                                    Done done) {
  if (pipeline->version_gate().Known()) {
    return StartNow(pipeline, std::move(origin), request, std::move(done));
  }
  auto pending =
      std::make_unique<PendingCount>(pipeline, std::move(origin), request, std::move(done));
  pending->Wait();
  return pending;
}

}  // namespace dvexport::pipeline
