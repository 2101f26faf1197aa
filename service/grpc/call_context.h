#ifndef DVEXPORT_SERVICE_GRPC_CALL_CONTEXT_H_
#define DVEXPORT_SERVICE_GRPC_CALL_CONTEXT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "service/encode/wire_check.h"
#include "service/pipeline/export.h"
#include "service/pipeline/export_pipeline.h"

// What every call of the gRPC door shares: where it came from, its request parsed from raw bytes,
// and how a cancelled call's status and a pipeline status reach the client.
namespace dvexport::grpc_door {

// absl::Status as the gRPC status a client sees.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Why a gRPC call that the door saw cancelled ended, for the call log and the metrics:
// DeadlineExceeded if its deadline has passed at "now", else "otherwise" (the client cancelled
// or went away, or the server shut down). The client's deadline reaches the server as a cancel
// (RST_STREAM) that can come a little before the server's own deadline, which is the client's
// plus the request's transit and grpc-timeout's rounding up to three significant digits (< 1%):
// so the deadline counts as passed from kDeadlineSlack + 1% of the call's timeout ("deadline" -
// "arrived") before it.
inline constexpr std::chrono::milliseconds kDeadlineSlack{250};
absl::Status CancelledCallStatus(std::chrono::system_clock::time_point arrived,
                                 std::chrono::system_clock::time_point deadline,
                                 std::chrono::system_clock::time_point now, absl::Status otherwise);

// What the pipeline needs to know of a gRPC call: the peer, the deadline, the `authorization`
// metadata and the client certificate TLS verified, if any.
pipeline::CallOrigin CallOriginOf(grpc::CallbackServerContext* context);

// A peer as gRPC names it: "ipv4:10.0.0.1:5000", "ipv6:[::1]:5000" (gRPC 1.51 writes the
// brackets percent-encoded, "ipv6:%5B::1%5D:5000"); anything else ("unix:...", a scoped IPv6
// address "ipv6:[fe80::1%25eth0]:1", what does not parse) as a peer of another kind, by that name.
pipeline::NetworkPeer ParsePeer(std::string_view grpc_peer);

// The bytes of a request as one string; InvalidArgument if gRPC cannot hand them out.
absl::StatusOr<std::string> RequestBytes(const grpc::ByteBuffer& buffer);

// The request of a call, parsed from its bytes; InvalidArgument saying what is wrong otherwise
// (encode::wire::CheckRequestBytes).
template <typename Request>
absl::StatusOr<Request> ParseRequest(const grpc::ByteBuffer* buffer) {
  if (buffer == nullptr) return absl::InvalidArgumentError("the call carried no request");
  absl::StatusOr<std::string> bytes = RequestBytes(*buffer);
  if (!bytes.ok()) return bytes.status();
  // Checked first: protobuf would refuse the whole message, without saying why.
  absl::Status checked = encode::wire::CheckRequestBytes(Request::descriptor(), *bytes);
  if (!checked.ok()) return checked;
  Request request;
  if (!request.ParseFromString(*bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request is not a valid ", Request::descriptor()->full_name()));
  }
  return request;
}

}  // namespace dvexport::grpc_door

#endif  // DVEXPORT_SERVICE_GRPC_CALL_CONTEXT_H_
