#include "service/server/export_call.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security_constants.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace dvexport::server {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::Status StalledClientError(const ServiceOptions& options) {
  return absl::DeadlineExceededError(absl::StrCat(
      "the client read nothing for ", options.stall_timeout.count() / 1000.0,
      " s after it could have read what it had been sent at ", options.stall_min_rate / 1024.0,
      " KiB/s (the server's --stall_timeout_s and --stall_min_rate_kib_s); the export was "
      "stopped"));
}

absl::Status ContendedStallError(const ServiceOptions& options) {
  return absl::DeadlineExceededError(absl::StrCat(
      "the client read nothing for ", options.stall_timeout_contended.count() / 1000.0,
      " s while exports of other users waited for an export slot (the server's "
      "--stall_timeout_contended_s); the export was stopped to give its slot to them"));
}

absl::Status CallCancelledError() {
  return absl::CancelledError("the call was cancelled (by the client, its deadline or shutdown)");
}

// Joins "thread" unless it is the calling one, which is left to end on its own.
void JoinUnlessSelf(std::thread& thread) {
  if (!thread.joinable()) return;
  if (thread.get_id() == std::this_thread::get_id()) {
    thread.detach();
  } else {
    thread.join();
  }
}

// Hands the call's record to the log and the metrics, as the call ends with "status".
void Report(CallEnvironment* env, std::chrono::steady_clock::time_point started,
            const std::string& peer, const std::string& summary, const grpc::Status& status,
            CallRecord* record) {
  record->seconds = SecondsSince(started);
  record->code = absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));
  if (env->log != nullptr) env->log->Write(*record, peer, summary, status);
}

// One message of the call has been handed to gRPC: "values_so_far" as the call's values (the
// trailer's or the batch's count, or the count a CountDataValues answers), its "bytes", and the
// time to the first one.
void RecordMessage(int64_t values_so_far, size_t bytes,
                   std::chrono::steady_clock::time_point started, CallRecord* record) {
  if (record->first_byte_seconds < 0) record->first_byte_seconds = SecondsSince(started);
  record->values = values_so_far;
  record->bytes += static_cast<int64_t>(bytes);
}

// The DHIS2 username the call's verified client certificate stands for (--client_identities);
// nullopt without a certificate or when it is not listed.
std::optional<std::string> CertificateUser(grpc::CallbackServerContext* context,
                                           const auth::ClientIdentities* identities) {
  if (identities == nullptr) return std::nullopt;
  const std::shared_ptr<const grpc::AuthContext> auth_context = context->auth_context();
  // Only a certificate the server verified against --tls_client_ca counts.
  if (auth_context == nullptr || !auth_context->IsPeerAuthenticated()) return std::nullopt;
  std::string subject;
  for (const grpc::string_ref& value :
       auth_context->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME)) {
    subject.assign(value.data(), value.size());
  }
  std::vector<std::string> uris;
  for (const grpc::string_ref& value :
       auth_context->FindPropertyValues(GRPC_PEER_URI_PROPERTY_NAME)) {
    uris.emplace_back(value.data(), value.size());
  }
  return identities->Find(subject, uris);
}

}  // namespace

void CallEnvironment::CallStarted() {
  std::lock_guard<std::mutex> lock(calls_mu_);
  ++live_calls_;
}

void CallEnvironment::CallEnded() {
  std::lock_guard<std::mutex> lock(calls_mu_);
  if (--live_calls_ == 0) calls_ended_.notify_all();
}

bool CallEnvironment::WaitForCalls(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(calls_mu_);
  return calls_ended_.wait_for(lock, timeout, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(calls_mu_) {
    return live_calls_ == 0;
  });
}

int CallEnvironment::live_calls() const {
  std::lock_guard<std::mutex> lock(calls_mu_);
  return live_calls_;
}

absl::StatusOr<dhis2::ExportParams> CallSession::Open(CallEnvironment* env,
                                                      grpc::CallbackServerContext* context,
                                                      const dvexport::v1::ExportRequest& query) {
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(query);
  if (!params.ok()) return params.status();
  env_ = env;
  deadline_ = context->deadline();
  std::lock_guard<std::mutex> lock(mu_);
  session_ = std::make_unique<db::ReadSession>(env->pool, env->options.session(), deadline_);
  return params;
}

void CallSession::Bind(CallEnvironment* env, grpc::CallbackServerContext* context) {
  env_ = env;
  deadline_ = context->deadline();
}

void CallSession::Authenticate(grpc::CallbackServerContext* context, CallRecord* record,
                               std::function<void(absl::Status)> done) {
  const std::string peer_ip = auth::PeerAddress(context->peer());
  if (env_->authenticator == nullptr) {
    record->auth = "none";
    user_key_ = peer_ip;
    done(absl::OkStatus());
    return;
  }
  auth::Credentials credentials;
  const auto& metadata = context->client_metadata();
  for (auto [it, end] = metadata.equal_range("authorization"); it != end; ++it) {
    credentials.authorization.emplace_back(it->second.data(), it->second.size());
  }
  credentials.certificate_user = CertificateUser(context, env_->options.client_identities);
  const uint64_t ticket = env_->authenticator->Authenticate(
      credentials, peer_ip, deadline_,
      [this, record, done = std::move(done)](absl::StatusOr<auth::Identity> identity) {
        if (!identity.ok()) {
          done(identity.status());
          return;
        }
        record->auth = dhis2::AuthMethodName(identity->principal.method);
        record->user = identity->principal.username;
        record->token_uid = identity->principal.token_uid;
        user_key_ = identity->principal.username;
        principal_ = std::move(identity->principal);
        done(absl::OkStatus());
      });
  auth_ticket_.store(ticket);
}

absl::Status CallSession::AwaitSlot(std::string user, std::function<void(absl::Status)> admitted,
                                    std::function<void(bool)> contended) {
  return env_->slots->Join(&ticket_, std::move(user), deadline_, std::move(admitted),
                           std::move(contended));
}

void CallSession::Cancel() {
  // First, and without the lock: an abandoned authentication answers (Cancelled) on this thread,
  // and the call's answer to that cancels the session again.
  const uint64_t auth_ticket = auth_ticket_.exchange(0);
  if (auth_ticket != 0 && env_ != nullptr && env_->authenticator != nullptr) {
    env_->authenticator->Abandon(auth_ticket);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (session_ != nullptr) session_->Cancel();
  }
  if (env_ != nullptr) env_->slots->Leave(&ticket_);
}

void CallSession::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    session_.reset();
  }
  if (env_ != nullptr) env_->slots->Leave(&ticket_);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status ClientGoneError() {
  return absl::CancelledError("the client went away; the export was stopped");
}

StreamingExportCall::StreamingExportCall(CallEnvironment* env, grpc::CallbackServerContext* context,
                                         std::string rpc)
    : env_(env),
      context_(context),
      started_(std::chrono::steady_clock::now()),
      peer_(context->peer()),
      queue_(/*capacity=*/4, /*producers=*/1, [this] { Pump(); }, env->options.stall_timeout,
             StalledClientError(env->options),
             {.bytes_per_second = static_cast<double>(env->options.stall_min_rate),
              .max_bytes = static_cast<size_t>(env->options.stall_max_unread)},
             {.timeout = env->options.stall_timeout_contended,
              .status = ContendedStallError(env->options)}) {
  record_.rpc = std::move(rpc);
  env_->CallStarted();
}

StreamingExportCall::~StreamingExportCall() = default;

void StreamingExportCall::Start(const absl::Status& status,
                                const dvexport::v1::ExportRequest* query) {
  session_.Bind(env_, context_);
  if (status.ok()) summary_ = SummarizeRequest(*query);
  const absl::StatusOr<dhis2::ExportParams> params =
      status.ok() ? session_.Open(env_, context_, *query)
                  : absl::StatusOr<dhis2::ExportParams>(status);
  // Authenticated first, as DHIS2 authenticates before it reads a request: a caller without an
  // identity is told only that, whatever it sent, never holds a slot, and is refused before the
  // first byte.
  session_.Authenticate(context_, &record_, [this, params](absl::Status authenticated) {
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
          std::lock_guard<std::mutex> lock(threads_mu_);
          threads_.emplace_back(&StreamingExportCall::RunFirstReader, this, params);
        },
        // Under the slots' lock: the queue takes only its own.
        [this](bool contended) { queue_.SetContended(contended); });
    if (!queued.ok()) ReaderDone(std::move(queued));
  });
}

void StreamingExportCall::RunFirstReader(dhis2::ExportParams params) {
  absl::Status status = session().Begin(params, session_.principal());
  absl::StatusOr<int> readers = 1;
  if (status.ok() && !ReadsInOrder()) {
    // Extra connections only where the pool keeps one for every export that may still start.
    const int keep_available =
        std::max(0, env_->options.max_concurrent_exports - env_->slots->running());
    readers = session().PlanReads(keep_available);
    status = readers.status();
  }
  if (status.ok() && *readers > 1) {
    env_->sliced_exports.fetch_add(1);
    running_readers_.fetch_add(*readers - 1);
    queue_.AddProducers(*readers - 1);
    std::lock_guard<std::mutex> lock(threads_mu_);
    for (int i = 1; i < *readers; ++i) {
      threads_.emplace_back(&StreamingExportCall::RunReader, this, i);
    }
  }
  if (status.ok()) status = ReadValues(0);
  ReaderDone(std::move(status));
}

void StreamingExportCall::RunReader(int index) { ReaderDone(ReadValues(index)); }

void StreamingExportCall::ReaderDone(absl::Status status) {
  // A failure stops the others first, so that its status, not theirs, is the call's.
  if (!status.ok()) StopReaders(status);
  if (running_readers_.fetch_sub(1) == 1) {
    // The last reader: every value is queued.
    if (status.ok() && !queue_.stopped()) {
      status = session().Finish();
      if (status.ok()) status = WriteEnd();
    }
    session_.Close();
    // The database is done with; the call ends once the client has taken the last messages, or
    // when it takes nothing for the stall timeout.
    if (status.ok()) queue_.WaitUntilSent();
  }
  EndIfStalled();
  queue_.Close(std::move(status));
}

void StreamingExportCall::StopReaders(absl::Status why) {
  queue_.Stop(std::move(why));
  session_.Cancel();
}

void StreamingExportCall::EndIfStalled() {
  if (!queue_.stalled() || stall_ended_.exchange(true)) return;
  const absl::Status status = queue_.status();
  record_.stall = queue_.contended_stall() ? "stall_timeout_contended" : "stall_timeout";
  StopReaders(status);
  // A stalled client also holds back the status that Finish would send after the messages: the
  // RPC is cancelled with it instead (OnWriteDone(false) and OnCancel follow).
  grpc_call_cancel_with_status(context_->c_call(), static_cast<grpc_status_code>(status.code()),
                               std::string(status.message()).c_str(), nullptr);
}

void StreamingExportCall::Pump() {
  bool finish = false;
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    if (writing_ || finishing_) return;
    switch (queue_.TryPop(&in_flight_)) {
      case Queue::Next::kItem:
        writing_ = true;
        break;
      case Queue::Next::kEmpty:
        return;
      case Queue::Next::kDone:
        finishing_ = true;
        finish = true;
        break;
    }
  }
  if (finish) {
    // Reported before the status leaves, so that a client that has its status finds the call in
    // the log and the metrics.
    const grpc::Status status = ToGrpcStatus(queue_.status());
    Report(env_, started_, peer_, summary_, status, &record_);
    Finish(status);
    return;
  }
  RecordMessage(in_flight_.values_so_far, in_flight_.bytes.Length(), started_, &record_);
  StartWrite(&in_flight_.bytes);
}

void StreamingExportCall::OnWriteDone(bool ok) {
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    writing_ = false;
    bytes = in_flight_.bytes.Length();
  }
  // The write completed once the transport took the message within the client's flow-control
  // window (chttp2 calls back when its last byte is framed, not when the client reads it).
  if (ok) queue_.Sent(bytes);
  if (!ok) StopReaders(ClientGoneError());
  Pump();
}

void StreamingExportCall::OnCancel() { StopReaders(CallCancelledError()); }

void StreamingExportCall::OnDone() {
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    for (std::thread& thread : threads_) JoinUnlessSelf(thread);
  }
  CallEnvironment* const env = env_;
  delete this;
  env->CallEnded();
}

CountCall::CountCall(CallEnvironment* env, grpc::CallbackServerContext* context,
                     const absl::StatusOr<dvexport::v1::ExportRequest>& request,
                     grpc::ByteBuffer* response)
    : env_(env),
      context_(context),
      response_(response),
      started_(std::chrono::steady_clock::now()),
      peer_(context->peer()),
      summary_(request.ok() ? SummarizeRequest(*request) : "") {
  record_.rpc = "CountDataValues";
  env_->CallStarted();
  session_.Bind(env_, context_);
  const absl::StatusOr<dhis2::ExportParams> params =
      request.ok() ? session_.Open(env_, context_, *request)
                   : absl::StatusOr<dhis2::ExportParams>(request.status());
  // Authenticated first, as exports are (StreamingExportCall::Start).
  session_.Authenticate(context_, &record_, [this, params](absl::Status authenticated) {
    if (!authenticated.ok() || !params.ok()) {
      session_.Close();
      End(!authenticated.ok() ? std::move(authenticated) : params.status());
      return;
    }
    std::lock_guard<std::mutex> lock(thread_mu_);
    thread_ = std::thread(&CountCall::Run, this, *params);
  });
}

void CountCall::Run(dhis2::ExportParams params) {
  db::ReadSession& session = session_.get();
  absl::Status status = session.Begin(params, session_.principal());
  absl::StatusOr<int64_t> count = status.ok() ? session.Count() : status;
  status = count.status();
  if (status.ok()) status = session.Finish();
  if (status.ok()) {
    dvexport::v1::CountResponse response;
    response.set_count(*count);
    bool own_buffer = false;
    grpc::Status serialized = grpc::SerializationTraits<dvexport::v1::CountResponse>::Serialize(
        response, response_, &own_buffer);
    if (serialized.ok()) {
      RecordMessage(*count, response_->Length(), started_, &record_);
    } else {
      status = absl::InternalError("cannot serialize the count");
    }
  }
  session_.Close();
  End(std::move(status));
}

void CountCall::End(absl::Status status) {
  const grpc::Status grpc_status = ToGrpcStatus(status);
  Report(env_, started_, peer_, summary_, grpc_status, &record_);
  Finish(grpc_status);
}

void CountCall::OnCancel() { session_.Cancel(); }

void CountCall::OnDone() {
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    JoinUnlessSelf(thread_);
  }
  CallEnvironment* const env = env_;
  delete this;
  env->CallEnded();
}

}  // namespace dvexport::server
