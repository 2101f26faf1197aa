#ifndef DVEXPORT_SERVICE_PIPELINE_DHIS2_VERSION_GATE_H_
#define DVEXPORT_SERVICE_PIPELINE_DHIS2_VERSION_GATE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace dvexport::pipeline {

// Calls that arrive before the server knows its database's DHIS2 (the server started while the
// database was down, or no connection was made yet) wait for it: DHIS2's routes, parameters and
// rules are its version's, so a call read by another version's rules would be answered wrongly.
// A waiting call has the gate's thread make one attempt to learn it (a connection, which reads the
// version), and that attempt settles every call waiting: with the version, or without it (the
// database cannot be reached: the calls go on, and fail as they would have).
class Dhis2VersionGate {
 public:
  // "known": whether the version is known (a served one or a refused one). "attempt": one attempt
  // to learn it, bounded, which "cancel" (from another thread) ends soon.
  Dhis2VersionGate(std::function<bool()> known, std::function<void()> attempt,
                   std::function<void()> cancel);
  // Cancels an attempt under way and settles every call waiting.
  ~Dhis2VersionGate();
  Dhis2VersionGate(const Dhis2VersionGate&) = delete;
  Dhis2VersionGate& operator=(const Dhis2VersionGate&) = delete;

  // Whether the version is known: then no call waits.
  bool Known() const { return known_(); }

  // Calls "ready" at once, on this thread, when the version is known, and returns 0; otherwise
  // returns a ticket, and "ready" is called once from the thread that settles the wait (the
  // gate's, or one whose connection learned the version: Settle), unless Abandon takes it back.
  uint64_t WhenSettled(std::function<void()> ready);

  // Takes back the wait of "ticket": true when "ready" will not be called (false: it is being,
  // or was, called).
  bool Abandon(uint64_t ticket);

  // The version was just learned, or an attempt ended: every call waiting goes on (its "ready"
  // called here).
  void Settle();

 private:
  void Run();

  const std::function<bool()> known_;
  const std::function<void()> attempt_;
  const std::function<void()> cancel_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool attempt_asked_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t last_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::function<void()>> waiting_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started once the members above are
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_DHIS2_VERSION_GATE_H_
