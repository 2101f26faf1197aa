#ifndef DVEXPORT_SERVICE_GRPC_CONNECTION_ACTIVITY_H_
#define DVEXPORT_SERVICE_GRPC_CONNECTION_ACTIVITY_H_

#include <chrono>
#include <cstdint>

namespace dvexport::grpc_door {

// What a graceful shutdown waits for before gRPC closes its connections.
//
// gRPC 1.51 closes a connection (shutdown(2) of both directions, then close) as soon as its last
// call has ended after Server::Shutdown's GOAWAY, without a lingering close. The end of an export
// (its last messages and its trailer) may then still be in the kernel's send queue, waiting for
// a slow client's TCP window. When that client, reading on, sends anything (an HTTP/2
// WINDOW_UPDATE), Linux answers the closed socket with a reset (RFC 1122) and drops the queue:
// the client sees "Connection reset by peer" instead of the end of an export that had finished.
// So the server waits, after its calls ended and before Server::Shutdown, until its connections
// have settled: every peer has acknowledged what it was sent, and has sent nothing for a while
// (it has read what it was sent, its WINDOW_UPDATEs are over).

// Over this process's connected TCP sockets (found through /proc/self/fd): the bytes sent or
// queued that their peers have not acknowledged (SIOCOUTQ), and the connections that received
// data less than "quiet" ago (TCP_INFO's tcpi_last_data_recv).
struct ConnectionActivity {
  int64_t unacknowledged_bytes = 0;
  int recently_active = 0;
  bool settled() const { return unacknowledged_bytes == 0 && recently_active == 0; }
};
// "*readable" is false if /proc/self/fd cannot be read (then nothing was counted).
ConnectionActivity CurrentConnectionActivity(std::chrono::milliseconds quiet, bool* readable);

// Polls every 10 ms until the connections have settled for "quiet" (true; also when they cannot
// be read) or "deadline" has passed (false).
bool WaitForConnectionsToSettle(std::chrono::milliseconds quiet,
                                std::chrono::steady_clock::time_point deadline);

}  // namespace dvexport::grpc_door

#endif  // DVEXPORT_SERVICE_GRPC_CONNECTION_ACTIVITY_H_
