#include "service/http/export_response.h"

#include "absl/strings/str_cat.h"
#include "service/http/response_head.h"

namespace dvexport::http {
namespace {

// The status an export ends with when the door refused the request itself (its route, method or
// parameters) and the pipeline only authenticated the caller: the connection then answers with
// the refusal it kept. Compared by value; the message is the call log's.
absl::Status DoorRefusal(const HttpResponse& response) {
  return absl::FailedPreconditionError(
      absl::StrCat("refused by the HTTP door with ", response.status, " after authentication"));
}

}  // namespace

absl::Status HeadAnswered() {
  return absl::CancelledError("HEAD: the headers were sent, the body is not");
}

absl::StatusOr<dvexport::v1::ExportFileRequest> ExportResponse::Start(
    RoutedRequest routed, const ResponseFraming& framing, bool token_credential) {
  framing_ = framing;
  token_credential_ = token_credential;
  message_format_ = routed.message_format;
  head_sent_ = false;
  door_refusal_.reset();
  ok_headers_.clear();
  if (routed.request.has_value()) {
    ok_headers_ = std::move(routed.request->headers);
    return std::move(routed.request->export_request);
  }
  door_refusal_ = std::move(routed.refusal);
  if (!door_refusal_.has_value()) {
    door_refusal_ = WebMessageResponse(500, "The request has no route", "", message_format_);
  }
  return DoorRefusal(*door_refusal_);
}

ExportResponse::Write ExportResponse::Frame(std::string bytes, bool trailer,
                                            std::string_view change_token, ResponseBytes* out) {
  out->head.clear();
  out->body.clear();
  out->tail = {};
  if (!head_sent_) {
    head_sent_ = true;
    out->head = ExportHead(ok_headers_, change_token, framing_.version, framing_.keep_alive);
    if (framing_.head_only) return Write::kHeadOnly;
  }
  if (framing_.version < 11) {
    // The trailer's bytes (the gRPC door's ExportTrailer) are not part of the file.
    if (!trailer) out->body = std::move(bytes);
    return out->head.empty() && out->body.empty() ? Write::kNothing : Write::kBytes;
  }
  if (trailer) {
    out->head += "0\r\n\r\n";
  } else if (!bytes.empty()) {
    // A chunk of size 0 would end the body: an empty chunk of the export is not one on the wire.
    absl::StrAppend(&out->head, absl::Hex(bytes.size()), "\r\n");
    out->body = std::move(bytes);
    out->tail = "\r\n";
  }
  return out->head.empty() ? Write::kNothing : Write::kBytes;
}

ExportResponse::Ending ExportResponse::Finish(const absl::Status& status, HttpResponse* response) {
  if (!head_sent_ && door_refusal_.has_value() && status == DoorRefusal(*door_refusal_)) {
    // Authenticated; refused by the door.
    *response = *std::move(door_refusal_);
    door_refusal_.reset();
    return Ending::kRespond;
  }
  if (!head_sent_) {
    // Refused (or cancelled) before its first chunk.
    *response = RefusalResponse(
        status.ok() ? absl::InternalError("the export ended without output") : status,
        message_format_, token_credential_);
    return Ending::kRespond;
  }
  // A HEAD was cancelled on purpose once its head was sent.
  if (framing_.head_only || status.ok()) return Ending::kNextRequest;
  return Ending::kClose;
}

}  // namespace dvexport::http
