#ifndef DVEXPORT_CLIENT_CLI_PROGRESS_LINE_H_
#define DVEXPORT_CLIENT_CLI_PROGRESS_LINE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "client/cli/command_line.h"
#include "client/export_client.h"

namespace dvexport::cli {

// "123456 values, 12.3 MB, 45.6 MB/s, 0.27 s" (MB = 10^6 bytes).
std::string FormatProgress(const client::ExportProgress& progress, double seconds);

// With the total known: "[########------------]  40% 123456/308640 values,
// 61728 values/s, 12.3 MB, 6.2 MB/s, ETA 3 s" (the ETA from the rate so far;
// "ETA ?" before any value).
std::string FormatProgressBar(const client::ExportProgress& progress, int64_t total,
                              double seconds);

// The summary line that scripts parse, without a newline:
// "dvexport: wrote 123456 values, 37012345 bytes to out.json in 1.23 s".
std::string FormatSummary(const client::ExportSummary& summary, absl::string_view output);

// The line that announces another attempt of a failed export, without a
// newline: "dvexport: UNAVAILABLE: <message>; starting the export again in
// 1.2 s (attempt 2 of 4)".
std::string FormatRetry(const absl::Status& failure, int next_attempt,
                        std::chrono::milliseconds wait, int max_attempts);

// Shows the progress of an export on a terminal as one line, rewritten in
// place at most five times a second: FormatProgress, or FormatProgressBar once
// the total is known.
class ProgressLine {
 public:
  // "terminal" must remain open while this ProgressLine is in use.
  explicit ProgressLine(std::FILE* terminal);

  // Shows "progress" unless the line was rewritten less than 200 ms ago.
  void Update(const client::ExportProgress& progress);

  // Sets the number of values expected (a CountDataValues answer). Safe to
  // call from any thread.
  void SetTotal(int64_t total) { total_.store(total); }

  // Erases the line, if one is shown.
  void Clear();

 private:
  static constexpr std::chrono::milliseconds kInterval{200};

  std::FILE* const terminal_;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_shown_;
  bool shown_ = false;
  std::atomic<int64_t> total_{-1};  // -1: unknown
};

// Calls CountDataValues for "command"'s query on a thread of its own and
// hands the answer to "progress_line"'s SetTotal; a failed count leaves the
// total unknown. "client" and "progress_line" must outlive the thread, which
// the caller joins.
std::thread StartCounting(client::ExportClient& client, const CommandLine& command,
                          ProgressLine* progress_line);

// Ends a count StartCounting began, if any ("counter" joinable): the count only feeds the bar,
// so one still running is cancelled (with the rest of "client"'s calls) rather than awaited.
void StopCounting(client::ExportClient& client, std::thread* counter);

}  // namespace dvexport::cli

#endif  // DVEXPORT_CLIENT_CLI_PROGRESS_LINE_H_
