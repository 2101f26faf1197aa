#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_CALL_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_CALL_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dvexport/v1/export.pb.h"
#include "service/auth/authenticator.h"
#include "service/auth/client_identities.h"
#include "service/db/connection_pool.h"
#include "service/db/read_session.h"
#include "service/dhis2/export_request_validator.h"
#include "service/server/call_log.h"
#include "service/server/export_slots.h"
#include "service/server/hand_off_queue.h"
#include "service/server/request_bytes.h"

namespace dvexport::server {

// How calls are authenticated (--auth).
enum class AuthMode {
  // Every call but health needs a DHIS2 identity: a personal access token, a password, or a
  // client certificate listed in --client_identities (docs/SECURITY.md).
  kDhis2,
  // No identity is asked: whoever reaches the port reads everything (a trusted network only).
  kNone,
};

struct ServiceOptions {
  // Bytes of rendered (uncompressed) output per data chunk sent.
  size_t chunk_size = 256 * 1024;
  // Serialized bytes of a StreamDataValues batch, at most (a single larger
  // value makes a batch of its own).
  size_t batch_bytes = 256 * 1024;
  // Exports running at once; the next ones wait for a slot (each user's first come first served,
  // the users in turn: ExportSlots).
  int max_concurrent_exports = 4;
  // Slots one user (a DHIS2 username, or the peer's address) holds at most; 0: every slot (the
  // server's --max_exports_per_user defaults to max(1, max_concurrent_exports - 1)).
  int max_exports_per_user = 0;
  // Exports waiting for a slot at most; one more is refused with RESOURCE_EXHAUSTED. 0: none wait.
  int max_queued_exports = 64;
  // Exports of one user waiting at most; one more is refused with RESOURCE_EXHAUSTED. 0: the
  // whole queue (the server's --max_queued_exports_per_user defaults to half of it).
  int max_queued_exports_per_user = 0;
  // How long an export waits for a slot at most (never past its deadline); then it is refused
  // with RESOURCE_EXHAUSTED. 0: none wait.
  std::chrono::milliseconds max_queue_wait{30000};
  // How long a call waits for a pooled database connection.
  std::chrono::milliseconds connection_wait{10000};
  // PostgreSQL statement_timeout for a call's statements; 0: the role's or
  // database's setting.
  std::chrono::milliseconds statement_timeout{0};
  // A streaming export whose client takes nothing for this long (no write completes while
  // messages wait) is ended with DEADLINE_EXCEEDED, and its transaction, snapshot, slot and
  // connections are released. The timeout runs from the time a reader at stall_min_rate would
  // have read every byte the client's transport took (at most stall_max_unread of them counted):
  // a transport may take nothing more until its client has read what it holds, however large its
  // receive window.
  std::chrono::milliseconds stall_timeout{60000};
  // The stall timeout while an export of another user waits for a slot (that the stalled export
  // could give up): the client's credit counts for at most as long, so that such a client holds
  // its slot at most twice this long after its last progress.
  std::chrono::milliseconds stall_timeout_contended{5000};
  // The highest zstd compression_level accepted (1 to 19); a higher one is refused with
  // INVALID_ARGUMENT. Up to 9 zstd is at least as fast as zlib's level 9; levels 16-19 compress
  // at a few MB/s, so that one cheap request would hold an export slot and a core for minutes.
  int max_zstd_level = 9;
  // Bytes per second: a client that reads at least this fast is never ended by stall_timeout.
  int64_t stall_min_rate = 64 * 1024;
  // The unread bytes a client is given time for, at most.
  int64_t stall_max_unread = 16 * 1024 * 1024;
  // How a large export is read with several connections at once (slices of
  // the table, one snapshot; see db::PlanBlockSlices); extra connections are
  // taken only when the pool can spare them. max_streams 1: one COPY always.
  db::ReadPlanOptions read_plan;
  // How calls are authenticated; kDhis2 unless a trusted network is meant.
  AuthMode auth = AuthMode::kDhis2;
  // The identity cache, the verification workers and the limits on failed attempts (kDhis2).
  auth::AuthenticatorOptions authentication;
  // Client certificates that stand for DHIS2 usernames (--client_identities); none if null. Must
  // outlive the service.
  const auth::ClientIdentities* client_identities = nullptr;

  // The database side of each call.
  db::ReadSessionOptions session() const {
    return {.connection_wait = connection_wait,
            .statement_timeout = statement_timeout,
            .read_plan = read_plan};
  }

  // The export slots and their queue.
  ExportSlotOptions slots() const {
    return {.slots = max_concurrent_exports,
            .max_queued = max_queued_exports,
            .max_wait = max_queue_wait,
            .max_per_user = max_exports_per_user,
            .max_queued_per_user = max_queued_exports_per_user};
  }
};

// What every call of the service shares. Outlives every call.
struct CallEnvironment {
  db::ConnectionPool* pool = nullptr;
  ServiceOptions options;
  // The export slots (ExportFile and StreamDataValues; counts take none).
  std::unique_ptr<ExportSlots> slots;
  std::atomic<int64_t> sliced_exports{0};
  CallLog* log = nullptr;
  // Authenticates the calls; null with AuthMode::kNone.
  std::unique_ptr<auth::Authenticator> authenticator;

  // Every call's reactor registers while it lives (its reader threads joined when it ends), so
  // that whoever destroys the environment can wait for the last one, through a lock that
  // ThreadSanitizer sees (gRPC's own Server::Wait is not instrumented).
  void CallStarted();
  void CallEnded();
  // True once no call is alive, false if "timeout" passed first.
  bool WaitForCalls(std::chrono::milliseconds timeout);
  // Calls alive now.
  int live_calls() const;

 private:
  mutable std::mutex calls_mu_;
  std::condition_variable calls_ended_;
  int live_calls_ ABSL_GUARDED_BY(calls_mu_) = 0;
};

// The database side of one call (its db::ReadSession) and, for an export, its export slot (or
// its place in the slots' queue). Cancel may come from any thread at any time (gRPC's OnCancel),
// also before Open or after Close.
class CallSession {
 public:
  // First: the environment and the call's deadline, for everything below.
  void Bind(CallEnvironment* env, grpc::CallbackServerContext* context);

  // Validates "query" and creates the session, bounded by the call's deadline (no I/O, no slot).
  // The query's parameters, or why the call cannot start.
  absl::StatusOr<dhis2::ExportParams> Open(CallEnvironment* env,
                                           grpc::CallbackServerContext* context,
                                           const dvexport::v1::ExportRequest& query);

  // After Bind (before or after Open): authenticates the call from its metadata (authorization) and
  // its client certificate, without blocking: "done" is called exactly once, with OK once the call
  // has an identity (at once with AuthMode::kNone, without one), or with why it has none
  // (Unauthenticated, ResourceExhausted, Unavailable, DeadlineExceeded, Cancelled), on this
  // thread or on an authentication worker. "*record" gets the caller's user and method.
  void Authenticate(grpc::CallbackServerContext* context, CallRecord* record,
                    std::function<void(absl::Status)> done);

  // After Authenticate's OK: the caller, or null with AuthMode::kNone.
  const dhis2::Principal* principal() const {
    return principal_.has_value() ? &*principal_ : nullptr;
  }
  // After Authenticate's OK: whose share of the export slots the call takes: the DHIS2 username,
  // or the peer's address with AuthMode::kNone.
  const std::string& user_key() const { return user_key_; }

  // After Open: asks an export slot for "user" (the caller's DHIS2 username, or its address:
  // auth::PeerAddress), waiting in the queue if none is free; "admitted" and "contended" as
  // ExportSlots::Join's ("admitted" called once with OK when the slot is held, or with why there
  // is none), unless the queue is full, which is returned (ResourceExhausted) without calling it.
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
  CallEnvironment* env_ = nullptr;
  std::chrono::system_clock::time_point deadline_;
  // The pending authentication's ticket (0: none), for Cancel.
  std::atomic<uint64_t> auth_ticket_{0};
  std::optional<dhis2::Principal> principal_;
  std::string user_key_;
  ExportSlots::Ticket ticket_;
  std::mutex mu_;
  std::unique_ptr<db::ReadSession> session_ ABSL_GUARDED_BY(mu_);
};

// absl::Status as the gRPC status a client sees.
grpc::Status ToGrpcStatus(const absl::Status& status);

// The request of a call, parsed from its bytes; InvalidArgument saying what is wrong otherwise
// (CheckRequestBytes).
template <typename Request>
absl::StatusOr<Request> ParseRequest(const grpc::ByteBuffer* buffer) {
  if (buffer == nullptr) return absl::InvalidArgumentError("the call carried no request");
  absl::StatusOr<std::string> bytes = RequestBytes(*buffer);
  if (!bytes.ok()) return bytes.status();
  // Checked first: protobuf would refuse the whole message, without saying why.
  absl::Status checked = CheckRequestBytes(Request::descriptor(), *bytes);
  if (!checked.ok()) return checked;
  Request request;
  if (!request.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request is not a valid ", Request::descriptor()->full_name()));
  }
  return request;
}

// One message of a streaming call, serialized by the service, and the values sent once it is.
struct OutgoingMessage {
  grpc::ByteBuffer bytes;
  int64_t values_so_far = 0;
};

// The common part of ExportFile and StreamDataValues, on gRPC's callback API: the reactor of one
// call and the reader threads that feed it.
//
// Threads: the call's first reader thread opens the ReadSession (connection, transaction, scope),
// plans the reads and starts one more thread per extra reader; each reader reads its slices,
// renders or encodes its values and pushes finished messages into the HandOffQueue. The reactor
// sends them one at a time: the next write starts from OnWriteDone, or from the queue's "ready"
// when a reader hands over a message while no write is in flight. No gRPC thread waits for the
// database or for a reader. The last reader to end writes the document's end (if all went well),
// ends the session (its connections go back to the pool) and frees the export slot; once every
// reader has ended and every message was sent the call finishes with the queue's status.
//
// Stopping: OnCancel (the client cancelled, its deadline passed, or the server shuts down) and a
// failed write stop the queue and cancel the session, whose waits then end within ~100 ms; a
// reader that fails does the same, and its status is the call's.
class StreamingExportCall : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  using Queue = HandOffQueue<OutgoingMessage>;

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 protected:
  // "rpc": the method's short name, for the log.
  StreamingExportCall(CallEnvironment* env, grpc::CallbackServerContext* context, std::string rpc);
  ~StreamingExportCall() override;

  // Starts the export of "query" (or ends the call with "status" if that is an error, or with
  // the query's validation error): asks a slot, and once it has one (now, or later from the
  // thread that frees one) starts the first reader; no thread waits for the slot. Called once, at
  // the end of the derived class's constructor; "query" may be null if "status" is an error.
  void Start(const absl::Status& status, const dvexport::v1::ExportRequest* query);

  // Reader "index": reads its slices through session().Read(index, ...) and pushes its
  // messages (in the order the call's messages must have, which the derived class keeps).
  virtual absl::Status ReadValues(int index) = 0;

  // After every reader succeeded and the transaction ended: pushes the last messages.
  virtual absl::Status WriteEnd() = 0;

  // True when the values must come in the order of one query (ADX's groups): the export then
  // has one reader and is never read in slices.
  virtual bool ReadsInOrder() const { return false; }

  // Producer side: queues a message; false if the call is stopping (the reader should return
  // ClientGoneError()).
  bool Push(OutgoingMessage message) { return queue_.Push(std::move(message)); }

  db::ReadSession& session() { return session_.get(); }
  CallRecord& record() { return record_; }
  const ServiceOptions& options() const { return env_->options; }

 private:
  void RunFirstReader(dhis2::ExportParams params);
  void RunReader(int index);
  // The end of one reader with its status (of ReadValues, or of opening the session); the last
  // one ends the export. Nothing of the call may be touched after it: the call may be gone.
  void ReaderDone(absl::Status status);
  // Starts the next write, or finishes the call, if no write is in flight.
  void Pump();
  // Stops the readers (client gone, call cancelled, a reader failed): "why" is the call's status
  // unless a failure came first.
  void StopReaders(absl::Status why);
  // When the queue stalled (the client stopped reading): stops the readers and ends the RPC with
  // the queue's status, once, before the reader's Close lets the call finish.
  void EndIfStalled();

  CallEnvironment* const env_;
  grpc::CallbackServerContext* const context_;
  const std::chrono::steady_clock::time_point started_;
  CallRecord record_;
  std::string peer_;
  std::string summary_;
  Queue queue_;

  // Opened before the first reader starts; closed by the last reader to end.
  CallSession session_;
  std::atomic<int> running_readers_{1};
  std::atomic<bool> stall_ended_{false};

  std::mutex threads_mu_;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(threads_mu_);

  std::mutex pump_mu_;
  bool writing_ ABSL_GUARDED_BY(pump_mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(pump_mu_) = false;
  OutgoingMessage in_flight_;  // owned by the write in flight
};

// How a reader ends when its messages can no longer be sent.
absl::Status ClientGoneError();

// CountDataValues on gRPC's callback API: the count runs on a thread of its own, never on gRPC's,
// and is bounded like an export's queries (the call's deadline, OnCancel).
class CountCall : public grpc::ServerUnaryReactor {
 public:
  // "request": the parsed request, or why it could not be read. "*response" receives the
  // serialized CountResponse.
  CountCall(CallEnvironment* env, grpc::CallbackServerContext* context,
            const absl::StatusOr<dvexport::v1::ExportRequest>& request, grpc::ByteBuffer* response);

  void OnCancel() override;
  void OnDone() override;

 private:
  void Run(dhis2::ExportParams params);
  void End(absl::Status status);

  CallEnvironment* const env_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;
  const std::chrono::steady_clock::time_point started_;
  CallRecord record_;
  std::string peer_;
  std::string summary_;
  CallSession session_;
  std::mutex thread_mu_;
  std::thread thread_ ABSL_GUARDED_BY(thread_mu_);
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_CALL_H_
