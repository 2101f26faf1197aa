#ifndef DVEXPORT_CLIENT_CLI_PROGRESS_LINE_H_
#define DVEXPORT_CLIENT_CLI_PROGRESS_LINE_H_

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"
#include "client/export_client.h"

namespace dvexport::cli {

// "123456 values, 12.3 MB, 45.6 MB/s, 0.27 s" (MB = 10^6 bytes).
std::string FormatProgress(const client::ExportProgress& progress, double seconds);

// The summary line that scripts parse, without a newline:
// "dvexport: wrote 123456 values, 37012345 bytes to out.json in 1.23 s".
std::string FormatSummary(const client::ExportSummary& summary, absl::string_view output);

// Shows the progress of an export on a terminal as one line, rewritten in
// place at most five times a second.
class ProgressLine {
 public:
  // "terminal" must remain open while this ProgressLine is in use.
  explicit ProgressLine(std::FILE* terminal);

  // Shows "progress" unless the line was rewritten less than 200 ms ago.
  void Update(const client::ExportProgress& progress);

  // Erases the line, if one is shown.
  void Clear();

 private:
  static constexpr std::chrono::milliseconds kInterval{200};

  std::FILE* const terminal_;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_shown_;
  bool shown_ = false;
};

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_PROGRESS_LINE_H_
