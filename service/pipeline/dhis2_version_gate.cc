#include "service/pipeline/dhis2_version_gate.h"

#include <utility>

namespace dvexport::pipeline {

Dhis2VersionGate::Dhis2VersionGate(std::function<bool()> known, std::function<void()> attempt,
                                   std::function<void()> cancel)
    : known_(std::move(known)),
      attempt_(std::move(attempt)),
      cancel_(std::move(cancel)),
      thread_([this] { Run(); }) {}

Dhis2VersionGate::~Dhis2VersionGate() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  cancel_();
  thread_.join();
  Settle();
}

uint64_t Dhis2VersionGate::WhenSettled(std::function<void()> ready) {
  uint64_t ticket = 0;
  {
    // The version is set before Settle is called, and Settle takes this lock: a call that finds
    // it unknown here is in waiting_ before Settle looks.
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && !known_()) {
      ticket = ++last_ticket_;
      waiting_.emplace(ticket, std::move(ready));
      attempt_asked_ = true;
    }
  }
  if (ticket == 0) {
    ready();
    return 0;
  }
  wake_.notify_all();
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

void Dhis2VersionGate::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || attempt_asked_; });
    if (stopping_) return;
    attempt_asked_ = false;
    lock.unlock();
    attempt_();
    Settle();
    lock.lock();
  }
}

}  // namespace dvexport::pipeline
