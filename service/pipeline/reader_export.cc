#include "service/pipeline/reader_export.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/json_string.h"

namespace dvexport::pipeline {
namespace {

absl::Status StalledClientError(const PipelineOptions& options) {
  return absl::DeadlineExceededError(absl::StrCat(
      "the client read nothing for ", options.stall_timeout.count() / 1000.0,
      " s after it could have read what it had been sent at ", options.stall_min_rate / 1024.0,
      " KiB/s (the server's --stall_timeout_s and --stall_min_rate_kib_s); the export was "
      "stopped"));
}

absl::Status ContendedStallError(const PipelineOptions& options) {
  return absl::DeadlineExceededError(absl::StrCat(
      "the client read nothing for ", options.stall_timeout_contended.count() / 1000.0,
      " s while exports of other users waited for an export slot (the server's "
      "--stall_timeout_contended_s); the export was stopped to give its slot to them"));
}

}  // namespace

ReaderExport::ReaderExport(ExportPipeline* pipeline, CallOrigin origin, ExportConsumer* consumer,
                           std::string rpc)
    : pipeline_(pipeline),
      origin_(std::move(origin)),
      consumer_(consumer),
      queue_(/*capacity=*/4, /*producers=*/1, [this] { consumer_->Ready(); },
             pipeline->options().stall_timeout, StalledClientError(pipeline->options()),
             {.bytes_per_second = static_cast<double>(pipeline->options().stall_min_rate),
              .max_bytes = static_cast<size_t>(pipeline->options().stall_max_unread)},
             {.timeout = pipeline->options().stall_timeout_contended,
              .status = ContendedStallError(pipeline->options())}),
      scope_(pipeline, origin_, std::move(rpc)) {}

void ReaderExport::Start(const absl::Status& status, const dvexport::v1::ExportRequest* query) {
  session_.Bind(pipeline_, origin_.deadline);
  if (status.ok()) scope_.summary() = SummarizeRequest(*query);
  const absl::StatusOr<dhis2::ExportParams> params =
      status.ok() ? session_.Open(*query, origin_.last_rule_wins ? dhis2::RuleOrder::kLastFailure
                                                                 : dhis2::RuleOrder::kFirstFailure)
                  : absl::StatusOr<dhis2::ExportParams>(status);
  // Authenticated first, as DHIS2 authenticates before it reads a request: a caller without an
  // identity is told only that, whatever it sent, never holds a slot, and is refused before the
  // first byte.
  session_.Authenticate(origin_, &record(), [this, params](absl::Status authenticated) {
    if (!authenticated.ok()) {
      ReaderDone(std::move(authenticated));
      return;
    }
    if (!params.ok()) {
      ReaderDone(params.status());
      return;
    }
    absl::Status queued = session_.AwaitSlot(
        session_.user_key(),
        [this, params = *params](absl::Status admitted) {
          if (!admitted.ok()) {
            ReaderDone(std::move(admitted));
            return;
          }
          scope_.StartThread(&ReaderExport::RunFirstReader, this, params);
        },
        // Under the slots' lock: the queue takes only its own.
        [this](bool contended) { queue_.SetContended(contended); });
    if (!queued.ok()) ReaderDone(std::move(queued));
  });
}

void ReaderExport::RunFirstReader(dhis2::ExportParams params) {
  absl::Status status = session().Begin(params, session_.principal());
  if (status.ok()) {
    std::lock_guard<std::mutex> lock(token_mu_);
    change_token_ = session().change_token();
  }
  if (status.ok() && params.start_change_stream && !session().change_stream_unavailable().empty()) {
    // The caller asked for a stream and gets a snapshot token: the operator should know why.
    const std::string& reason = session().change_stream_unavailable();
    std::fprintf(stderr, "{\"event\":\"change_stream_unavailable\",\"reason\":%s}\n",
                 common::JsonString(std::string_view(reason.data(), reason.size())).c_str());
  }
  absl::StatusOr<int> readers = 1;
  if (status.ok() && !ReadsInOrder()) {
    // Extra connections only where the pool keeps one for every export that may still start.
    const int keep_available =
        std::max(0, options().max_concurrent_exports - pipeline_->slots().running());
    readers = session().PlanReads(keep_available);
    status = readers.status();
  }
  if (status.ok() && *readers > 1) {
    pipeline_->CountSlicedExport();
    running_readers_.fetch_add(*readers - 1);
    queue_.AddProducers(*readers - 1);
    for (int i = 1; i < *readers; ++i) scope_.StartThread(&ReaderExport::RunReader, this, i);
  }
  if (status.ok()) status = ReadValues(0);
  ReaderDone(std::move(status));
}

void ReaderExport::RunReader(int index) { ReaderDone(ReadValues(index)); }

void ReaderExport::ReaderDone(absl::Status status) {
  // A failure stops the others first, so that its status, not theirs, is the call's.
  if (!status.ok()) StopReaders(status);
  if (running_readers_.fetch_sub(1) == 1) {
    // The last reader: every value is queued.
    if (status.ok() && !queue_.stopped()) {
      status = session().Finish();
      if (status.ok()) status = WriteEnd();
    }
    session_.Close();
    // The database is done with; the export ends once the client has taken the last chunks, or
    // when it takes nothing for the stall timeout.
    if (status.ok()) queue_.WaitUntilSent();
  }
  EndIfStalled();
  queue_.Close(std::move(status));
}

void ReaderExport::StopReaders(absl::Status why) {
  queue_.Stop(std::move(why));
  session_.Cancel();
}

void ReaderExport::EndIfStalled() {
  if (!queue_.stalled() || stall_ended_.exchange(true)) return;
  const absl::Status status = queue_.status();
  record().stall = queue_.contended_stall() ? "stall_timeout_contended" : "stall_timeout";
  StopReaders(status);
  // A stalled client also holds back the end that would follow the chunks: the door ends its
  // write in flight (and the call) instead.
  consumer_->Abort(status);
}

Export::Next ReaderExport::TakeNext(Chunk* chunk) {
  switch (queue_.TryPop(chunk)) {
    case Queue::Next::kItem:
      scope_.FirstByte();
      record().values = chunk->values_so_far;
      return Next::kChunk;
    case Queue::Next::kEmpty:
      return Next::kEmpty;
    case Queue::Next::kDone:
      break;
  }
  // Reported before the door sends the end, so that a client that has its status finds the call
  // in the log and the metrics.
  scope_.Finish(queue_.status());
  return Next::kDone;
}

void ReaderExport::Sent(size_t bytes) {
  record().bytes += static_cast<int64_t>(bytes);
  // The transport took the chunk (gRPC: within the client's flow-control window; HTTP: into the
  // socket's send buffer), not necessarily the client.
  queue_.Sent(bytes);
}

void ReaderExport::Cancel(absl::Status why) { StopReaders(std::move(why)); }

std::string ReaderExport::change_token() const {
  std::lock_guard<std::mutex> lock(token_mu_);
  return change_token_;
}

}  // namespace dvexport::pipeline
