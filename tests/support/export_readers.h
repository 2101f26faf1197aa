#ifndef DVEXPORT_TESTS_SUPPORT_EXPORT_READERS_H_
#define DVEXPORT_TESTS_SUPPORT_EXPORT_READERS_H_

// Clients that read a whole export from a dvexport server, for the tests that compare exports
// (through PgBouncer, from a standby).

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dvexport/v1/export.grpc.pb.h"

namespace dvexport::testing {

// An ExportFile call, read to its end.
struct FileExport {
  grpc::Status status;
  std::string bytes;  // every data chunk, in order
  bool has_trailer = false;
  int64_t values = 0;  // the trailer's; 0 without one
};

// Reads the file "request" asks for, within "timeout"; "after_chunk(n)", if given, runs after
// the n-th data chunk (1-based).
FileExport ReadFileExport(v1::DataValueExport::Stub* stub, const v1::ExportFileRequest& request,
                          std::chrono::seconds timeout,
                          const std::function<void(int)>& after_chunk = nullptr);

// Every value of the StreamDataValues stream of "query", serialized, sorted; the call's status in
// "*status". Expects (gtest) a stream that succeeded to end with its last batch.
std::vector<std::string> ReadSortedStreamValues(v1::DataValueExport::Stub* stub,
                                                const v1::ExportRequest& query,
                                                std::chrono::seconds timeout, grpc::Status* status);

// The JSON document "bytes" with its dataValues sorted (each as its compact JSON text): equal for
// two exports of the same values in any order.
nlohmann::json SortedValues(const std::string& bytes);

}  // namespace dvexport::testing

#endif  // DVEXPORT_TESTS_SUPPORT_EXPORT_READERS_H_
