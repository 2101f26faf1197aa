#include "client/cli/progress_line.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_format.h"

namespace dvexport::cli {

std::string FormatProgress(const client::ExportProgress& progress, double seconds) {
  const double megabytes = static_cast<double>(progress.file_bytes) / 1e6;
  const double rate = seconds > 0 ? megabytes / seconds : 0;
  return absl::StrFormat("%d values, %.1f MB, %.1f MB/s, %.2f s", progress.values, megabytes, rate,
                         seconds);
}

std::string FormatProgressBar(const client::ExportProgress& progress, int64_t total,
                              double seconds) {
  constexpr int kBarWidth = 20;
  const double fraction =
      total > 0
          ? std::clamp(static_cast<double>(progress.values) / static_cast<double>(total), 0.0, 1.0)
          : 1.0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  const double values_per_second = seconds > 0 ? static_cast<double>(progress.values) / seconds : 0;
  const double megabytes = static_cast<double>(progress.file_bytes) / 1e6;
  std::string eta = "?";
  if (values_per_second > 0) {
    const double left =
        static_cast<double>(std::max<int64_t>(total - progress.values, 0)) / values_per_second;
    eta = absl::StrFormat("%.0f s", std::ceil(left));
  }
  return absl::StrFormat("[%s%s] %3d%% %d/%d values, %.0f values/s, %.1f MB, %.1f MB/s, ETA %s",
                         std::string(filled, '#'), std::string(kBarWidth - filled, '-'),
                         static_cast<int>(fraction * 100), progress.values, total,
                         values_per_second, megabytes, seconds > 0 ? megabytes / seconds : 0, eta);
}

std::string FormatRetry(const absl::Status& failure, int next_attempt,
                        std::chrono::milliseconds wait, int max_attempts) {
  return absl::StrFormat("dvexport: %s: %s; starting the export again in %.1f s (attempt %d of %d)",
                         absl::StatusCodeToString(failure.code()), failure.message(),
                         std::chrono::duration<double>(wait).count(), next_attempt, max_attempts);
}

std::string FormatSummary(const client::ExportSummary& summary, absl::string_view output) {
  return absl::StrFormat("dvexport: wrote %d values, %d bytes to %s in %.2f s", summary.values,
                         summary.file_bytes, output, summary.seconds);
}

ProgressLine::ProgressLine(std::FILE* terminal)
    : terminal_(terminal), start_(std::chrono::steady_clock::now()) {}

void ProgressLine::Update(const client::ExportProgress& progress) {
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_shown_ < kInterval) return;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  // "\033[K" erases what is left of a longer earlier line.
  const int64_t total = total_.load();
  const std::string line =
      total >= 0 ? FormatProgressBar(progress, total, seconds) : FormatProgress(progress, seconds);
  std::fprintf(terminal_, "\r%s\033[K", line.c_str());
  std::fflush(terminal_);
  last_shown_ = now;
  shown_ = true;
}

std::thread StartCounting(client::ExportClient& client, const CommandLine& command,
                          ProgressLine* progress_line) {
  return std::thread([&client, &command, progress_line] {
    client::CallOptions options;
    options.timeout = command.timeout;
    options.credentials = command.credentials;
    absl::StatusOr<int64_t> count = client.CountDataValues(command.request.query(), options);
    if (count.ok()) progress_line->SetTotal(*count);
  });
}

void StopCounting(client::ExportClient& client, std::thread* counter) {
  if (!counter->joinable()) return;
  client.Cancel();
  counter->join();
}

void ProgressLine::Clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", terminal_);
  std::fflush(terminal_);
  shown_ = false;
}

}  // namespace dvexport::cli
