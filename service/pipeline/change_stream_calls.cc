#include "service/pipeline/change_stream_calls.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/json_string.h"
#include "service/db/change_tracking.h"
#include "service/dhis2/change_token.h"

namespace dvexport::pipeline {
namespace {

// The caller as the change stream rules see it: with AuthMode::kNone (no principal) user 0, the
// owner id of the streams such a server starts, and no superuser.
db::ChangeStreamCaller CallerOf(const dhis2::Principal* principal) {
  if (principal == nullptr) return {};
  return {.user_id = principal->user_id, .superuser = principal->superuser};
}

// DecodeChangeToken's refusal, for DropChangeStream's field: its messages name changes_since,
// the field of an export.
absl::Status TokenRefusal(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kFailedPrecondition) {
    // A well-formed token of version 1: an export's snapshot.
    return absl::FailedPreconditionError(
        "change_token: the token is of version 1 (an export's snapshot, written by an earlier "
        "dvexport): it names no change stream; drop a stream by its name (ListChangeStreams)");
  }
  absl::string_view message = status.message();
  absl::ConsumePrefix(&message, "changes_since: ");
  return absl::Status(status.code(), absl::StrCat("change_token: ", message));
}

// The call's end: "done" with the response "work" filled, or with the call's failure.
template <typename Response, typename Done>
std::function<void(const absl::Status&)> FinishWith(std::shared_ptr<Response> response, Done done) {
  return [response = std::move(response), done = std::move(done)](const absl::Status& status) {
    if (status.ok()) {
      done(std::move(*response));
    } else {
      done(status);
    }
  };
}

}  // namespace

absl::StatusOr<db::ChangeStreamDropTarget> DropTargetOf(
    const dvexport::v1::DropChangeStreamRequest& request) {
  const bool by_token = !request.change_token().empty();
  const bool by_name = !request.name().empty();
  if (by_token && by_name) {
    return absl::InvalidArgumentError(
        "change_token and name: give one of the two, not both (a stream's change token, or its "
        "name as ListChangeStreams shows it)");
  }
  if (!by_token && !by_name) {
    return absl::InvalidArgumentError(
        "change_token or name: give one of the two (a stream's change token, or its name as "
        "ListChangeStreams shows it)");
  }
  db::ChangeStreamDropTarget target;
  if (by_name) {
    target.name = request.name();
    return target;
  }
  absl::StatusOr<dhis2::ChangeToken> token =
      dhis2::DecodeChangeToken(absl::string_view(request.change_token()));
  if (!token.ok()) return TokenRefusal(token.status());
  if (token->kind != dhis2::ChangeTokenKind::kStream) {
    return absl::FailedPreconditionError(
        "change_token: the token is an export's snapshot, not a position in a change stream: it "
        "names no stream; drop a stream by its name (ListChangeStreams)");
  }
  target.token = *token;
  return target;
}

std::unique_ptr<ChangeStreamCall> ChangeStreamCall::StartList(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ListChangeStreamsRequest>& request, ListDone done) {
  std::unique_ptr<ChangeStreamCall> call(
      new ChangeStreamCall(pipeline, std::move(origin), "ListChangeStreams"));
  auto response = std::make_shared<dvexport::v1::ListChangeStreamsResponse>();
  Work work = [pipeline, response](
                  db::ReadSession& session,
                  const db::ChangeStreamCaller& caller) -> absl::StatusOr<int64_t> {
    db::ChangeStreamListing listing;
    absl::Status status =
        session.Lookup("listing the change streams", [&](pqxx::transaction_base& tx) {
          listing = db::ListChangeStreams(tx, pipeline->options().change_publication, caller);
          return absl::OkStatus();
        });
    if (!status.ok()) return status;
    response->set_token_kind(listing.support.available ? "stream" : "snapshot");
    response->set_token_kind_reason(listing.support.reason);
    for (const db::ListedChangeStream& listed : listing.streams) {
      dvexport::v1::ChangeStream* stream = response->add_streams();
      stream->set_name(listed.slot.name);
      stream->set_owner_uid(listed.owner_uid);
      stream->set_owner_username(listed.owner_username);
      stream->set_confirmed_lsn(db::FormatLsn(listed.slot.confirmed_lsn));
      stream->set_retained_wal_bytes(listed.slot.retained_wal_bytes);
      stream->set_wal_status(listed.slot.wal_status);
      stream->set_active(listed.slot.active);
      stream->set_idle_seconds(pipeline->change_streams().IdleSeconds(listed.slot.name));
    }
    return static_cast<int64_t>(response->ByteSizeLong());
  };
  Finish finish = FinishWith(response, std::move(done));
  call->Begin(request.status(), std::move(work), std::move(finish));
  return call;
}

std::unique_ptr<ChangeStreamCall> ChangeStreamCall::StartDrop(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::DropChangeStreamRequest>& request, DropDone done) {
  std::unique_ptr<ChangeStreamCall> call(
      new ChangeStreamCall(pipeline, std::move(origin), "DropChangeStream"));
  absl::StatusOr<db::ChangeStreamDropTarget> target =
      request.ok() ? DropTargetOf(*request)
                   : absl::StatusOr<db::ChangeStreamDropTarget>(request.status());
  if (request.ok()) {
    call->summary_ =
        absl::StrCat(",\"by\":", request->change_token().empty() ? "\"name\"" : "\"change_token\"");
  }
  auto response = std::make_shared<dvexport::v1::DropChangeStreamResponse>();
  ChangeStreamCall* const self = call.get();
  Work work = [self, response, target](
                  db::ReadSession& session,
                  const db::ChangeStreamCaller& caller) -> absl::StatusOr<int64_t> {
    absl::StatusOr<std::string> dropped;
    absl::Status status =
        session.Lookup("dropping the change stream", [&](pqxx::transaction_base& tx) {
          dropped = db::DropChangeStream(tx, *target, caller);
          return dropped.status();
        });
    if (!status.ok()) return status;
    absl::StrAppend(&self->summary_, ",\"stream\":", common::JsonString(*dropped));
    response->set_name(*std::move(dropped));
    return static_cast<int64_t>(response->ByteSizeLong());
  };
  Finish finish = FinishWith(response, std::move(done));
  call->Begin(target.status(), std::move(work), std::move(finish));
  return call;
}

ChangeStreamCall::ChangeStreamCall(ExportPipeline* pipeline, CallOrigin origin, const char* rpc)
    : pipeline_(pipeline), origin_(std::move(origin)), started_(std::chrono::steady_clock::now()) {
  record_.rpc = rpc;
  record_.transport = origin_.transport;
  pipeline_->CallStarted();
}

ChangeStreamCall::~ChangeStreamCall() {
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

void ChangeStreamCall::Begin(absl::Status request, Work work, Finish finish) {
  work_ = std::move(work);
  finish_ = std::move(finish);
  session_.Bind(pipeline_, origin_.deadline);
  if (request.ok()) session_.OpenWithoutQuery();
  // Authenticated first, as exports are: a call without an identity learns nothing of its
  // request, nor of the streams.
  session_.Authenticate(origin_, &record_, [this, request](absl::Status authenticated) {
    if (!authenticated.ok() || !request.ok()) {
      session_.Close();
      End(!authenticated.ok() ? std::move(authenticated) : request);
      return;
    }
    std::lock_guard<std::mutex> lock(thread_mu_);
    thread_ = std::thread(&ChangeStreamCall::Run, this);
  });
}

void ChangeStreamCall::Run() {
  absl::StatusOr<int64_t> bytes = work_(session_.get(), CallerOf(session_.principal()));
  session_.Close();
  End(std::move(bytes));
}

void ChangeStreamCall::End(absl::StatusOr<int64_t> bytes) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (bytes.ok()) {
    record_.first_byte_seconds = seconds;
    record_.bytes = *bytes;
  }
  record_.seconds = seconds;
  record_.code = absl::StatusCodeToString(bytes.status().code());
  if (pipeline_->log() != nullptr) {
    pipeline_->log()->Write(record_, origin_.peer, summary_, bytes.status());
  }
  finish_(bytes.status());
}

}  // namespace dvexport::pipeline
