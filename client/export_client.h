#ifndef DVEXPORT_CLIENT_EXPORT_CLIENT_H_
#define DVEXPORT_CLIENT_EXPORT_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/buffered_fd_writer.h"
#include "client/credentials.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace dvexport::client {

// How far an export has come.
struct ExportProgress {
  // Data values encoded so far, as the server reports them.
  int64_t values = 0;
  // Bytes of the file received and written so far.
  int64_t file_bytes = 0;
};

struct ExportOptions {
  // Called on the exporting thread after each message received; may be empty.
  std::function<void(const ExportProgress&)> on_progress;
  // Deadline for the whole export, all attempts, from the call on; zero
  // means none. It bounds writes to a FIFO, a pipe or stdout that its reader
  // does not take too (DEADLINE_EXCEEDED), as Cancel() does (CANCELLED).
  std::chrono::milliseconds timeout{0};
  // Attempts of a whole export, at most: an export that fails ABORTED (a
  // read replica's recovery conflict), or UNAVAILABLE (the server or its
  // database went away) after the server's first response, is made again from
  // the start, its temporary file emptied first, after a wait of
  // "retry_backoff", doubled at each further attempt (at most 30 s), each
  // randomized by +-20%. 1 turns this off. An output that cannot take bytes
  // back (ExportToFd, a character device, a FIFO) is only written again while
  // nothing was written to it. Before the first response, the channel's retry
  // policy applies (ChannelOptions::max_attempts); once an export is made
  // again (the server went away), UNAVAILABLE before the first response (the
  // server is not back yet: its reconnect was refused, also after the
  // channel's retries) is worth the next attempt too, and each further
  // attempt first resets the channel's reconnect backoff, so that it really
  // connects again instead of failing at once while gRPC's backoff runs.
  int max_attempts = 4;
  std::chrono::milliseconds retry_backoff{1000};
  // Called on the exporting thread before each wait for another attempt, with
  // the failure, the number of the attempt to come and the wait; may be empty.
  std::function<void(const absl::Status& failure, int next_attempt, std::chrono::milliseconds wait)>
      on_retry;
  // The DHIS2 identity every attempt carries as call credentials (see
  // CallCredentialsSpec); empty: none. Invalid credentials fail the export
  // with INVALID_ARGUMENT before any call.
  CallCredentialsSpec credentials;
  // ExportToFile into a regular file: the write-back range (see
  // WriteLimits::write_back_bytes); 0: everything is written by the final
  // fsync. Ignored for a FIFO, a device, a pipe or a socket.
  int64_t write_back_bytes = kDefaultWriteBackBytes;
};

// Options of StreamDataValues, CountDataValues and Health.
struct CallOptions {
  // Deadline for the whole call, from the call on; zero means none.
  std::chrono::milliseconds timeout{0};
  // The DHIS2 identity of StreamDataValues and CountDataValues, as in
  // ExportOptions. Health never sends it: the server answers health checks
  // without an identity, and a secret is not sent where it is not needed.
  CallCredentialsSpec credentials;
};

// Called with each batch of StreamDataValues, in order, on the calling
// thread; the batch is only valid during the call. Returning false stops the
// stream (StreamDataValues then returns CANCELLED).
using BatchCallback = std::function<bool(const dvexport::v1::DataValueBatch&)>;

// The serving status grpc.health.v1.Health reports.
using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

// A verified, complete export.
struct ExportSummary {
  int64_t values = 0;
  // Bytes of the file as written (compressed, if it is).
  int64_t file_bytes = 0;
  // Bytes of the JSON or CSV before compression.
  int64_t uncompressed_bytes = 0;
  // Wall time of the whole export, from the call to the file in place.
  double seconds = 0;
  // Attempts made (1 unless the export was made again, see ExportOptions).
  int attempts = 1;
  // ExportToFile wrote the target itself, a character device or a FIFO, and
  // not a temporary file: the bytes matched the trailer only once all of them
  // were written.
  bool in_place = false;
  // The trailer's change_token: pass it as the query's changes_since to get
  // only what changed since this export (docs/SYNC.md). Empty for a limited
  // export.
  std::string change_token;
};

// Returns a channel to "target" (host:port) with insecure credentials that
// accepts messages of up to 64 MiB, with the retry policy of ChannelOptions{}.
std::shared_ptr<grpc::Channel> CreateChannel(const std::string& target);

// How CreateChannel secures the connection (TLS files all empty: plaintext)
// and retries calls.
struct ChannelOptions {
  // PEM file of the CA certificates that sign the server's certificate;
  // turns TLS on. Empty with a client certificate: the system's roots.
  std::string tls_ca_file;
  // PEM files of a client certificate and its key, for servers that require
  // mutual TLS; they turn TLS on too.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Attempts gRPC makes of each call (DataValueExport's methods and health
  // checks) that fails UNAVAILABLE (the server cannot be reached) or
  // RESOURCE_EXHAUSTED (it is too busy) before the server's first response:
  // gRPC's service-config retry policy, with backoffs of 0.1 s, 0.2 s, 0.4 s,
  // 0.8 s (+-20%). 1 to 5 (gRPC's limit); 1 turns retries off.
  int max_attempts = 4;
};

// The most attempts ChannelOptions::max_attempts allows (gRPC's limit).
inline constexpr int kMaxCallAttempts = 5;

// As above, over TLS when "options" asks for it. InvalidArgument if a TLS file
// cannot be read or is not what it must be (the message names the file and
// what is wrong: not PEM, no certificate, a key that does not match the
// certificate), if only one of certificate and key is given, or if
// max_attempts is out of range.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateChannel(const std::string& target,
                                                             const ChannelOptions& options);

// Calls DataValueExport.ExportFile and writes the file it streams. A file is
// only reported written when the stream ended with its trailer and the bytes
// received match the trailer's length and CRC-32.
//
// Errors keep the gRPC code and message of a failed call; an incomplete or
// corrupt stream is DATA_LOSS; a failed write carries the errno text and the
// path. The library never changes signal dispositions: a program writing to a
// pipe or under RLIMIT_FSIZE should ignore SIGPIPE and SIGXFSZ, so that such
// writes fail with EPIPE and EFBIG instead of killing it.
//
// Thread-safe: calls may run concurrently on one client.
class ExportClient {
 public:
  explicit ExportClient(std::shared_ptr<grpc::Channel> channel);
  ~ExportClient();

  ExportClient(const ExportClient&) = delete;
  ExportClient& operator=(const ExportClient&) = delete;

  // Writes the export to "path" through a temporary file beside it that is
  // renamed over "path" once the export is complete and synced; the summary
  // carries the export's change token (request.query.changes_since asks for
  // only the changes since an earlier one). On any
  // failure "path" is left as it was (absent, or the old file byte for byte)
  // and the temporary file is removed. A character device or FIFO at "path"
  // is written in place instead (see ReplacementFile): a failure then cannot
  // take back what was written, and the message says how much was.
  absl::StatusOr<ExportSummary> ExportToFile(const dvexport::v1::ExportFileRequest& request,
                                             const std::string& path,
                                             const ExportOptions& options = {});

  // Writes the export to "fd" (a pipe, a terminal, stdout), which stays open
  // and is not synced. Bytes written before a failure cannot be taken back:
  // the caller must treat the output as unusable unless this returns OK.
  absl::StatusOr<ExportSummary> ExportToFd(const dvexport::v1::ExportFileRequest& request, int fd,
                                           const ExportOptions& options = {});

  // Calls DataValueExport.StreamDataValues and hands each batch to
  // "on_batch". Returns the number of values once the stream has ended with
  // its last batch (last = true) and every batch's values_so_far agreed with
  // the values received; then "*change_token", if not null, is the last
  // batch's change_token (pass it as changes_since for what changed since;
  // request.changes_since asks for the changes since an earlier one). Errors
  // keep the gRPC code and message of a failed call; a stream that ends
  // without its last batch, or sends anything after it, is DATA_LOSS. Values
  // handed out before a failure cannot be taken back.
  absl::StatusOr<int64_t> StreamDataValues(const dvexport::v1::ExportRequest& request,
                                           const BatchCallback& on_batch,
                                           const CallOptions& options = {},
                                           std::string* change_token = nullptr);

  // Calls DataValueExport.CountDataValues: the number of values the request
  // would export.
  absl::StatusOr<int64_t> CountDataValues(const dvexport::v1::ExportRequest& request,
                                          const CallOptions& options = {});

  // Calls DataValueExport.ListChangeStreams: the change streams (docs/SYNC.md) the caller
  // started, every one for a DHIS2 superuser, and the kind of change token the database gives.
  absl::StatusOr<dvexport::v1::ListChangeStreamsResponse> ListChangeStreams(
      const CallOptions& options = {});

  // Calls DataValueExport.DropChangeStream for the stream "request" names (its change_token, or
  // its name); returns the dropped slot's name. Errors keep the server's code and message:
  // NOT_FOUND, PERMISSION_DENIED (another user's stream), ABORTED (a delta reads it right now),
  // INVALID_ARGUMENT and FAILED_PRECONDITION naming the field at fault.
  absl::StatusOr<std::string> DropChangeStream(const dvexport::v1::DropChangeStreamRequest& request,
                                               const CallOptions& options = {});

  // Calls grpc.health.v1.Health/Check for "service" ("" is the server as a
  // whole, "dvexport.v1.DataValueExport" the export service).
  absl::StatusOr<ServingStatus> Health(const std::string& service = "",
                                       const CallOptions& options = {});

  // Cancels the calls in progress (exports, streams, counts, change stream calls, health checks),
  // which then fail with CANCELLED (exports remove their temporary files),
  // and makes every later call fail at once with CANCELLED. Meant for
  // interrupted programs; safe to call from any thread.
  void Cancel();

  // A descriptor that turns readable, for good, when Cancel() is called: for
  // the caller's own waits (WriteLimits::stop_fd). Owned by the client.
  int cancelled_fd() const { return cancelled_fd_; }

 private:
  // One attempt of an export: receives the stream into "writer" and verifies
  // it. "seconds" and "attempts" are not set. "bytes_received" counts the
  // file's bytes received (and handed to "writer"); "retryable" says whether
  // the server ended the call with a code worth another attempt after
  // attempt number "attempt".
  absl::StatusOr<ExportSummary> Receive(
      const dvexport::v1::ExportFileRequest& request, BufferedFdWriter& writer,
      const ExportOptions& options, std::optional<std::chrono::system_clock::time_point> deadline,
      int attempt, int64_t* bytes_received, bool* retryable);

  // Decides on another attempt after "failure" of attempt "attempt": if the
  // options allow one and the deadline leaves time, calls on_retry and waits
  // the backoff. False if no attempt follows (also when Cancel() ends the
  // wait).
  bool WaitToRetry(const absl::Status& failure, int attempt, const ExportOptions& options,
                   std::optional<std::chrono::system_clock::time_point> deadline);

  // Tracks "context" for Cancel(); false if Cancel() was already called.
  bool Register(grpc::ClientContext* context);
  void Unregister(grpc::ClientContext* context);

  // One unary call: "call" on a context with the options' deadline and credentials, registered
  // for Cancel() while it runs; its gRPC status as a Status.
  absl::Status CallUnary(const CallOptions& options,
                         absl::FunctionRef<grpc::Status(grpc::ClientContext*)> call);

  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<dvexport::v1::DataValueExport::Stub> stub_;
  const std::unique_ptr<grpc::health::v1::Health::Stub> health_stub_;

  const int cancelled_fd_;  // An eventfd, written once by Cancel().
  std::mutex mutex_;
  std::condition_variable cancelled_changed_;        // Wakes WaitToRetry on Cancel().
  bool cancelled_ = false;                           // Guarded by mutex_.
  std::set<grpc::ClientContext*> in_progress_;       // Guarded by mutex_.
  std::minstd_rand random_{std::random_device{}()};  // Guarded by mutex_; backoff jitter.
};

}  // namespace dvexport::client

#endif  // DVEXPORT_CLIENT_EXPORT_CLIENT_H_
