#include "service/pipeline/change_stream_calls.h"

#include <mutex>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/json_string.h"
#include "service/db/change_stream_admin.h"
#include "service/db/change_tracking.h"
#include "service/dhis2/change_token.h"
#include "service/pipeline/call_scope.h"
#include "service/pipeline/call_session.h"
#include "service/pipeline/change_stream_monitor.h"
#include "service/pipeline/export_pipeline.h"

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

// The target DropChangeStream names, from its request: InvalidArgument naming change_token and
// name unless exactly one is given, or naming change_token for a token that is not dvexport's;
// FailedPrecondition naming change_token for a token that names no change stream (an export's
// snapshot). No I/O.
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

// One ListChangeStreams or DropChangeStream: its session, and its thread once authenticated.
class RunningChangeStreamCall final : public ChangeStreamCall {
 public:
  // The call's work on its thread, once authenticated: the response's size in bytes (for the
  // log and the metrics), or why there is none.
  using Work =
      std::function<absl::StatusOr<int64_t>(db::ReadSession&, const db::ChangeStreamCaller&)>;
  // Hands the outcome to the door.
  using Finish = std::function<void(const absl::Status&)>;

  RunningChangeStreamCall(ExportPipeline* pipeline, CallOrigin origin, const char* rpc)
      : origin_(std::move(origin)), scope_(pipeline, origin_, rpc) {
    session_.Bind(pipeline, origin_.deadline);
  }

  // Authenticates, then runs "work" on the call's thread unless "request" (the request's faults)
  // is not OK.
  void Begin(absl::Status request, Work work, Finish finish) {
    work_ = std::move(work);
    finish_ = std::move(finish);
    if (request.ok()) session_.OpenWithoutQuery();
    // Authenticated first, as exports are: a call without an identity learns nothing of its
    // request, nor of the streams.
    session_.Authenticate(origin_, &scope_.record(), [this, request](absl::Status authenticated) {
      if (!authenticated.ok() || !request.ok()) {
        session_.Close();
        End(!authenticated.ok() ? std::move(authenticated) : request);
        return;
      }
      scope_.StartThread(&RunningChangeStreamCall::Run, this);
    });
  }

  void Cancel() override { session_.Cancel(); }

  // For the log: how the stream was named, and the stream dropped (never the token).
  std::string& summary() { return scope_.summary(); }

 private:
  void Run() {
    absl::StatusOr<int64_t> bytes = work_(session_.get(), CallerOf(session_.principal()));
    session_.Close();
    End(std::move(bytes));
  }

  void End(absl::StatusOr<int64_t> bytes) {
    scope_.FinishAnswer(bytes.status(), bytes.ok() ? *bytes : 0);
    finish_(bytes.status());
  }

  const CallOrigin origin_;
  Work work_;
  Finish finish_;
  CallSession session_;
  // Last: its threads are joined before the members above are destroyed.
  CallScope scope_;
};

}  // namespace

std::unique_ptr<ChangeStreamCall> ChangeStreamCall::StartList(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ListChangeStreamsRequest>& request, ListDone done) {
  auto call =
      std::make_unique<RunningChangeStreamCall>(pipeline, std::move(origin), "ListChangeStreams");
  auto response = std::make_shared<dvexport::v1::ListChangeStreamsResponse>();
  RunningChangeStreamCall::Work work =
      [pipeline, response](db::ReadSession& session,
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
  RunningChangeStreamCall::Finish finish = FinishWith(response, std::move(done));
  call->Begin(request.status(), std::move(work), std::move(finish));
  return call;
}

std::unique_ptr<ChangeStreamCall> ChangeStreamCall::StartDrop(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::DropChangeStreamRequest>& request, DropDone done) {
  auto call =
      std::make_unique<RunningChangeStreamCall>(pipeline, std::move(origin), "DropChangeStream");
  absl::StatusOr<db::ChangeStreamDropTarget> target =
      request.ok() ? DropTargetOf(*request)
                   : absl::StatusOr<db::ChangeStreamDropTarget>(request.status());
  if (request.ok()) {
    call->summary() =
        absl::StrCat(",\"by\":", request->change_token().empty() ? "\"name\"" : "\"change_token\"");
  }
  auto response = std::make_shared<dvexport::v1::DropChangeStreamResponse>();
  RunningChangeStreamCall* const self = call.get();
  RunningChangeStreamCall::Work work =
      [self, response, target](db::ReadSession& session,
                               const db::ChangeStreamCaller& caller) -> absl::StatusOr<int64_t> {
    absl::StatusOr<std::string> dropped;
    absl::Status status =
        session.Lookup("dropping the change stream", [&](pqxx::transaction_base& tx) {
          dropped = db::DropChangeStream(tx, *target, caller);
          return dropped.status();
        });
    if (!status.ok()) return status;
    absl::StrAppend(&self->summary(), ",\"stream\":", common::JsonString(*dropped));
    response->set_name(*std::move(dropped));
    return static_cast<int64_t>(response->ByteSizeLong());
  };
  RunningChangeStreamCall::Finish finish = FinishWith(response, std::move(done));
  call->Begin(target.status(), std::move(work), std::move(finish));
  return call;
}

}  // namespace dvexport::pipeline
