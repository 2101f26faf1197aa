#ifndef DVEXPORT_SERVICE_PIPELINE_CALL_SESSION_H_
#define DVEXPORT_SERVICE_PIPELINE_CALL_SESSION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/db/read_session.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/principal.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/export.h"
#include "service/pipeline/export_pipeline.h"
#include "service/pipeline/export_slots.h"

namespace dvexport::pipeline {

// The database side of one call (its db::ReadSession), its identity and, for an export, its
// export slot (or its place in the slots' queue). Cancel may come from any thread at any time,
// also before Open or after Close.
class CallSession {
 public:
  // First: the pipeline and the call's deadline, for everything below.
  void Bind(ExportPipeline* pipeline, std::chrono::system_clock::time_point deadline);

  // Validates "query" (DHIS2's rules in "order") and creates the session, bounded by the call's
  // deadline (no I/O, no slot). The query's parameters, or why the call cannot start.
  absl::StatusOr<dhis2::ExportParams> Open(const dvexport::v1::ExportRequest& query,
                                           dhis2::RuleOrder order);

  // Instead of Open, for a call without a query (ListChangeStreams, DropChangeStream): creates
  // the session, bounded by the call's deadline (no I/O).
  void OpenWithoutQuery();

  // After Bind (before or after Open): authenticates the caller from what "origin" presents,
  // without blocking: "done" is called exactly once, with OK once the call has an identity (at
  // once with AuthMode::kNone, without one), or with why it has none (Unauthenticated,
  // ResourceExhausted, Unavailable, DeadlineExceeded, Cancelled), on this thread or on an
  // authentication worker. "*record" gets the caller's user and method. Once the pipeline has
  // stopped admitting calls (shutdown), "done" is called at once with Unavailable.
  void Authenticate(const CallOrigin& origin, CallRecord* record,
                    std::function<void(absl::Status)> done);

  // The credentials "origin" presents, with the DHIS2 user its verified client certificate
  // stands for (--client_identities), if any: the only place a certificate is looked up.
  auth::Credentials CredentialsOf(const CallOrigin& origin) const;

  // After Authenticate's OK: the caller, or null with AuthMode::kNone.
  const dhis2::Principal* principal() const {
    return principal_.has_value() ? &*principal_ : nullptr;
  }
  // After Authenticate's OK: whose share of the export slots the call takes: the DHIS2 username,
  // or the caller's address with AuthMode::kNone.
  const std::string& user_key() const { return user_key_; }

  // After Open: asks an export slot for "user", waiting in the queue if none is free; "admitted"
  // and "contended" as ExportSlots::Join's ("admitted" called once with OK when the slot is held,
  // or with why there is none), unless the queue is full, which is returned (ResourceExhausted)
  // without calling it.
  absl::Status AwaitSlot(std::string user, std::function<void(absl::Status)> admitted,
                         std::function<void(bool)> contended = nullptr);

  // Between Open and Close, on the call's own threads only.
  db::ReadSession& get() ABSL_NO_THREAD_SAFETY_ANALYSIS { return *session_; }

  // Cancels the session and frees the slot (or leaves the queue) at once: the session's
  // cancellation and drain go on on the call's threads, holding only pool connections.
  void Cancel();

  // Ends the session (every connection goes back to the pool) and frees the slot.
  void Close();

 private:
  ExportPipeline* pipeline_ = nullptr;
  std::chrono::system_clock::time_point deadline_;
  // The pending authentication's ticket (0: none), for Cancel.
  std::atomic<uint64_t> auth_ticket_{0};
  std::optional<dhis2::Principal> principal_;
  std::string user_key_;
  ExportSlots::Ticket ticket_;
  std::mutex mu_;
  std::unique_ptr<db::ReadSession> session_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CALL_SESSION_H_
