#ifndef DVEXPORT_SERVICE_PIPELINE_EXPORT_H_
#define DVEXPORT_SERVICE_PIPELINE_EXPORT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dvexport/v1/export.pb.h"
#include "service/pipeline/call_origin.h"

namespace dvexport::pipeline {

class ExportPipeline;

// One piece of a call's output, in order.
struct Chunk {
  enum class Kind {
    kFileData,     // ExportFile: bytes of the file (compressed if asked)
    kFileTrailer,  // ExportFile: a serialized ExportTrailer (not part of the file), always last
    kBatch,        // StreamDataValues: one serialized DataValueBatch
  };
  Kind kind = Kind::kFileData;
  std::string bytes;
  // Values in this chunk and every one before it.
  int64_t values_so_far = 0;
};

// What a door gives an export to reach it. Both are called from any thread (a reader, an
// authentication worker, the slots' timer, or the door's own thread inside Cancel), never under a
// lock of the export's.
class ExportConsumer {
 public:
  virtual ~ExportConsumer() = default;
  // TakeNext has something to give (a chunk, or the end): once after Start, then at most once
  // after each TakeNext that returned kEmpty.
  virtual void Ready() = 0;
  // The client took nothing for the stall timeout while chunks waited: its write in flight will
  // not complete, so the door must end it now (gRPC cancels the RPC with "status", HTTP closes
  // the connection); TakeNext then reaches kDone with "status" once the readers have stopped.
  virtual void Abort(const absl::Status& status) = 0;
};

// One streaming export (ExportFile or StreamDataValues), whatever door it came through:
// authentication, validation, the export slot (and its queue, per-user shares), the reader
// threads, rendering, compression, the hand-off with back-pressure, the stall timeout,
// cancellation, the deadline, the call log and the metrics. The door pulls: TakeNext gives the
// next chunk or says there is none yet (then Ready follows when there is), and the door reports
// each chunk's bytes Sent once its transport took them. At most 4 chunks wait: readers wait for
// the door, and PostgreSQL for the readers.
//
// Every refusal (authentication, validation, E2010-E2012, NOT_FOUND, the slot queue, ADX's
// missing codes) comes before the first chunk: kDone with an error before any kChunk. A failure
// after the first chunk ends the export with kDone and the error (the output is incomplete).
//
// The door keeps the Export until TakeNext returned kDone (Cancel first to hurry that), then
// destroys it; destroying it earlier is a bug.
class Export {
 public:
  enum class Next { kChunk, kEmpty, kDone };

  // Starts an ExportFile of "request" (or ends at once with its status if that is an error).
  // "*consumer" must outlive the Export.
  static std::unique_ptr<Export> StartFile(
      ExportPipeline* pipeline, CallOrigin origin,
      const absl::StatusOr<dvexport::v1::ExportFileRequest>& request, ExportConsumer* consumer);

  // Starts a StreamDataValues of "request" (or ends at once with its status).
  static std::unique_ptr<Export> StartStream(
      ExportPipeline* pipeline, CallOrigin origin,
      const absl::StatusOr<dvexport::v1::ExportRequest>& request, ExportConsumer* consumer);

  virtual ~Export() = default;

  // The next chunk, if any. kEmpty arms Ready. kDone once every reader ended and every chunk was
  // taken (or the export stopped): status() tells how it ended, and the call has been logged.
  virtual Next TakeNext(Chunk* chunk) = 0;

  // The transport took the last chunk TakeNext gave, "bytes" of it on the wire.
  virtual void Sent(size_t bytes) = 0;

  // The client went away, the door's deadline passed, or the server shuts down: the readers stop
  // (every database wait within about 100 ms), the slot is freed, and TakeNext soon reaches
  // kDone; "why" is the status unless a failure came first. Any thread, any time, idempotent.
  virtual void Cancel(absl::Status why) = 0;

  // After kDone: OK, or why the export failed or was refused.
  virtual absl::Status status() const = 0;

  // Once the first chunk was taken: the change token of the export's snapshot (valid only if
  // the export completes).
  virtual std::string change_token() const = 0;
};

// The DHIS2 minor version (40 to 43) the database's newest connection found and the service
// serves; 0 while none is known (no connection made yet) or when the database's DHIS2 is refused.
// A door that answers as the database's DHIS2 answers (the HTTP door) decides its routes and
// parameters with it.
int ServedDhis2Version(ExportPipeline* pipeline);

// For a door that decides by the version (the HTTP door's routes and parameters): null when the
// database's DHIS2 is known; else an attempt to learn it is started (Dhis2VersionGate: an export
// waits for it on its own), and the flag returned turns true once the wait is settled (the
// version learned, or the attempt failed: then ServedDhis2Version is still 0), within about 5 s.
// The door polls it; nothing calls back into the door.
std::shared_ptr<const std::atomic<bool>> AwaitDhis2Version(ExportPipeline* pipeline);

// How a reader ends when its chunks can no longer be sent; a door cancels an export with it when
// its client went away.
absl::Status ClientGoneError();

// How an export ends when its door cancels it (the client cancelled, its deadline passed, or the
// server shuts down).
absl::Status CallCancelledError();

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_EXPORT_H_
