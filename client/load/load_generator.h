#ifndef DVEXPORT_CLIENT_LOAD_LOAD_GENERATOR_H_
#define DVEXPORT_CLIENT_LOAD_LOAD_GENERATOR_H_

#include <grpcpp/channel.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "client/credentials.h"
#include "dvexport/v1/export.pb.h"

namespace dvexport::load {

enum class LoadCall { kExportFile, kStreamDataValues, kCountDataValues };

// "export-file", "stream", "count", or a full method name as ghz writes it
// ("dvexport.v1.DataValueExport.ExportFile" or ".../ExportFile").
absl::StatusOr<LoadCall> ParseLoadCall(std::string_view name);
std::string_view LoadCallName(LoadCall call);

struct LoadOptions {
  // A gRPC target: host:port, ipv4:a:p,b:q, dns:///name:port.
  std::string server = "127.0.0.1:50051";
  // Load balancing policy of each channel ("pick_first", "round_robin").
  std::string lb_policy = "pick_first";
  LoadCall call = LoadCall::kExportFile;
  // Calls in all.
  int total = 200;
  // Calls in flight at once, each on its own thread.
  int concurrency = 20;
  // Separate channels (HTTP/2 connections); calls are spread over them.
  int connections = 1;
  // Deadline of each call, covering its whole stream.
  std::chrono::milliseconds timeout{60000};
  // The request: file_request for kExportFile, request for the other calls.
  dvexport::v1::ExportFileRequest file_request;
  dvexport::v1::ExportRequest request;
  // The DHIS2 identity of every call (call credentials); empty: none.
  client::CallCredentialsSpec credentials;
};

// Reads a ghz JSON config (deploy/ghz/*.json) into "options": call, host,
// total, concurrency, connections, timeout, data (the request in protobuf
// JSON) and metadata, of which only "authorization" is allowed, as
// "ApiToken <token>" or "Basic <base64(username:password)>" (into
// options->credentials). Absent keys leave "options" as it was. Errors never
// hold the authorization's value.
absl::Status ApplyGhzConfig(std::string_view json, LoadOptions* options);

// Parses "json" (protobuf JSON, lowerCamelCase field names) as the request of
// options->call.
absl::Status ApplyRequestJson(std::string_view json, LoadOptions* options);

struct LoadReport {
  int count = 0;
  // Wall time from the first call's start to the last call's end.
  double total_seconds = 0;
  // Latency of every call, ascending.
  std::vector<double> latencies;
  // Calls by gRPC status code name, and failed calls by "CODE: message".
  std::map<std::string, int> codes;
  std::map<std::string, int> errors;
  // Data values and bytes received by the successful calls.
  int64_t values = 0;
  int64_t bytes = 0;

  bool all_ok() const { return codes.size() == 1 && codes.count("OK") == 1; }
  // The nearest-rank percentile "p" (0-100] of the latencies; 0 if none.
  double Percentile(double p) const;
};

// One channel per connection, each with its own subchannel pool so that they
// never share a connection.
std::vector<std::shared_ptr<grpc::Channel>> CreateLoadChannels(const LoadOptions& options);

// Runs options.total calls, options.concurrency at a time. Blocks.
LoadReport RunLoad(const LoadOptions& options);

// The report as ghz prints it: summary, latency distribution, status codes.
std::string FormatReport(const LoadReport& report);

}  // namespace dvexport::load

#endif  // DVEXPORT_CLIENT_LOAD_LOAD_GENERATOR_H_
