#include "service/pipeline/count.h"

#include <utility>

namespace dvexport::pipeline {

std::unique_ptr<Count> Count::Start(ExportPipeline* pipeline, CallOrigin origin,
                                    const absl::StatusOr<dvexport::v1::ExportRequest>& request,
                                    Done done) {
  std::unique_ptr<Count> count(new Count(pipeline, std::move(origin),
                                         request.ok() ? SummarizeRequest(*request) : "",
                                         std::move(done)));
  Count* const self = count.get();
  self->session_.Bind(pipeline, self->origin_.deadline);
  const absl::StatusOr<dhis2::ExportParams> params =
      request.ok() ? self->session_.Open(*request, self->origin_.last_rule_wins
                                                       ? dhis2::RuleOrder::kLastFailure
                                                       : dhis2::RuleOrder::kFirstFailure)
                   : absl::StatusOr<dhis2::ExportParams>(request.status());
  // Authenticated first, as exports are (StreamingExport::Start).
  self->session_.Authenticate(
      self->origin_, &self->record_, [self, params](absl::Status authenticated) {
        if (!authenticated.ok() || !params.ok()) {
          self->session_.Close();
          self->End(!authenticated.ok() ? std::move(authenticated) : params.status());
          return;
        }
        std::lock_guard<std::mutex> lock(self->thread_mu_);
        self->thread_ = std::thread(&Count::Run, self, *params);
      });
  return count;
}

Count::Count(ExportPipeline* pipeline, CallOrigin origin, std::string summary, Done done)
    : pipeline_(pipeline),
      origin_(std::move(origin)),
      summary_(std::move(summary)),
      done_(std::move(done)),
      started_(std::chrono::steady_clock::now()) {
  record_.rpc = "CountDataValues";
  record_.transport = origin_.transport;
  pipeline_->CallStarted();
}

Count::~Count() {
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    if (thread_.joinable()) {
      if (thread_.get_id() == std::this_thread::get_id()) {
        thread_.detach();
      } else {
        thread_.join();
      }
    }
  }
  pipeline_->CallEnded();
}

void Count::Run(dhis2::ExportParams params) {
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

void Count::Cancel(absl::Status why) {
  {
    std::lock_guard<std::mutex> lock(cancel_mu_);
    if (cancelled_.ok()) cancelled_ = std::move(why);
  }
  session_.Cancel();
}

void Count::End(absl::StatusOr<int64_t> count) {
  if (absl::IsCancelled(count.status()) || absl::IsDeadlineExceeded(count.status())) {
    std::lock_guard<std::mutex> lock(cancel_mu_);
    if (!cancelled_.ok()) count = cancelled_;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (count.ok()) {
    dvexport::v1::CountResponse response;
    response.set_count(*count);
    record_.first_byte_seconds = seconds;
    record_.values = *count;
    record_.bytes = static_cast<int64_t>(response.ByteSizeLong());
  }
  record_.seconds = seconds;
  record_.code = absl::StatusCodeToString(count.status().code());
  if (pipeline_->log() != nullptr) {
    pipeline_->log()->Write(record_, origin_.peer, summary_, count.status());
  }
  done_(std::move(count));
}

}  // namespace dvexport::pipeline
