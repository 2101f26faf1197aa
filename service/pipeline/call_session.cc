#include "service/pipeline/call_session.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "service/auth/verify.h"
#include "service/db/connection_pool.h"
#include "service/dhis2/dhis2_version.h"

namespace dvexport::pipeline {

void CallSession::Bind(ExportPipeline* pipeline, std::chrono::system_clock::time_point deadline) {
  pipeline_ = pipeline;
  deadline_ = deadline;
}

absl::StatusOr<dhis2::ExportParams> CallSession::Open(const dvexport::v1::ExportRequest& query,
                                                      dhis2::RuleOrder order) {
  // The rules of the DHIS2 the newest database connection found, or of the version the request
  // pins. A call waits for the version while none is known (Dhis2VersionGate); when it could not
  // be learned (the database cannot be reached), the newest's: the session then checks the rules
  // against the version its connection finds, and a call read by another's is told to try again.
  const std::optional<dhis2::Dhis2Version> version = pipeline_->pool()->dhis2_version();
  const int found = version.has_value() && version->served != 0 ? version->served : 0;
  int rules = found != 0 ? found : dhis2::kNewestServed;
  if (!query.dhis2_version().empty()) {
    absl::StatusOr<int> pinned = dhis2::ParseServedVersion(query.dhis2_version());
    if (!pinned.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("dhis2_version: ", pinned.status().message()));
    }
    if (found != 0 && *pinned > found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dhis2_version: \"", query.dhis2_version(), "\" is newer than the database's DHIS2 ",
          dhis2::VersionName(found), "; a request may pin its version or an older one"));
    }
    rules = *pinned;
  }
  absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest(query, order, rules);
  if (!params.ok()) return params.status();
  params->dhis2_pinned = !query.dhis2_version().empty();
  std::lock_guard<std::mutex> lock(mu_);
  session_ = std::make_unique<db::ReadSession>(pipeline_->pool(), pipeline_->options().session(),
                                               deadline_);
  return params;
}

void CallSession::OpenWithoutQuery() {
  std::lock_guard<std::mutex> lock(mu_);
  session_ = std::make_unique<db::ReadSession>(pipeline_->pool(), pipeline_->options().session(),
                                               deadline_);
}

auth::Credentials CallSession::CredentialsOf(const CallOrigin& origin) const {
  auth::Credentials credentials = origin.credentials;
  // The one place a certificate becomes a DHIS2 user: --client_identities, when the pipeline
  // authenticates (a door only reports what TLS verified).
  credentials.certificate_user.reset();
  const auth::ClientIdentities* identities = pipeline_->options().client_identities;
  if (origin.certificate.has_value() && identities != nullptr) {
    credentials.certificate_user =
        identities->Find(origin.certificate->subject, origin.certificate->uris);
  }
  return credentials;
}

void CallSession::Authenticate(const CallOrigin& origin, CallRecord* record,
                               std::function<void(absl::Status)> done) {
  const std::string client = ClientAddressText(origin);
  record->client = client;
  // A call that arrives while the server drains its running calls before it closes its
  // connections: the client should go to another server, or come back.
  if (!pipeline_->admitting()) {
    done(absl::UnavailableError("the server is shutting down; try again"));
    return;
  }
  if (pipeline_->authenticator() == nullptr) {
    record->auth = "none";
    user_key_ = client;
    done(absl::OkStatus());
    return;
  }
  const auth::Credentials credentials = CredentialsOf(origin);
  const uint64_t ticket = pipeline_->authenticator()->Authenticate(
      credentials, client, deadline_,
      [this, record, tried_user = auth::PresentedUsername(credentials),
       done = std::move(done)](absl::StatusOr<auth::Identity> identity) {
        if (!identity.ok()) {
          // A refused login: who was tried is the log's business (never the password).
          if (absl::IsUnauthenticated(identity.status())) record->tried_user = tried_user;
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
  return pipeline_->slots().Join(&ticket_, std::move(user), deadline_, std::move(admitted),
                                 std::move(contended));
}

void CallSession::Cancel() {
  // First, and without the lock: an abandoned authentication answers (Cancelled) on this thread,
  // and the call's answer to that cancels the session again.
  const uint64_t auth_ticket = auth_ticket_.exchange(0);
  if (auth_ticket != 0 && pipeline_ != nullptr && pipeline_->authenticator() != nullptr) {
    pipeline_->authenticator()->Abandon(auth_ticket);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (session_ != nullptr) session_->Cancel();
  }
  if (pipeline_ != nullptr) pipeline_->slots().Leave(&ticket_);
}

void CallSession::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    session_.reset();
  }
  if (pipeline_ != nullptr) pipeline_->slots().Leave(&ticket_);
}

}  // namespace dvexport::pipeline
