#include "service/grpc/call_context.h"

#include <arpa/inet.h>
#include <grpc/grpc_security_constants.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace dvexport::grpc_door {
namespace {

// The client certificate the server verified against --tls_client_ca, if any.
std::optional<pipeline::ClientCertificate> VerifiedCertificate(
    grpc::CallbackServerContext* context) {
  const std::shared_ptr<const grpc::AuthContext> auth_context = context->auth_context();
  if (auth_context == nullptr || !auth_context->IsPeerAuthenticated()) return std::nullopt;
  pipeline::ClientCertificate certificate;
  for (const grpc::string_ref& value :
       auth_context->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME)) {
    certificate.subject.assign(value.data(), value.size());
  }
  for (const grpc::string_ref& value :
       auth_context->FindPropertyValues(GRPC_PEER_URI_PROPERTY_NAME)) {
    certificate.uris.emplace_back(value.data(), value.size());
  }
  return certificate;
}

// "text" up to its last ':' as the address, the rest as the port; false if either is malformed.
bool SplitPort(absl::string_view text, absl::string_view* address, uint16_t* port) {
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) return false;
  uint32_t value = 0;
  if (!absl::SimpleAtoi(text.substr(colon + 1), &value) || value > 65535) return false;
  *address = text.substr(0, colon);
  *port = static_cast<uint16_t>(value);
  return true;
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

pipeline::NetworkPeer ParsePeer(std::string_view grpc_peer) {
  absl::string_view rest(grpc_peer.data(), grpc_peer.size());
  absl::string_view address;
  uint16_t port = 0;
  if (absl::ConsumePrefix(&rest, "ipv4:")) {
    std::array<uint8_t, 4> bytes{};
    if (SplitPort(rest, &address, &port) &&
        inet_pton(AF_INET, std::string(address).c_str(), bytes.data()) == 1) {
      return pipeline::NetworkPeer::Ipv4(bytes, port);
    }
  } else if (absl::ConsumePrefix(&rest, "ipv6:")) {
    const bool bracketed = absl::ConsumePrefix(&rest, "[") || absl::ConsumePrefix(&rest, "%5B");
    std::array<uint8_t, 16> bytes{};
    if (bracketed && SplitPort(rest, &address, &port) &&
        (absl::ConsumeSuffix(&address, "]") || absl::ConsumeSuffix(&address, "%5D")) &&
        inet_pton(AF_INET6, std::string(address).c_str(), bytes.data()) == 1) {
      return pipeline::NetworkPeer::Ipv6(bytes, port);
    }
  }
  return pipeline::NetworkPeer::Other(std::string(grpc_peer));
}

pipeline::CallOrigin CallOriginOf(grpc::CallbackServerContext* context) {
  pipeline::CallOrigin origin;
  origin.transport = "grpc";
  origin.peer = ParsePeer(context->peer());
  origin.deadline = context->deadline();
  const auto& metadata = context->client_metadata();
  for (auto [it, end] = metadata.equal_range("authorization"); it != end; ++it) {
    origin.credentials.authorization.emplace_back(it->second.data(), it->second.size());
  }
  origin.certificate = VerifiedCertificate(context);
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
