#include "client/cli/progress_line.h"

#include "absl/strings/str_format.h"

namespace dvexport::cli {

std::string FormatProgress(const client::ExportProgress& progress, double seconds) {
  const double megabytes = static_cast<double>(progress.file_bytes) / 1e6;
  const double rate = seconds > 0 ? megabytes / seconds : 0;
  return absl::StrFormat("%d values, %.1f MB, %.1f MB/s, %.2f s", progress.values, megabytes, rate,
                         seconds);
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
  std::fprintf(terminal_, "\r%s\033[K", FormatProgress(progress, seconds).c_str());
  std::fflush(terminal_);
  last_shown_ = now;
  shown_ = true;
}

void ProgressLine::Clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", terminal_);
  std::fflush(terminal_);
  shown_ = false;
}

}  // namespace dvexport::cli
