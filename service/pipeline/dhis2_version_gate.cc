#include "service/pipeline/dhis2_version_gate.h"

#include <utility>

namespace dvexport::pipeline {

void Dhis2VersionGate::SetLearner(std::function<void()> learn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    learn_ = std::move(learn);
    if (learn_) return;
  }
  // Nothing learns the version any more (the server stops): no call may wait for it.
  Settle();
}

uint64_t Dhis2VersionGate::WhenSettled(std::function<void()> ready) {
  std::function<void()> learn;
  uint64_t ticket = 0;
  {
    // The version is set before Settle is called, and Settle takes this lock: a call that finds
    // it unknown here is in waiting_ before Settle looks.
    std::lock_guard<std::mutex> lock(mu_);
    if (learn_ && !known_()) {
      ticket = ++last_ticket_;
      waiting_.emplace(ticket, std::move(ready));
      learn = learn_;
    }
  }
  if (ticket == 0) {
    ready();
    return 0;
  }
  learn();
  return ticket;
}

bool Dhis2VersionGate::Abandon(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.erase(ticket) == 1;
}

void Dhis2VersionGate::Settle() {
  std::map<uint64_t, std::function<void()>> settled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    settled.swap(waiting_);
  }
  for (auto& [ticket, ready] : settled) ready();
}

}  // namespace dvexport::pipeline
