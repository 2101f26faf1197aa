#include "service/server/library_log.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "common/json_string.h"

namespace dvexport::server {
namespace {

void WriteLine(std::string_view library, std::string_view severity, const char* file, int line,
               std::string_view message) {
  std::string out = "{\"event\":\"library_log\",\"library\":";
  common::AppendJsonString(library, &out);
  out += ",\"severity\":";
  common::AppendJsonString(severity, &out);
  out += ",\"file\":";
  common::AppendJsonString(file == nullptr ? "" : file, &out);
  out += ",\"line\":" + std::to_string(line) + ",\"message\":";
  common::AppendJsonString(message, &out);
  out += "}\n";
  // One write per line: lines of concurrent threads do not interleave.
  std::fwrite(out.data(), 1, out.size(), stderr);
  std::fflush(stderr);
}

void LogGrpc(gpr_log_func_args* args) {
  WriteLine("grpc", gpr_log_severity_string(args->severity), args->file, args->line,
            args->message == nullptr ? "" : args->message);
}

void LogProtobuf(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  std::string_view severity = "INFO";
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      break;
    case google::protobuf::LOGLEVEL_WARNING:
      severity = "WARNING";
      break;
    case google::protobuf::LOGLEVEL_ERROR:
      severity = "ERROR";
      break;
    case google::protobuf::LOGLEVEL_FATAL:
      severity = "FATAL";
      break;
  }
  WriteLine("protobuf", severity, file, line, message);
}

}  // namespace

void RouteLibraryLogsToJson() {
  google::protobuf::SetLogHandler(&LogProtobuf);
  gpr_set_log_function(&LogGrpc);
}

}  // namespace dvexport::server
