#include "service/pipeline/change_stream_monitor.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/json_string.h"

namespace dvexport::pipeline {
namespace {

using common::JsonString;

// A poll never waits longer for a pool connection: exports need them more.
constexpr std::chrono::milliseconds kMaxPollConnectionWait{2000};
// A poll ends within min(interval, this), and never sooner than kMinPollTimeout.
constexpr std::chrono::milliseconds kMaxPollTimeout{10000};
constexpr std::chrono::milliseconds kMinPollTimeout{1000};

std::string JsonOf(absl::string_view text) {
  return JsonString(std::string_view(text.data(), text.size()));
}

}  // namespace

ChangeStreamMonitor::ChangeStreamMonitor(db::ConnectionPool* pool,
                                         const db::ReadSessionOptions& session,
                                         ChangeStreamMonitorOptions options,
                                         ChangeStreamObserver* observer, CallLog* log)
    : pool_(pool),
      session_options_(session),
      options_(std::move(options)),
      observer_(observer),
      log_(log) {
  session_options_.connection_wait =
      std::min(session_options_.connection_wait, kMaxPollConnectionWait);
}

ChangeStreamMonitor::~ChangeStreamMonitor() { Stop(); }

void ChangeStreamMonitor::Start() {
  if (options_.interval.count() <= 0 || thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    if (stopping_) return;
  }
  thread_ = std::thread(&ChangeStreamMonitor::Run, this);
}

void ChangeStreamMonitor::Stop() {
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    stopping_ = true;
    if (polling_ != nullptr) polling_->Cancel();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ChangeStreamMonitor::Run() {
  std::unique_lock<std::mutex> lock(run_mu_);
  while (!stopping_) {
    lock.unlock();
    PollOnce().IgnoreError();
    lock.lock();
    wake_.wait_for(lock, options_.interval,
                   [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(run_mu_) { return stopping_; });
  }
}

absl::Status ChangeStreamMonitor::PollOnce() {
  std::lock_guard<std::mutex> poll_lock(poll_mu_);
  const std::chrono::milliseconds timeout =
      options_.interval.count() > 0 ? std::clamp<std::chrono::milliseconds>(
                                          options_.interval, kMinPollTimeout, kMaxPollTimeout)
                                    : kMaxPollTimeout;
  auto session = std::make_unique<db::ReadSession>(pool_, session_options_,
                                                   std::chrono::system_clock::now() + timeout);
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    if (stopping_) return absl::CancelledError("the change stream monitor has stopped");
    polling_ = session.get();
  }
  db::ChangeStreamState state;
  absl::Status status =
      session->Lookup("reading the change streams", [&](pqxx::transaction_base& tx) {
        state = db::ReadChangeStreamState(tx, options_.publication);
        return absl::OkStatus();
      });
  bool stopping = false;
  {
    // Before the session goes: Stop must not cancel it afterwards.
    std::lock_guard<std::mutex> lock(run_mu_);
    polling_ = nullptr;
    stopping = stopping_;
  }
  session.reset();
  // Stop cancelled it: the server is shutting down, which is not a failure worth a line.
  if (stopping) return absl::CancelledError("the change stream monitor has stopped");
  if (!status.ok()) {
    // Once per run of failures: a database that is down is the health probe's to report.
    if (!failing_ && log_ != nullptr) {
      log_->WriteEvent("change_stream_poll_failed",
                       absl::StrCat("\"error\":", JsonOf(status.ToString())));
    }
    failing_ = true;
    return status;
  }
  failing_ = false;
  Observe(state);
  return absl::OkStatus();
}

void ChangeStreamMonitor::Observe(const db::ChangeStreamState& state) {
  const bool stream = state.support.available;
  const std::string kind = stream ? "stream" : "snapshot";
  if (kind != logged_kind_ && log_ != nullptr) {
    const std::string message =
        stream ? absl::StrCat("change tokens: stream (publication ", options_.publication, ")")
               : absl::StrCat("change tokens: snapshot; change streams unavailable: ",
                              state.support.reason);
    std::string fields =
        absl::StrCat("\"kind\":", JsonOf(kind), ",\"publication\":", JsonOf(options_.publication));
    if (!stream) absl::StrAppend(&fields, ",\"reason\":", JsonOf(state.support.reason));
    absl::StrAppend(&fields, ",\"message\":", JsonOf(message));
    log_->WriteEvent("change_tokens", fields);
  }
  logged_kind_ = kind;
  if (observer_ != nullptr) observer_->ChangeTokenKindPolled(stream);

  const auto now = std::chrono::steady_clock::now();
  std::vector<ChangeStreamGauges> gauges;
  std::vector<std::string> warnings;
  {
    std::lock_guard<std::mutex> lock(seen_mu_);
    absl::flat_hash_map<std::string, Seen> seen;
    for (const db::ChangeStreamSlot& slot : state.slots) {
      Seen now_seen;
      auto it = seen_.find(slot.name);
      if (it != seen_.end()) now_seen = it->second;
      // First seen, or moved since the last poll: idle from now.
      if (it == seen_.end() || now_seen.confirmed_lsn != slot.confirmed_lsn) {
        now_seen.confirmed_lsn = slot.confirmed_lsn;
        now_seen.moved = now;
      }
      const bool lost = slot.wal_status == "lost";
      if (lost && !now_seen.lost) {
        warnings.push_back(absl::StrCat(
            "\"slot\":", JsonOf(slot.name), ",\"message\":",
            JsonOf(absl::StrCat(
                "change stream ", slot.name,
                " is lost: PostgreSQL removed WAL it still needed (max_slot_wal_keep_size); its "
                "consumer must export everything again, and the slot should be dropped "
                "(dvexport streams drop --name ",
                slot.name, ")"))));
      }
      now_seen.lost = lost;
      const bool over = slot.retained_wal_bytes > options_.warn_wal_bytes;
      if (over && !now_seen.over_warning) {
        warnings.push_back(absl::StrCat(
            "\"slot\":", JsonOf(slot.name), ",\"retained_wal_bytes\":", slot.retained_wal_bytes,
            ",\"message\":",
            JsonOf(absl::StrCat("change stream ", slot.name, " retains ",
                                slot.retained_wal_bytes >> 20,
                                " MiB of WAL, more than --change_stream_warn_wal_mb ",
                                options_.warn_wal_bytes >> 20,
                                ": its consumer has not synced for a while; drop it if it was "
                                "abandoned (dvexport streams drop --name ",
                                slot.name, ")"))));
      }
      now_seen.over_warning = over;
      gauges.push_back(
          {.slot = slot.name,
           .retained_wal_bytes = slot.retained_wal_bytes,
           .idle_seconds =
               std::chrono::duration_cast<std::chrono::seconds>(now - now_seen.moved).count(),
           .lost = lost,
           .over_warning = over});
      seen.emplace(slot.name, now_seen);
    }
    // Slots dropped since the last poll are forgotten.
    seen_ = std::move(seen);
  }
  if (log_ != nullptr) {
    for (const std::string& warning : warnings) log_->WriteEvent("warning", warning);
  }
  if (observer_ != nullptr) observer_->ChangeStreamsPolled(gauges);
}

int64_t ChangeStreamMonitor::IdleSeconds(const std::string& name) const {
  std::lock_guard<std::mutex> lock(seen_mu_);
  auto it = seen_.find(name);
  if (it == seen_.end()) return -1;
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                          it->second.moved)
      .count();
}

}  // namespace dvexport::pipeline
