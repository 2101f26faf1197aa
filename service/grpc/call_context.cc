#include "service/grpc/call_context.h"

#include <grpc/grpc_security_constants.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "service/auth/authenticator.h"

namespace dvexport::grpc_door {
namespace {

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

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status CancelledCallStatus(std::chrono::system_clock::time_point arrived,
                                 std::chrono::system_clock::time_point deadline,
                                 std::chrono::system_clock::time_point now,
                                 absl::Status otherwise) {
  if (deadline == std::chrono::system_clock::time_point::max()) return otherwise;
  const auto timeout = std::max(deadline - arrived, std::chrono::system_clock::duration::zero());
  if (now + kDeadlineSlack + timeout / 100 < deadline) return otherwise;
  return absl::DeadlineExceededError("the call's deadline passed");
}

pipeline::CallOrigin CallOriginOf(grpc::CallbackServerContext* context,
                                  const pipeline::PipelineOptions& options) {
  pipeline::CallOrigin origin;
  origin.transport = "grpc";
  origin.peer = context->peer();
  origin.peer_ip = auth::PeerAddress(origin.peer);
  origin.deadline = context->deadline();
  const auto& metadata = context->client_metadata();
  for (auto [it, end] = metadata.equal_range("authorization"); it != end; ++it) {
    origin.credentials.authorization.emplace_back(it->second.data(), it->second.size());
  }
  // Only read when the pipeline authenticates (the certificate's properties cost a lookup).
  if (options.auth == pipeline::AuthMode::kDhis2) {
    origin.credentials.certificate_user = CertificateUser(context, options.client_identities);
  }
  // An export is a GET, and a gRPC call carries no Referer (a token's request rules).
  origin.credentials.method = "GET";
  return origin;
}

absl::StatusOr<std::string> RequestBytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) {
    return absl::InvalidArgumentError("the request's bytes could not be read");
  }
  std::string bytes;
  bytes.reserve(buffer.Length());
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

}  // namespace dvexport::grpc_door
