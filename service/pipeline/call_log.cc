#include "service/pipeline/call_log.h"

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_string.h"
#include "service/pipeline/metrics.h"

namespace dvexport::pipeline {
using common::JsonString;

std::string SummarizeRequest(const dvexport::v1::ExportRequest& query) {
  return absl::StrCat(
      ",\"data_sets\":", query.data_set_size(), ",\"data_elements\":", query.data_element_size(),
      ",\"data_element_groups\":", query.data_element_group_size(),
      ",\"org_units\":", query.org_unit_size(),
      ",\"org_unit_groups\":", query.org_unit_group_size(), ",\"periods\":", query.period_size(),
      ",\"date_range\":", query.start_date().empty() ? "false" : "true",
      ",\"children\":", query.children() ? "true" : "false");
}

void CallLog::Write(const CallRecord& record, const std::string& peer, const std::string& summary,
                    const absl::Status& status) {
  if (metrics_ != nullptr) metrics_->Record(record);
  if (log_ == nullptr) return;
  std::string line =
      absl::StrCat("{\"event\":\"export\",\"rpc\":", JsonString(record.rpc),
                   ",\"transport\":", JsonString(record.transport), ",\"peer\":", JsonString(peer));
  if (!record.client.empty()) absl::StrAppend(&line, ",\"client\":", JsonString(record.client));
  if (!record.auth.empty()) absl::StrAppend(&line, ",\"auth\":", JsonString(record.auth));
  if (!record.user.empty()) absl::StrAppend(&line, ",\"user\":", JsonString(record.user));
  if (!record.token_uid.empty()) {
    absl::StrAppend(&line, ",\"token_uid\":", JsonString(record.token_uid));
  }
  if (!record.tried_user.empty()) {
    absl::StrAppend(&line, ",\"tried_user\":", JsonString(record.tried_user));
  }
  line += summary;
  if (!record.format.empty()) {
    absl::StrAppend(&line, ",\"format\":", JsonString(record.format),
                    ",\"compression\":", JsonString(record.compression));
  }
  absl::StrAppend(&line, ",\"values\":", record.values, ",\"bytes\":", record.bytes);
  if (record.first_byte_seconds >= 0) {
    absl::StrAppendFormat(&line, ",\"first_byte_seconds\":%.4f", record.first_byte_seconds);
  }
  absl::StrAppendFormat(&line, ",\"seconds\":%.4f,\"status\":%s", record.seconds,
                        JsonString(record.code));
  if (!status.ok())
    absl::StrAppend(&line, ",\"message\":",
                    JsonString(std::string_view(status.message().data(), status.message().size())));
  line.push_back('}');
  line.push_back('\n');
  // One write of the whole line, so that concurrent calls do not interleave.
  std::fwrite(line.data(), 1, line.size(), log_);
  std::fflush(log_);
}

void CallLog::WriteEvent(const std::string& event, const std::string& fields) {
  if (log_ == nullptr) return;
  std::string line = absl::StrCat("{\"event\":", JsonString(event));
  if (!fields.empty()) absl::StrAppend(&line, ",", fields);
  line += "}\n";
  std::fwrite(line.data(), 1, line.size(), log_);
  std::fflush(log_);
}

}  // namespace dvexport::pipeline
