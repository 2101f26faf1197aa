#include "client/cli/stream_command.h"

#include <google/protobuf/util/time_util.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/buffered_fd_writer.h"
#include "client/cli/connection.h"
#include "client/cli/export_command.h"
#include "client/cli/interrupt_watcher.h"
#include "client/cli/progress_line.h"
#include "client/export_client.h"
#include "client/replacement_file.h"
#include "common/civil_date.h"
#include "common/json_string.h"

namespace dvexport::cli {

namespace {

using common::AppendJsonString;

// Appends `"key":"value"`, preceded by a comma.
void AppendMember(std::string_view key, const std::string& value, std::string* out) {
  out->push_back(',');
  AppendJsonString(key, out);
  out->push_back(':');
  AppendJsonString(value, out);
}

// Appends "n" as "width" decimal digits (0 <= n < 10^width).
void AppendDigits(int64_t n, int width, std::string* out) {
  char digits[10];
  for (int i = width - 1; i >= 0; --i, n /= 10) digits[i] = static_cast<char>('0' + n % 10);
  out->append(digits, static_cast<size_t>(width));
}

// Appends `,"key":"<RFC 3339>"` exactly as google::protobuf::util::TimeUtil::ToString writes
// "t" (0, 3, 6 or 9 fractional digits, "Z"), several times faster: a stream has two per value.
void AppendTimestampMember(std::string_view key, const google::protobuf::Timestamp& t,
                           std::string* out) {
  const int64_t seconds = t.seconds();
  if (seconds < -62135596800 || seconds > 253402300799 || t.nanos() < 0 || t.nanos() > 999999999) {
    AppendMember(key, google::protobuf::util::TimeUtil::ToString(t), out);  // out of 0001..9999
    return;
  }
  int64_t days = seconds / 86400;
  int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    --days;
  }
  const common::CivilDate date = common::CivilFromDays(days);

  out->push_back(',');
  AppendJsonString(key, out);
  out->append(":\"");
  AppendDigits(date.year, 4, out);
  out->push_back('-');
  AppendDigits(date.month, 2, out);
  out->push_back('-');
  AppendDigits(date.day, 2, out);
  out->push_back('T');
  AppendDigits(second_of_day / 3600, 2, out);
  out->push_back(':');
  AppendDigits(second_of_day / 60 % 60, 2, out);
  out->push_back(':');
  AppendDigits(second_of_day % 60, 2, out);
  const int32_t nanos = t.nanos();
  if (nanos != 0) {
    out->push_back('.');
    if (nanos % 1000000 == 0) {
      AppendDigits(nanos / 1000000, 3, out);
    } else if (nanos % 1000 == 0) {
      AppendDigits(nanos / 1000, 6, out);
    } else {
      AppendDigits(nanos, 9, out);
    }
  }
  out->append("Z\"");
}

}  // namespace

void AppendDataValueJsonLine(const dvexport::v1::DataValue& v, std::string* out) {
  // "period" is always there, so every other member follows a comma.
  out->append("{\"period\":");
  AppendJsonString(v.period(), out);
  if (v.has_data_element()) AppendMember("dataElement", v.data_element(), out);
  if (v.has_org_unit()) AppendMember("orgUnit", v.org_unit(), out);
  if (v.has_category_option_combo()) {
    AppendMember("categoryOptionCombo", v.category_option_combo(), out);
  }
  if (v.has_attribute_option_combo()) {
    AppendMember("attributeOptionCombo", v.attribute_option_combo(), out);
  }
  if (v.has_value()) AppendMember("value", v.value(), out);
  if (v.has_stored_by()) AppendMember("storedBy", v.stored_by(), out);
  AppendTimestampMember("created", v.created(), out);
  AppendTimestampMember("lastUpdated", v.last_updated(), out);
  if (v.has_comment()) AppendMember("comment", v.comment(), out);
  out->append(v.followup() ? ",\"followup\":true" : ",\"followup\":false");
  out->append(v.deleted() ? ",\"deleted\":true}\n" : ",\"deleted\":false}\n");
}

int RunStream(const CommandLine& command) {
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  InterruptWatcher interrupts;

  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(command);
  if (!channel.ok()) return PrintError(channel.status());
  client::ExportClient client(*channel);
  interrupts.Start(&client);

  const bool to_stdout = command.output == kStandardOutput;
  std::optional<client::ReplacementFile> file;
  if (!to_stdout) {
    file.emplace(command.output);
    absl::Status created = file->Create(command.timeout.count() > 0
                                            ? std::chrono::steady_clock::now() + command.timeout
                                            : std::chrono::steady_clock::time_point::max(),
                                        [&interrupts] { return interrupts.received() != 0; });
    if (!created.ok()) {
      interrupts.DieIfInterrupted("nothing was written");
      std::fprintf(stderr, "dvexport: error: %s\n", std::string(created.message()).c_str());
      return kExitExportFailed;
    }
  }
  client::WriteLimits limits;
  if (command.timeout.count() > 0)
    limits.deadline = std::chrono::steady_clock::now() + command.timeout;
  limits.stop_fd = client.cancelled_fd();
  limits.write_back_bytes = command.write_back_bytes;
  client::BufferedFdWriter writer(to_stdout ? STDOUT_FILENO : file->fd(),
                                  to_stdout ? "stdout" : command.output, limits);

  std::optional<ProgressLine> progress_line;
  std::thread counter;
  if (isatty(STDERR_FILENO)) {
    progress_line.emplace(stderr);
    counter = StartCounting(client, command, &*progress_line);
  }

  const auto start = std::chrono::steady_clock::now();
  client::ExportProgress progress;
  absl::Status write_status;
  std::string lines;  // one batch's
  client::CallOptions options;
  options.timeout = command.timeout;
  options.credentials = command.credentials;
  absl::StatusOr<int64_t> values = client.StreamDataValues(
      command.request.query(),
      [&](const dvexport::v1::DataValueBatch& batch) {
        lines.clear();
        for (const dvexport::v1::DataValue& value : batch.data_values()) {
          AppendDataValueJsonLine(value, &lines);
        }
        progress.file_bytes += static_cast<int64_t>(lines.size());
        write_status = writer.Append(lines);
        if (!write_status.ok()) return false;
        progress.values = batch.values_so_far();
        if (progress_line.has_value()) progress_line->Update(progress);
        return true;
      },
      options);
  absl::Status status = !write_status.ok() ? write_status : values.status();
  if (status.ok()) status = writer.Flush();
  if (status.ok() && file.has_value()) status = file->Commit();
  StopCounting(client, &counter);
  interrupts.Stop();
  if (progress_line.has_value()) progress_line->Clear();

  if (!status.ok()) {
    const bool in_place = file.has_value() && file->in_place();
    const std::string in_place_left =
        absl::StrCat(status.message(), "; ", command.output,
                     " is not a regular file: ", writer.bytes_written(), " bytes reached it");
    if (interrupts.received() != 0) file.reset();  // removes the temporary file before dying
    interrupts.DieIfInterrupted(to_stdout  ? "the output is incomplete"
                                : in_place ? in_place_left.c_str()
                                           : "the file is left as it was");
    return PrintError(status);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "%s\n",
               absl::StrFormat("dvexport: streamed %d values, %d bytes to %s in %.2f s", *values,
                               progress.file_bytes, to_stdout ? "stdout" : command.output, seconds)
                   .c_str());
  return kExitOk;
}

}  // namespace dvexport::cli
