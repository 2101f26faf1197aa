#include "service/auth/refusal_reason.h"

#include "absl/strings/cord.h"

namespace dvexport::auth {
namespace {

constexpr absl::string_view kReasonPayload = "type.googleapis.com/dvexport.auth.RefusalReason";

}  // namespace

absl::Status WithRefusalReason(absl::Status status, std::string_view reason) {
  status.SetPayload(kReasonPayload, absl::Cord(absl::string_view(reason.data(), reason.size())));
  return status;
}

std::string RefusalReason(const absl::Status& status) {
  absl::optional<absl::Cord> reason = status.GetPayload(kReasonPayload);
  return reason ? std::string(*reason) : std::string();
}

}  // namespace dvexport::auth
