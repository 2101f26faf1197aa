#include "client/load/load_generator.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/export_client.h"
#include "dvexport/v1/export.grpc.pb.h"

namespace dvexport::load {
namespace {

struct CallResult {
  double seconds = 0;
  absl::Status status;
  int64_t values = 0;
  int64_t bytes = 0;
};

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

std::chrono::system_clock::time_point Deadline(std::chrono::milliseconds timeout) {
  return std::chrono::system_clock::now() + timeout;
}

// Calls ExportFile through the client library, which verifies the trailer;
// the file goes to /dev/null.
CallResult ExportFile(client::ExportClient& client, int null_fd, const LoadOptions& options) {
  CallResult result;
  client::ExportOptions export_options;
  export_options.timeout = options.timeout;
  export_options.credentials = options.credentials;
  absl::StatusOr<client::ExportSummary> summary =
      client.ExportToFd(options.file_request, null_fd, export_options);
  result.status = summary.status();
  if (summary.ok()) {
    result.values = summary->values;
    result.bytes = summary->file_bytes;
  }
  return result;
}

CallResult StreamDataValues(dvexport::v1::DataValueExport::Stub& stub, const LoadOptions& options) {
  CallResult result;
  grpc::ClientContext context;
  context.set_deadline(Deadline(options.timeout));
  result.status = client::ApplyCallCredentials(options.credentials, &context);
  if (!result.status.ok()) return result;
  std::unique_ptr<grpc::ClientReader<dvexport::v1::DataValueBatch>> reader =
      stub.StreamDataValues(&context, options.request);
  dvexport::v1::DataValueBatch batch;
  bool last = false;
  while (reader->Read(&batch)) {
    result.bytes += static_cast<int64_t>(batch.ByteSizeLong());
    result.values += batch.data_values_size();
    last = batch.last();
  }
  result.status = FromGrpc(reader->Finish());
  if (result.status.ok() && !last) {
    result.status = absl::DataLossError("the stream ended without its last batch");
  }
  return result;
}

CallResult CountDataValues(dvexport::v1::DataValueExport::Stub& stub, const LoadOptions& options) {
  CallResult result;
  grpc::ClientContext context;
  context.set_deadline(Deadline(options.timeout));
  result.status = client::ApplyCallCredentials(options.credentials, &context);
  if (!result.status.ok()) return result;
  dvexport::v1::CountResponse response;
  result.status = FromGrpc(stub.CountDataValues(&context, options.request, &response));
  if (result.status.ok()) result.values = response.count();
  return result;
}

absl::StatusOr<std::chrono::milliseconds> ParseGhzDuration(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    double ms;
  };
  for (const Unit& unit : {Unit{"ms", 1}, Unit{"s", 1000}, Unit{"m", 60000}, Unit{"h", 3600000}}) {
    if (text.size() > unit.suffix.size() &&
        text.substr(text.size() - unit.suffix.size()) == unit.suffix) {
      double amount = 0;
      if (absl::SimpleAtod(std::string(text.substr(0, text.size() - unit.suffix.size())),
                           &amount) &&
          amount > 0) {
        return std::chrono::milliseconds(static_cast<int64_t>(amount * unit.ms));
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("timeout: \"", std::string(text), "\" is not a duration such as 30s or 500ms"));
}

// The identity of a ghz config's metadata.authorization, "ApiToken <token>" or
// "Basic <base64(username:password)>"; the messages never hold the value.
absl::StatusOr<client::CallCredentialsSpec> ParseAuthorization(const std::string& value) {
  constexpr std::string_view kToken = "ApiToken ";
  constexpr std::string_view kBasic = "Basic ";
  if (value.rfind(kToken, 0) == 0) {
    absl::StatusOr<std::string> token =
        client::TokenFromVariable("metadata.authorization", value.substr(kToken.size()));
    if (!token.ok()) return token.status();
    return client::CallCredentialsSpec::Token(*std::move(token));
  }
  if (value.rfind(kBasic, 0) == 0) {
    std::string decoded;
    if (!absl::Base64Unescape(value.substr(kBasic.size()), &decoded) ||
        decoded.find(':') == std::string::npos) {
      return absl::InvalidArgumentError(
          "metadata.authorization: Basic needs base64 of username:password");
    }
    const size_t colon = decoded.find(':');
    client::CallCredentialsSpec spec =
        client::CallCredentialsSpec::Password(decoded.substr(0, colon), decoded.substr(colon + 1));
    absl::Status valid = client::AuthorizationValue(spec).status();
    if (!valid.ok()) return valid;
    return spec;
  }
  return absl::InvalidArgumentError(
      "metadata.authorization: neither \"ApiToken <token>\" nor \"Basic <base64>\"");
}

}  // namespace

absl::StatusOr<LoadCall> ParseLoadCall(std::string_view name) {
  size_t separator = name.find_last_of("./");
  std::string_view method = separator == std::string_view::npos ? name : name.substr(separator + 1);
  if (name == "export-file" || method == "ExportFile") return LoadCall::kExportFile;
  if (name == "stream" || method == "StreamDataValues") return LoadCall::kStreamDataValues;
  if (name == "count" || method == "CountDataValues") return LoadCall::kCountDataValues;
  return absl::InvalidArgumentError(
      absl::StrCat("call: \"", std::string(name), "\" is not export-file, stream or count"));
}

std::string_view LoadCallName(LoadCall call) {
  switch (call) {
    case LoadCall::kExportFile:
      return "dvexport.v1.DataValueExport.ExportFile";
    case LoadCall::kStreamDataValues:
      return "dvexport.v1.DataValueExport.StreamDataValues";
    case LoadCall::kCountDataValues:
      return "dvexport.v1.DataValueExport.CountDataValues";
  }
  return "";
}

absl::Status ApplyRequestJson(std::string_view json, LoadOptions* options) {
  google::protobuf::Message* request =
      options->call == LoadCall::kExportFile
          ? static_cast<google::protobuf::Message*>(&options->file_request)
          : &options->request;
  request->Clear();
  auto status = google::protobuf::util::JsonStringToMessage(std::string(json), request);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the request is not a ",
                                                   request->GetDescriptor()->full_name(),
                                                   " in protobuf JSON: ", status.ToString()));
  }
  return absl::OkStatus();
}

absl::Status ApplyGhzConfig(std::string_view json, LoadOptions* options) {
  nlohmann::json config = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  if (config.is_discarded() || !config.is_object()) {
    return absl::InvalidArgumentError("the ghz config is not a JSON object");
  }
  try {
    if (config.contains("call")) {
      absl::StatusOr<LoadCall> call = ParseLoadCall(config["call"].get<std::string>());
      if (!call.ok()) return call.status();
      options->call = *call;
    }
    if (config.contains("host")) options->server = config["host"].get<std::string>();
    if (config.contains("total")) options->total = config["total"].get<int>();
    if (config.contains("concurrency")) options->concurrency = config["concurrency"].get<int>();
    if (config.contains("connections")) options->connections = config["connections"].get<int>();
    if (config.contains("timeout")) {
      absl::StatusOr<std::chrono::milliseconds> timeout =
          ParseGhzDuration(config["timeout"].get<std::string>());
      if (!timeout.ok()) return timeout.status();
      options->timeout = *timeout;
    }
    if (config.contains("metadata")) {
      const nlohmann::json& metadata = config["metadata"];
      if (!metadata.is_object()) {
        return absl::InvalidArgumentError("metadata: not a JSON object");
      }
      for (const auto& [key, value] : metadata.items()) {
        // Anything else would be dropped without a word: refused instead.
        if (key != "authorization") {
          return absl::InvalidArgumentError(
              absl::StrCat("metadata: \"", key, "\" is not sent; only \"authorization\" is"));
        }
        if (!value.is_string()) {
          return absl::InvalidArgumentError("metadata.authorization: not a string");
        }
        absl::StatusOr<client::CallCredentialsSpec> credentials =
            ParseAuthorization(value.get<std::string>());
        if (!credentials.ok()) return credentials.status();
        options->credentials = *std::move(credentials);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the ghz config: ", e.what()));
  }
  if (config.contains("data")) return ApplyRequestJson(config["data"].dump(), options);
  return absl::OkStatus();
}

double LoadReport::Percentile(double p) const {
  if (latencies.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(latencies.size())));
  return latencies[std::clamp<size_t>(rank, 1, latencies.size()) - 1];
}

std::vector<std::shared_ptr<grpc::Channel>> CreateLoadChannels(const LoadOptions& options) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < std::max(1, options.connections); ++i) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
    args.SetLoadBalancingPolicyName(options.lb_policy);
    // Channels with equal arguments would share subchannels, so one connection.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("dvexport.load_channel", i);
    channels.push_back(
        grpc::CreateCustomChannel(options.server, grpc::InsecureChannelCredentials(), args));
  }
  return channels;
}

LoadReport RunLoad(const LoadOptions& options) {
  std::vector<std::shared_ptr<grpc::Channel>> channels = CreateLoadChannels(options);
  std::vector<std::unique_ptr<client::ExportClient>> clients;
  std::vector<std::unique_ptr<dvexport::v1::DataValueExport::Stub>> stubs;
  for (const auto& channel : channels) {
    clients.push_back(std::make_unique<client::ExportClient>(channel));
    stubs.push_back(dvexport::v1::DataValueExport::NewStub(channel));
  }
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

  LoadReport report;
  std::mutex mu;
  std::atomic<int> next{0};
  auto worker = [&](int index) {
    const size_t connection = static_cast<size_t>(index) % channels.size();
    std::vector<CallResult> results;
    while (next.fetch_add(1) < options.total) {
      auto start = std::chrono::steady_clock::now();
      CallResult result;
      switch (options.call) {
        case LoadCall::kExportFile:
          result = ExportFile(*clients[connection], null_fd, options);
          break;
        case LoadCall::kStreamDataValues:
          result = StreamDataValues(*stubs[connection], options);
          break;
        case LoadCall::kCountDataValues:
          result = CountDataValues(*stubs[connection], options);
          break;
      }
      result.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      results.push_back(std::move(result));
    }
    std::lock_guard<std::mutex> lock(mu);
    for (const CallResult& result : results) {
      ++report.count;
      report.latencies.push_back(result.seconds);
      ++report.codes[absl::StatusCodeToString(result.status.code())];
      if (result.status.ok()) {
        report.values += result.values;
        report.bytes += result.bytes;
      } else {
        ++report.errors[absl::StrCat(absl::StatusCodeToString(result.status.code()), ": ",
                                     result.status.message())];
      }
    }
  };

  auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < std::max(1, std::min(options.concurrency, options.total)); ++i) {
    threads.emplace_back(worker, i);
  }
  for (std::thread& thread : threads) thread.join();
  report.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (null_fd >= 0) close(null_fd);
  std::sort(report.latencies.begin(), report.latencies.end());
  return report;
}

std::string FormatReport(const LoadReport& report) {
  auto ms = [](double seconds) { return absl::StrFormat("%.2f ms", seconds * 1000); };
  double sum = 0;
  for (double latency : report.latencies) sum += latency;
  std::string out = "Summary:\n";
  absl::StrAppendFormat(&out, "  Count:\t%d\n", report.count);
  absl::StrAppendFormat(&out, "  Total:\t%.2f s\n", report.total_seconds);
  if (!report.latencies.empty()) {
    absl::StrAppend(&out, "  Slowest:\t", ms(report.latencies.back()), "\n");
    absl::StrAppend(&out, "  Fastest:\t", ms(report.latencies.front()), "\n");
    absl::StrAppend(&out, "  Average:\t", ms(sum / static_cast<double>(report.latencies.size())),
                    "\n");
  }
  absl::StrAppendFormat(&out, "  Requests/sec:\t%.2f\n",
                        report.total_seconds > 0 ? report.count / report.total_seconds : 0.0);
  absl::StrAppendFormat(&out, "  Values:\t%d (%.0f/s)\n", report.values,
                        report.total_seconds > 0 ? report.values / report.total_seconds : 0.0);
  absl::StrAppendFormat(
      &out, "  Bytes:\t%d (%.1f MiB/s)\n", report.bytes,
      report.total_seconds > 0 ? report.bytes / report.total_seconds / (1024 * 1024) : 0.0);
  out += "\nLatency distribution:\n";
  for (double p : {10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0}) {
    absl::StrAppendFormat(&out, "  %g %% in %s\n", p, ms(report.Percentile(p)));
  }
  out += "\nStatus code distribution:\n";
  for (const auto& [code, count] : report.codes) {
    absl::StrAppendFormat(&out, "  [%s]\t%d responses\n", code, count);
  }
  if (!report.errors.empty()) {
    out += "\nError distribution:\n";
    for (const auto& [error, count] : report.errors) {
      absl::StrAppendFormat(&out, "  [%d]\t%s\n", count, error);
    }
  }
  return out;
}

}  // namespace dvexport::load
