#include "client/cli/password_prompt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace dvexport::cli {
namespace {

// The signals whose default action ends the process (or a shell's ^C, ^\):
// each must leave the terminal echoing.
constexpr int kRestoringSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr size_t kSignalCount = sizeof kRestoringSignals / sizeof kRestoringSignals[0];

// A password longer than this is cut off here: it fills no line of a terminal.
constexpr size_t kMaxPasswordBytes = 1024;

// The terminal and its settings for the handler; set only while a prompt runs.
volatile sig_atomic_t prompt_fd = -1;
struct termios prompt_saved;

// Restores the terminal and dies of the signal (tcsetattr, sigaction and
// raise are async-signal-safe).
void RestoreTerminalAndDie(int signal_number) {
  if (prompt_fd >= 0) ::tcsetattr(prompt_fd, TCSAFLUSH, &prompt_saved);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal_number, &action, nullptr);
  ::raise(signal_number);
}

absl::Status WriteAll(int fd, absl::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::FailedPreconditionError(
          absl::StrCat("the terminal cannot be written: ", std::strerror(errno)));
    text.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Reads a line from "fd" until "give_up"; the caller has turned echo off.
absl::StatusOr<std::string> ReadLine(int fd, std::chrono::steady_clock::time_point give_up) {
  std::string line;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return absl::DeadlineExceededError("no password was typed in time");
    }
    struct pollfd wait = {fd, POLLIN, 0};
    const int ready = ::poll(&wait, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("the terminal cannot be read: ", std::strerror(errno)));
    }
    if (ready == 0) continue;
    char c;
    const ssize_t got = ::read(fd, &c, 1);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("the terminal cannot be read: ", std::strerror(errno)));
    }
    if (got == 0) return absl::CancelledError("the input ended before the password's newline");
    if (c == '\n' || c == '\r') return line;
    if (line.size() < kMaxPasswordBytes) line += c;
  }
}

}  // namespace

absl::StatusOr<std::string> ReadPasswordFromTerminal(int fd, absl::string_view prompt,
                                                     std::chrono::milliseconds timeout) {
  struct termios saved;
  if (!::isatty(fd) || ::tcgetattr(fd, &saved) != 0) {
    return absl::FailedPreconditionError("the password prompt needs a terminal");
  }
  absl::Status status = WriteAll(fd, prompt);
  if (!status.ok()) return status;

  // The handlers go in before echo goes off, and come out after it is back.
  prompt_saved = saved;
  prompt_fd = fd;
  struct sigaction restoring {};
  restoring.sa_handler = RestoreTerminalAndDie;
  sigemptyset(&restoring.sa_mask);
  struct sigaction previous[kSignalCount];
  for (size_t i = 0; i < kSignalCount; ++i) {
    ::sigaction(kRestoringSignals[i], &restoring, &previous[i]);
  }
  struct termios quiet = saved;
  quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHOE | ECHOK);
  // Canonical mode stays: the terminal's own line editing (backspace) works.
  quiet.c_lflag |= ICANON;
  absl::StatusOr<std::string> password;
  if (::tcsetattr(fd, TCSAFLUSH, &quiet) != 0) {
    password = absl::FailedPreconditionError(
        absl::StrCat("cannot turn the terminal's echo off: ", std::strerror(errno)));
  } else {
    password = ReadLine(fd, std::chrono::steady_clock::now() + timeout);
  }
  ::tcsetattr(fd, TCSAFLUSH, &saved);
  prompt_fd = -1;
  for (size_t i = 0; i < kSignalCount; ++i) {
    ::sigaction(kRestoringSignals[i], &previous[i], nullptr);
  }
  // The newline typed was not echoed.
  WriteAll(fd, "\n").IgnoreError();
  return password;
}

absl::StatusOr<std::string> PromptForPassword(absl::string_view prompt) {
  const int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return absl::FailedPreconditionError("there is no terminal to ask on");
  absl::StatusOr<std::string> password = ReadPasswordFromTerminal(fd, prompt);
  ::close(fd);
  return password;
}

}  // namespace dvexport::cli
