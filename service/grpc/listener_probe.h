#ifndef DVEXPORT_SERVICE_GRPC_LISTENER_PROBE_H_
#define DVEXPORT_SERVICE_GRPC_LISTENER_PROBE_H_

#include <sys/socket.h>

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dvexport::grpc_door {

// Where the server's own gRPC port is reached from inside the process, and whether it speaks TLS.
struct ListenerAddress {
  sockaddr_storage address{};
  socklen_t length = 0;
  bool tls = false;
  std::string name;  // host:port, for messages
};

// The address of "listen" (host:port as --listen takes it) with the bound "port": 127.0.0.1 for
// the wildcards 0.0.0.0 and [::], else the host itself (a name is resolved once, here).
absl::StatusOr<ListenerAddress> ResolveListenerAddress(absl::string_view listen, int port,
                                                       bool tls);

// Opens a new connection to "listener" and waits, at most "timeout" in all, for the first bytes
// that only a process that accept()ed it can send: in plaintext the server's HTTP/2 SETTINGS
// frame (after the client preface this sends), over TLS the first record of the server's
// handshake answering this ClientHello. A TCP connect alone proves nothing: the kernel completes
// it into the listen backlog whether or not anyone accepts. Needs no client certificate (the
// probe closes after the server's first answer, before it would have to present one), so it
// works with mutual TLS too, and makes no call. Unavailable naming what failed otherwise.
absl::Status ProbeListener(const ListenerAddress& listener, std::chrono::milliseconds timeout);

}  // namespace dvexport::grpc_door

#endif  // DVEXPORT_SERVICE_GRPC_LISTENER_PROBE_H_
