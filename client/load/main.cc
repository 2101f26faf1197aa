// dvexport-load: drives a dvexport server with concurrent calls and reports
// latency and status like ghz, using the client library.

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/credentials.h"
#include "client/load/load_generator.h"

namespace {

constexpr char kUsage[] =
    "Usage: dvexport-load [--config deploy/ghz/X.json] [flags]\n"
    "Runs --total calls, --concurrency at a time, and prints count, total time,\n"
    "requests/s, fastest/average/slowest, latency percentiles and status codes.\n"
    "Exits 0 only if every call succeeded (1: some failed, 2: bad command line).\n"
    "\n"
    "  --config FILE        a ghz JSON config: call, host, total, concurrency,\n"
    "                       connections, timeout, data (flags below override it)\n"
    "  --server TARGET      host:port, ipv4:h:p,h:p or dns:///name:port (127.0.0.1:50051)\n"
    "  --call NAME          export-file | stream | count (export-file)\n"
    "  --request-json FILE  the request in protobuf JSON: an ExportFileRequest for\n"
    "                       export-file, an ExportRequest for stream and count\n"
    "  --total N            calls in all (200)\n"
    "  --concurrency N      calls in flight at once (20)\n"
    "  --connections N      separate channels (HTTP/2 connections) (1)\n"
    "  --timeout-s N        deadline of each call, its whole stream included (60)\n"
    "  --lb-policy NAME     pick_first | round_robin, for multi-address targets (pick_first)\n"
    "  --token-file FILE    call as the DHIS2 user of the personal access token on the\n"
    "                       first line of FILE (private to its owner: chmod 600)\n"
    "\n"
    "Identity: --token-file, else $DVEXPORT_TOKEN, else the config's\n"
    "metadata.authorization (\"ApiToken <token>\" or \"Basic <base64>\"), else none.\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "dvexport-load: %s\n%s", message.c_str(), kUsage);
  return 2;
}

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using dvexport::load::LoadOptions;
  // name -> value, in order; "--name=value" or "--name value".
  std::vector<std::pair<std::string, std::string>> flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg.rfind("--", 0) != 0) return Usage(absl::StrCat("unexpected argument ", arg));
    size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      flags.emplace_back(arg.substr(2, equals - 2), arg.substr(equals + 1));
    } else if (i + 1 < argc) {
      flags.emplace_back(arg.substr(2), argv[++i]);
    } else {
      return Usage(absl::StrCat(arg, " needs a value"));
    }
  }

  LoadOptions options;
  std::string text;
  for (const auto& [name, value] : flags) {
    if (name != "config") continue;
    if (!ReadFile(value, &text)) return Usage(absl::StrCat("cannot read ", value));
    absl::Status status = dvexport::load::ApplyGhzConfig(text, &options);
    if (!status.ok()) return Usage(absl::StrCat(value, ": ", status.message()));
  }
  std::string request_json;
  std::string token_file;
  for (const auto& [name, value] : flags) {
    int number = 0;
    const bool numeric = absl::SimpleAtoi(value, &number) && number > 0;
    if (name == "config") {
      continue;
    } else if (name == "server") {
      options.server = value;
    } else if (name == "lb-policy") {
      options.lb_policy = value;
    } else if (name == "call") {
      absl::StatusOr<dvexport::load::LoadCall> call = dvexport::load::ParseLoadCall(value);
      if (!call.ok()) return Usage(std::string(call.status().message()));
      options.call = *call;
    } else if (name == "token-file") {
      token_file = value;
    } else if (name == "token" || name == "password") {
      return Usage(absl::StrCat("--", name,
                                ": a secret is never given on the command line (other users of "
                                "the host can read it); use --token-file FILE or DVEXPORT_TOKEN"));
    } else if (name == "request-json") {
      request_json = value;
    } else if (name == "total" || name == "concurrency" || name == "connections" ||
               name == "timeout-s") {
      if (!numeric) return Usage(absl::StrCat("--", name, " must be a positive integer"));
      if (name == "total") options.total = number;
      if (name == "concurrency") options.concurrency = number;
      if (name == "connections") options.connections = number;
      if (name == "timeout-s") options.timeout = std::chrono::seconds(number);
    } else {
      return Usage(absl::StrCat("unknown flag --", name));
    }
  }
  if (!request_json.empty()) {
    if (!ReadFile(request_json, &text)) return Usage(absl::StrCat("cannot read ", request_json));
    absl::Status status = dvexport::load::ApplyRequestJson(text, &options);
    if (!status.ok()) return Usage(absl::StrCat(request_json, ": ", status.message()));
  }
  if (!token_file.empty()) {
    absl::StatusOr<std::string> token = dvexport::client::ReadTokenFile(token_file);
    if (!token.ok()) return Usage(std::string(token.status().message()));
    options.credentials = dvexport::client::CallCredentialsSpec::Token(*std::move(token));
  } else if (const char* variable = std::getenv("DVEXPORT_TOKEN"); variable != nullptr) {
    absl::StatusOr<std::string> token =
        dvexport::client::TokenFromVariable("DVEXPORT_TOKEN", variable);
    if (!token.ok()) return Usage(std::string(token.status().message()));
    options.credentials = dvexport::client::CallCredentialsSpec::Token(*std::move(token));
  }
  std::signal(SIGPIPE, SIG_IGN);

  std::printf("%s to %s: %d calls, concurrency %d, %d connection(s), identity: %s\n\n",
              std::string(dvexport::load::LoadCallName(options.call)).c_str(),
              options.server.c_str(), options.total, options.concurrency, options.connections,
              options.credentials.Describe().c_str());
  dvexport::load::LoadReport report = dvexport::load::RunLoad(options);
  std::fputs(dvexport::load::FormatReport(report).c_str(), stdout);
  return report.all_ok() && report.count == options.total ? 0 : 1;
}
