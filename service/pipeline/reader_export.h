#ifndef DVEXPORT_SERVICE_PIPELINE_READER_EXPORT_H_
#define DVEXPORT_SERVICE_PIPELINE_READER_EXPORT_H_

#include <atomic>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "dvexport/v1/export.pb.h"
#include "service/db/read_session.h"
#include "service/pipeline/call_log.h"
#include "service/pipeline/call_scope.h"
#include "service/pipeline/call_session.h"
#include "service/pipeline/export.h"
#include "service/pipeline/export_pipeline.h"
#include "service/pipeline/hand_off_queue.h"

namespace dvexport::pipeline {

// The base of every export (ExportFile's FileExport and AdxFileExport, StreamDataValues'
// BatchStreamExport): an Export fed by reader threads, behind the interface a door pulls from.
// A derived class says how its readers render or encode their rows (ReadValues) and how the
// output ends (WriteEnd); this class runs the call around them.
//
// Threads: the call's first reader thread opens the ReadSession (connection, transaction, scope),
// plans the reads and starts one more thread per extra reader; each reader reads its slices,
// renders or encodes its values and pushes finished chunks into the HandOffQueue. The door takes
// them one at a time (TakeNext), and the queue calls the consumer's Ready when a reader hands a
// chunk over while the door found none. No door thread waits for the database or for a reader.
// The last reader to end writes the document's end (if all went well), ends the session (its
// connections go back to the pool) and frees the export slot; once every reader has ended and
// every chunk was taken, TakeNext answers kDone with the queue's status.
//
// Stopping: Cancel (the client went away, the door's deadline, shutdown) stops the queue and
// cancels the session, whose waits then end within ~100 ms; a reader that fails does the same,
// and its status is the call's. A client that takes nothing for the stall timeout is stopped too,
// and the consumer is told to Abort its write in flight.
class ReaderExport : public Export {
 public:
  using Queue = HandOffQueue<Chunk>;

  Next TakeNext(Chunk* chunk) override;
  void Sent(size_t bytes) override;
  void Cancel(absl::Status why) override;
  absl::Status status() const override { return queue_.status(); }
  std::string change_token() const override;

 protected:
  // "rpc": the method's name, for the log and the metrics.
  ReaderExport(ExportPipeline* pipeline, CallOrigin origin, ExportConsumer* consumer,
               std::string rpc);

  // Starts the export of "query" (or ends it with "status" if that is an error, or with the
  // query's validation error): authenticates, asks a slot, and once it has one (now, or later
  // from the thread that frees one) starts the first reader; no thread waits for the slot.
  // Called once, at the end of the derived class's constructor; "query" may be null if "status"
  // is an error.
  void Start(const absl::Status& status, const dvexport::v1::ExportRequest* query);

  // Reader "index": reads its slices through session().Read(index, ...) and pushes its chunks
  // (in the order the export's chunks must have, which the derived class keeps).
  virtual absl::Status ReadValues(int index) = 0;

  // After every reader succeeded and the transaction ended: pushes the last chunks.
  virtual absl::Status WriteEnd() = 0;

  // True when the values must come in the order of one query (ADX's groups): the export then
  // has one reader and is never read in slices.
  virtual bool ReadsInOrder() const { return false; }

  // Producer side: queues a chunk; false if the export is stopping (the reader should return
  // ClientGoneError()).
  bool Push(Chunk chunk) { return queue_.Push(std::move(chunk)); }

  db::ReadSession& session() { return session_.get(); }
  CallRecord& record() { return scope_.record(); }
  const PipelineOptions& options() const { return pipeline_->options(); }

 private:
  void RunFirstReader(dhis2::ExportParams params);
  void RunReader(int index);
  // The end of one reader with its status (of ReadValues, or of opening the session); the last
  // one ends the export. Nothing of the export may be touched after it: it may be gone.
  void ReaderDone(absl::Status status);
  // Stops the readers (client gone, call cancelled, a reader failed): "why" is the status unless
  // a failure came first.
  void StopReaders(absl::Status why);
  // When the queue stalled (the client stopped reading): stops the readers and has the consumer
  // abort its write, once, before the reader's Close lets the export end.
  void EndIfStalled();

  ExportPipeline* const pipeline_;
  const CallOrigin origin_;
  ExportConsumer* const consumer_;
  Queue queue_;

  // Opened before the first reader starts; closed by the last reader to end.
  CallSession session_;
  std::atomic<int> running_readers_{1};
  std::atomic<bool> stall_ended_{false};

  mutable std::mutex token_mu_;
  std::string change_token_ ABSL_GUARDED_BY(token_mu_);

  // Last: the reader threads are joined before the members above are destroyed.
  CallScope scope_;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_READER_EXPORT_H_
