#ifndef DVEXPORT_SERVICE_PIPELINE_CALL_LOG_H_
#define DVEXPORT_SERVICE_PIPELINE_CALL_LOG_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "dvexport/v1/export.pb.h"
#include "service/pipeline/call_record.h"

namespace dvexport::pipeline {

class ServerMetrics;

// The counts of a request's identifiers, for the call log: never the identifiers themselves.
std::string SummarizeRequest(const dvexport::v1::ExportRequest& query);

// Where every call (of either door) reports once it has ended: one JSON line on "log"
//   {"event":"export","rpc":"ExportFile","transport":"grpc","peer":...,"client":"10.1.2.3",
//    "auth":"api_token","user":"district","token_uid":"...","data_sets":1,"org_units":1,
//    "periods":1,...,"format":"FORMAT_JSON","compression":"COMPRESSION_NONE",
//    "values":29,"bytes":8123,"first_byte_seconds":0.004,"seconds":0.006,"status":"OK"}
// ("client": the resolved address, CallRecord::client; a call refused an identity has no "user"
// but "tried_user", the username its credential named, if any, escaped like every string)
// and a record in "metrics" (may be null). The calls hand over the counts they kept while
// sending; nothing is parsed back from the bytes sent. The line carries nothing of the server's
// configuration (no connection string, so no password) and no secret of the caller (a token's
// uid, never the token). Thread-safe.
class CallLog {
 public:
  // "*metrics" and "log" (may be null) must outlive the CallLog.
  CallLog(ServerMetrics* metrics, std::FILE* log) : metrics_(metrics), log_(log) {}

  // "summary": SummarizeRequest's text (empty if the request could not be read).
  void Write(const CallRecord& record, const std::string& peer, const std::string& summary,
             const absl::Status& status);

  // A line of the server's own, not of a call (the change stream monitor's):
  //   {"event":"<event>",<fields>}
  // "fields" is JSON already ("\"kind\":\"stream\""), its strings escaped by the caller; written
  // in one piece, as call lines are.
  void WriteEvent(const std::string& event, const std::string& fields);

 private:
  ServerMetrics* const metrics_;
  std::FILE* const log_;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CALL_LOG_H_
