#ifndef DVEXPORT_SERVICE_PIPELINE_DHIS2_VERSION_GATE_H_
#define DVEXPORT_SERVICE_PIPELINE_DHIS2_VERSION_GATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace dvexport::pipeline {

// Calls that arrive before the server knows its database's DHIS2 (the server started while the
// database was down, or the prober has not connected yet) wait for it: DHIS2's routes,
// parameters and rules are its version's, so a call read by another version's rules would be
// answered wrongly. Waiting wakes whoever learns the version (the server's prober), and one
// attempt settles every call waiting: with the version, or without it (the database cannot be
// reached: the calls go on, and fail as they would have).
class Dhis2VersionGate {
 public:
  // "known": whether the version is known (a served one or a refused one).
  explicit Dhis2VersionGate(std::function<bool()> known) : known_(std::move(known)) {}

  // Wakes whoever learns the version (it must call Settle after each attempt); null, the
  // default, when nothing does: then calls never wait.
  void SetLearner(std::function<void()> learn);

  // Calls "ready" at once, on this thread, when the version is known or nothing learns it, and
  // returns 0; otherwise returns a ticket, and "ready" is called once on the thread that settles
  // the wait (Settle), unless Abandon takes it back first.
  uint64_t WhenSettled(std::function<void()> ready);

  // Takes back the wait of "ticket": true when "ready" will not be called (false: it is being,
  // or was, called).
  bool Abandon(uint64_t ticket);

  // An attempt to learn the version ended, or the version was just learned: every call waiting
  // goes on (its "ready" called here).
  void Settle();

 private:
  const std::function<bool()> known_;
  std::mutex mu_;
  std::function<void()> learn_ ABSL_GUARDED_BY(mu_);
  uint64_t last_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::function<void()>> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_DHIS2_VERSION_GATE_H_
