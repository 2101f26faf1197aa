#ifndef DVEXPORT_SERVICE_GRPC_ACCEPT_GUARD_H_
#define DVEXPORT_SERVICE_GRPC_ACCEPT_GUARD_H_

#include <cstdint>

namespace dvexport::grpc_door {

// Keeps gRPC's listener accepting when client connections would exhaust the process's file
// descriptors.
//
// gRPC 1.51's accept loop (src/core/lib/iomgr/tcp_server_posix.cc) stops for good on any accept4
// error other than EAGAIN, EINTR and ECONNABORTED: one "Failed accept4: Too many open files" and
// the port is never served again (later gRPC releases retry; 1.51 has no connection limit to set
// either). This file defines accept4 in the server binary, so that gRPC's calls come here (an
// executable's definition interposes the C library's; the link exports it, see CMakeLists.txt)
// and then go to the C library's. Once GuardAcceptedConnections has been called:
// - a connection accepted on a descriptor at or above the ceiling is closed at once (its client
//   sees the connection end) and the next one is accepted: since the kernel hands out the lowest
//   free descriptor, connections never hold a descriptor at or above the ceiling, which leaves
//   the ones above it to the database pool, cancel requests, metrics and the process itself;
// - EMFILE and ENFILE (the whole table taken anyway) close the oldest waiting connection through
//   a spare descriptor kept for that, so the backlog drains instead of the listener stopping;
// - the network errors accept(2) reports for one pending connection (ENETDOWN, EPROTO, ...) go
//   on to the next connection, as accept(2) says to.
// Other callers of accept4 in the process get the same treatment; the C library's accept (used
// by the metrics server) is not touched.

// Turns the guard on with "ceiling" (see above; at least 1), or moves it. Opens the spare
// descriptor the first time. Thread-safe.
void GuardAcceptedConnections(int ceiling);

// Connections closed by the guard so far (at or above the ceiling, or through the spare).
int64_t ConnectionsDroppedByGuard();

}  // namespace dvexport::grpc_door

#endif  // DVEXPORT_SERVICE_GRPC_ACCEPT_GUARD_H_
