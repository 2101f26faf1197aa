#include "service/server/export_call_observer.h"

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_string.h"
#include "dvexport/v1/export.pb.h"
#include "service/server/file_export.h"
#include "service/server/stream_export.h"

namespace dvexport::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

constexpr std::string_view kServicePrefix = "/dvexport.v1.DataValueExport/";

using common::JsonString;

void AppendQuerySummary(const dvexport::v1::ExportRequest& query, std::string* line) {
  absl::StrAppend(line, ",\"data_sets\":", query.data_set_size(),
                  ",\"data_elements\":", query.data_element_size(),
                  ",\"data_element_groups\":", query.data_element_group_size(),
                  ",\"org_units\":", query.org_unit_size(),
                  ",\"org_unit_groups\":", query.org_unit_group_size(),
                  ",\"periods\":", query.period_size(),
                  ",\"date_range\":", query.start_date().empty() ? "false" : "true",
                  ",\"children\":", query.children() ? "true" : "false");
}

class ExportCallObserver final : public grpc::experimental::Interceptor {
 public:
  ExportCallObserver(grpc::experimental::ServerRpcInfo* info, ServerMetrics* metrics,
                     std::FILE* log)
      : info_(info), metrics_(metrics), log_(log), started_(std::chrono::steady_clock::now()) {
    record_.rpc = std::string(std::string_view(info->method()).substr(kServicePrefix.size()));
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      OnRequest(methods->GetRecvMessage());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      OnSend(methods);
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      OnStatus(methods->GetSendStatus());
    }
    methods->Proceed();
  }

 private:
  double SecondsSinceStart() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

  void OnRequest(const void* message) {
    if (message == nullptr) return;
    if (record_.rpc == "ExportFile") {
      const auto& request = *static_cast<const dvexport::v1::ExportFileRequest*>(message);
      record_.format = dvexport::v1::Format_Name(request.format());
      record_.compression = dvexport::v1::Compression_Name(request.compression());
      AppendQuerySummary(request.query(), &summary_);
    } else {
      AppendQuerySummary(*static_cast<const dvexport::v1::ExportRequest*>(message), &summary_);
    }
  }

  void OnSend(grpc::experimental::InterceptorBatchMethods* methods) {
    if (record_.first_byte_seconds < 0) record_.first_byte_seconds = SecondsSinceStart();
    if (const void* message = methods->GetSendMessage(); message != nullptr) {
      // The service sends both serialized (see DataValueExportService).
      if (record_.rpc == "ExportFile") {
        int64_t values = 0;
        if (ReadSerializedChunkValues(*static_cast<const grpc::ByteBuffer*>(message), &values)) {
          record_.values = values;
        }
      } else if (record_.rpc == "StreamDataValues") {
        bool last = false;
        int64_t values = 0;
        if (ReadSerializedBatchEnd(*static_cast<const grpc::ByteBuffer*>(message), &last,
                                   &values)) {
          record_.values = values;
        }
      }
    }
    // Serializing here rather than later costs nothing extra: gRPC sends this buffer.
    if (grpc::ByteBuffer* serialized = methods->GetSerializedSendMessage(); serialized != nullptr) {
      record_.bytes += static_cast<int64_t>(serialized->Length());
    }
  }

  void OnStatus(const grpc::Status& status) {
    record_.seconds = SecondsSinceStart();
    record_.code = absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));
    if (metrics_ != nullptr) metrics_->Record(record_);
    if (log_ == nullptr) return;
    std::string line = absl::StrCat("{\"event\":\"export\",\"rpc\":", JsonString(record_.rpc),
                                    ",\"peer\":", JsonString(info_->server_context()->peer()));
    absl::StrAppend(&line, summary_);
    if (!record_.format.empty()) {
      absl::StrAppend(&line, ",\"format\":", JsonString(record_.format),
                      ",\"compression\":", JsonString(record_.compression));
    }
    absl::StrAppend(&line, ",\"values\":", record_.values, ",\"bytes\":", record_.bytes);
    if (record_.first_byte_seconds >= 0) {
      absl::StrAppendFormat(&line, ",\"first_byte_seconds\":%.4f", record_.first_byte_seconds);
    }
    absl::StrAppendFormat(&line, ",\"seconds\":%.4f,\"status\":%s", record_.seconds,
                          JsonString(record_.code));
    if (!status.ok()) absl::StrAppend(&line, ",\"message\":", JsonString(status.error_message()));
    line.push_back('}');
    line.push_back('\n');
    // One write of the whole line, so that concurrent calls do not interleave.
    std::fwrite(line.data(), 1, line.size(), log_);
    std::fflush(log_);
  }

  grpc::experimental::ServerRpcInfo* const info_;
  ServerMetrics* const metrics_;
  std::FILE* const log_;
  const std::chrono::steady_clock::time_point started_;
  CallRecord record_;
  std::string summary_;
};

}  // namespace

grpc::experimental::Interceptor* ExportCallObserverFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  if (std::strncmp(info->method(), kServicePrefix.data(), kServicePrefix.size()) != 0) {
    return nullptr;
  }
  return new ExportCallObserver(info, metrics_, log_);
}

}  // namespace dvexport::server
