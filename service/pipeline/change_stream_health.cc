#include "service/pipeline/change_stream_health.h"

#include <utility>

namespace dvexport::pipeline {

bool ChangeStreamsHealthy(bool stream_tokens, const std::vector<ChangeStreamGauges>& streams) {
  if (!stream_tokens && !streams.empty()) return false;
  for (const ChangeStreamGauges& stream : streams) {
    if (stream.lost || stream.over_warning) return false;
  }
  return true;
}

ChangeStreamHealth::ChangeStreamHealth(ChangeStreamObserver* next,
                                       std::function<void(bool healthy)> report)
    : next_(next), report_(std::move(report)) {}

void ChangeStreamHealth::ChangeTokenKindPolled(bool stream) {
  stream_tokens_ = stream;
  if (next_ != nullptr) next_->ChangeTokenKindPolled(stream);
}

void ChangeStreamHealth::ChangeStreamsPolled(const std::vector<ChangeStreamGauges>& streams) {
  if (next_ != nullptr) next_->ChangeStreamsPolled(streams);
  if (report_) report_(ChangeStreamsHealthy(stream_tokens_, streams));
}

}  // namespace dvexport::pipeline
