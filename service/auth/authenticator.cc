#include "service/auth/authenticator.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "service/db/connection_pool.h"
#include "service/db/read_session.h"

namespace dvexport::auth {
namespace {

// The workers' nice value: verifications (bcrypt is tens of milliseconds of CPU each) yield the
// cores to exports, which run at the process's own priority (0). Under contention the kernel
// gives a nice-10 thread about a tenth of a nice-0 thread's share.
constexpr int kWorkerNice = 10;

// Buckets are swept (full ones dropped: they hold nothing a new bucket would not) when their
// number has grown by this much since the last sweep.
constexpr size_t kBucketSweepGrowth = 1024;

std::chrono::seconds RetryAfter(double missing_tokens, double tokens_per_second) {
  const double seconds = std::ceil(missing_tokens / tokens_per_second);
  return std::chrono::seconds(std::max<int64_t>(1, static_cast<int64_t>(seconds)));
}

absl::Status TooManyFailures(absl::string_view whose, std::chrono::seconds retry_after) {
  return absl::UnauthenticatedError(absl::StrCat("too many failed authentication attempts ", whose,
                                                 "; retry in ", retry_after.count(), " s"));
}

}  // namespace

const char* AuthRefusalName(AuthRefusal refusal) {
  switch (refusal) {
    case AuthRefusal::kRejected:
      return "rejected";
    case AuthRefusal::kRateLimited:
      return "rate_limited";
    case AuthRefusal::kQueueFull:
      return "queue_full";
    case AuthRefusal::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

Authenticator::Authenticator(db::ConnectionPool* pool, const AuthenticatorOptions& options,
                             AuthObserver* observer)
    : pool_(pool), options_(options), observer_(observer) {
  const int workers = std::max(1, options_.workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back(&Authenticator::RunWorker, this);
}

Authenticator::~Authenticator() {
  std::vector<Waiter> orphans;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      Job& job = it->second;
      for (uint64_t id : job.waiters) {
        auto waiter = waiters_.find(id);
        if (waiter != waiters_.end()) orphans.push_back(std::move(waiter->second));
        waiters_.erase(id);
      }
      job.waiters.clear();
      if (job.started) {
        // Its worker ends it (Verified finds no waiter).
        if (job.session != nullptr) job.session->Cancel();
        ++it;
      } else {
        it = jobs_.erase(it);
      }
    }
    queue_.clear();
  }
  work_.notify_all();
  counts_changed_.notify_all();
  for (Waiter& waiter : orphans) {
    waiter.done(absl::UnavailableError("the server is shutting down"));
  }
  for (std::thread& worker : workers_) worker.join();
}

Authenticator::Waiter Authenticator::MakeWaiter(Done done, std::string peer_ip,
                                                const Credentials& credentials,
                                                const std::string& key) {
  return {.done = std::move(done),
          .peer_ip = std::move(peer_ip),
          .method = credentials.method,
          .referrer = credentials.referrer,
          .transport = credentials.transport,
          .key = key};
}

std::optional<absl::Status> Authenticator::TakeFailureTokensLocked(
    const PresentedCredential& presented, const std::string& peer_ip,
    std::chrono::steady_clock::time_point now, Job* job) {
  // A certificate was verified by TLS already; a token or a password takes a token of its peer's
  // bucket, a password one of its username's.
  if (presented.kind == CredentialKind::kCertificate) return std::nullopt;
  job->peer_bucket = absl::StrCat("p:", FailureLimitKey(peer_ip));
  if (std::optional<std::chrono::seconds> retry =
          TakeLocked(job->peer_bucket, options_.max_failures_per_peer, now);
      retry.has_value()) {
    return TooManyFailures("from this address", *retry);
  }
  if (presented.kind == CredentialKind::kBasic) {
    job->user_bucket = absl::StrCat("u:", presented.username);
    if (std::optional<std::chrono::seconds> retry =
            TakeLocked(job->user_bucket, options_.max_failures_per_user, now);
        retry.has_value()) {
      GiveBackLocked(job->peer_bucket, options_.max_failures_per_peer);
      return TooManyFailures("for this username", *retry);
    }
  }
  return std::nullopt;
}

void Authenticator::AnswerFromCache(Identity identity, const Credentials& credentials,
                                    const std::string& peer_ip, Done done) {
  if (observer_ != nullptr) observer_->AuthCacheLookup(true);
  absl::Status status =
      CheckPerCall(identity, peer_ip, std::chrono::system_clock::now(), credentials.method,
                   credentials.referrer, credentials.transport);
  if (!status.ok()) {
    Refuse(AuthRefusal::kRejected, status);
    done(std::move(status));
  } else {
    done(std::move(identity));
  }
}

void Authenticator::RefuseNow(AuthRefusal kind, const absl::Status& status, Done done) {
  Refuse(kind, status);
  done(status);
}

uint64_t Authenticator::Authenticate(const Credentials& credentials, std::string peer_ip,
                                     std::chrono::system_clock::time_point deadline, Done done) {
  // The rules of the DHIS2 the newest database connection found (2.42's until one did).
  const std::optional<dhis2::Dhis2Version> version =
      pool_ == nullptr ? std::nullopt : pool_->dhis2_version();
  absl::StatusOr<PresentedCredential> presented =
      Present(credentials, version.has_value() && version->served != 0 ? version->served : 42);
  if (!presented.ok()) {
    RefuseNow(AuthRefusal::kRejected, presented.status(), std::move(done));
    return 0;
  }
  const std::string key = presented->cache_key;
  const std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) {
    lock.unlock();
    RefuseNow(AuthRefusal::kUnavailable, absl::UnavailableError("the server is shutting down"),
              std::move(done));
    return 0;
  }
  if (auto cached = cache_.find(key); cached != cache_.end()) {
    if (cached->second.expires > now) {
      // A copy: the entry may be replaced or dropped once the lock is released.
      Identity identity = cached->second.identity;
      lock.unlock();
      AnswerFromCache(std::move(identity), credentials, peer_ip, std::move(done));
      return 0;
    }
    cache_.erase(cached);
  }
  const uint64_t ticket = next_ticket_++;
  if (auto running = jobs_.find(key); running != jobs_.end()) {
    // The same credential is being verified for another call: this one shares the outcome.
    Job& job = running->second;
    job.waiters.push_back(ticket);
    job.deadline = std::max(job.deadline, deadline);
    waiters_[ticket] = MakeWaiter(std::move(done), std::move(peer_ip), credentials, key);
    lock.unlock();
    counts_changed_.notify_all();
    if (observer_ != nullptr) observer_->AuthCacheLookup(false);
    return ticket;
  }
  // A new verification: a guess, until it succeeds.
  Job job;
  if (std::optional<absl::Status> refusal = TakeFailureTokensLocked(*presented, peer_ip, now, &job);
      refusal.has_value()) {
    lock.unlock();
    RefuseNow(AuthRefusal::kRateLimited, *refusal, std::move(done));
    return 0;
  }
  if (static_cast<int>(queue_.size()) >= options_.max_pending) {
    RefundLocked(job);
    lock.unlock();
    RefuseNow(AuthRefusal::kQueueFull,
              absl::ResourceExhaustedError(
                  absl::StrCat("too many authentications wait for verification (",
                               options_.max_pending, "); retry later")),
              std::move(done));
    return 0;
  }
  job.credential = *std::move(presented);
  job.deadline = deadline;
  job.waiters.push_back(ticket);
  waiters_[ticket] = MakeWaiter(std::move(done), std::move(peer_ip), credentials, key);
  queue_.push_back(key);
  jobs_.emplace(key, std::move(job));
  lock.unlock();
  work_.notify_one();
  counts_changed_.notify_all();
  if (observer_ != nullptr) observer_->AuthCacheLookup(false);
  return ticket;
}

void Authenticator::Abandon(uint64_t ticket) {
  if (ticket == 0) return;
  Done done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto waiter = waiters_.find(ticket);
    if (waiter == waiters_.end()) return;
    done = std::move(waiter->second.done);
    auto job = jobs_.find(waiter->second.key);
    waiters_.erase(waiter);
    if (job != jobs_.end()) {
      std::vector<uint64_t>& ids = job->second.waiters;
      ids.erase(std::remove(ids.begin(), ids.end(), ticket), ids.end());
      if (ids.empty()) {
        if (job->second.started) {
          if (job->second.session != nullptr) job->second.session->Cancel();
        } else {
          // Nobody waits: it is never verified, and it was no attempt.
          RefundLocked(job->second);
          queue_.erase(std::remove(queue_.begin(), queue_.end(), job->first), queue_.end());
          jobs_.erase(job);
        }
      }
    }
  }
  counts_changed_.notify_all();
  const absl::Status status =
      absl::CancelledError("the call was cancelled while it was being authenticated");
  Refuse(AuthRefusal::kUnavailable, status);
  done(status);
}

int Authenticator::cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(cache_.size());
}

int Authenticator::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

Authenticator::Counts Authenticator::CountsLocked() const {
  return {.pending = static_cast<int>(queue_.size()),
          .verifying = verifying_,
          .waiting = static_cast<int>(waiters_.size())};
}

Authenticator::Counts Authenticator::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return CountsLocked();
}

bool Authenticator::AwaitCounts(const std::function<bool(const Counts&)>& condition,
                                std::chrono::milliseconds at_most) const {
  std::unique_lock<std::mutex> lock(mu_);
  return counts_changed_.wait_for(lock, at_most, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return condition(CountsLocked());
  });
}

void Authenticator::RunWorker() {
  // Linux: a thread's nice value is its own (setpriority on its thread id). Raising it needs no
  // privilege; if it fails all the same, the worker verifies at the normal priority.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kWorkerNice);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_.wait(
        lock, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const std::string key = std::move(queue_.front());
    queue_.pop_front();
    auto found = jobs_.find(key);
    if (found == jobs_.end()) {
      counts_changed_.notify_all();
      continue;
    }
    Job& job = found->second;
    job.started = true;
    ++verifying_;
    const PresentedCredential credential = job.credential;
    db::ReadSession session(pool_, options_.session, job.deadline);
    job.session = &session;
    lock.unlock();
    counts_changed_.notify_all();
    absl::StatusOr<Identity> identity =
        Verify(session, credential, std::chrono::system_clock::now());
    lock.lock();
    // The job outlives its run: only this worker erases a started job.
    jobs_.at(key).session = nullptr;
    --verifying_;
    lock.unlock();
    counts_changed_.notify_all();
    Verified(key, std::move(identity));
    lock.lock();
  }
}

void Authenticator::Verified(const std::string& key, absl::StatusOr<Identity> identity) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = jobs_.find(key);
    if (found == jobs_.end()) return;
    Job job = std::move(found->second);
    jobs_.erase(found);
    // A failed guess keeps its tokens; a success or a failure that judged nothing (the
    // database, the deadline) gives them back.
    if (identity.ok() || !absl::IsUnauthenticated(identity.status())) RefundLocked(job);
    if (identity.ok() && options_.cache_ttl.count() > 0 && !stopping_) {
      const auto now = std::chrono::steady_clock::now();
      if (static_cast<int>(cache_.size()) >= std::max(1, options_.max_cached)) {
        for (auto it = cache_.begin(); it != cache_.end();) {
          it = it->second.expires <= now ? cache_.erase(it) : std::next(it);
        }
        if (static_cast<int>(cache_.size()) >= std::max(1, options_.max_cached)) {
          cache_.erase(cache_.begin());
        }
      }
      cache_[key] = {.identity = *identity, .expires = now + options_.cache_ttl};
    }
    for (uint64_t id : job.waiters) {
      auto waiter = waiters_.find(id);
      if (waiter == waiters_.end()) continue;
      waiters.push_back(std::move(waiter->second));
      waiters_.erase(waiter);
    }
  }
  counts_changed_.notify_all();
  for (Waiter& waiter : waiters) {
    if (!identity.ok()) {
      Refuse(absl::IsUnauthenticated(identity.status()) ? AuthRefusal::kRejected
                                                        : AuthRefusal::kUnavailable,
             identity.status());
      waiter.done(identity.status());
      continue;
    }
    absl::Status status = CheckPerCall(*identity, waiter.peer_ip, std::chrono::system_clock::now(),
                                       waiter.method, waiter.referrer, waiter.transport);
    if (!status.ok()) {
      Refuse(AuthRefusal::kRejected, status);
      waiter.done(std::move(status));
    } else {
      waiter.done(*identity);
    }
  }
}

std::optional<std::chrono::seconds> Authenticator::TakeLocked(
    const std::string& key, int capacity, std::chrono::steady_clock::time_point now) {
  const double rate = std::max(1, capacity) /
                      std::max<double>(1, static_cast<double>(options_.failure_window.count()));
  auto [it, inserted] = buckets_.try_emplace(key);
  Bucket& bucket = it->second;
  if (inserted) {
    bucket.tokens = capacity;
  } else {
    const double elapsed = std::chrono::duration<double>(now - bucket.updated).count();
    bucket.tokens = std::min<double>(capacity, bucket.tokens + elapsed * rate);
  }
  bucket.updated = now;
  if (bucket.tokens < 1) return RetryAfter(1 - bucket.tokens, rate);
  bucket.tokens -= 1;
  if (buckets_.size() > buckets_at_last_sweep_ + kBucketSweepGrowth) SweepBucketsLocked(now);
  return std::nullopt;
}

void Authenticator::GiveBackLocked(const std::string& key, int capacity) {
  if (key.empty()) return;
  auto it = buckets_.find(key);
  if (it == buckets_.end()) return;
  it->second.tokens = std::min<double>(capacity, it->second.tokens + 1);
}

void Authenticator::RefundLocked(const Job& job) {
  GiveBackLocked(job.peer_bucket, options_.max_failures_per_peer);
  GiveBackLocked(job.user_bucket, options_.max_failures_per_user);
}

void Authenticator::SweepBucketsLocked(std::chrono::steady_clock::time_point now) {
  const double window = std::max<double>(1, static_cast<double>(options_.failure_window.count()));
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    // Refilled completely by now, whatever its capacity: as good as a new bucket.
    const double elapsed = std::chrono::duration<double>(now - it->second.updated).count();
    it = elapsed >= window ? buckets_.erase(it) : std::next(it);
  }
  buckets_at_last_sweep_ = buckets_.size();
}

void Authenticator::Refuse(AuthRefusal kind, const absl::Status& status) {
  if (observer_ == nullptr) return;
  std::string reason = RefusalReason(status);
  observer_->AuthRefused(reason.empty() ? AuthRefusalName(kind) : reason);
}

std::string FailureLimitKey(std::string_view address_view) {
  const std::string address(address_view);
  // The canonical text of what inet_pton reads, so that two spellings of one address share it.
  std::array<char, INET6_ADDRSTRLEN> text{};
  in_addr v4{};
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return inet_ntop(AF_INET, &v4, text.data(), text.size()) != nullptr ? text.data() : address;
  }
  // A link-local address may carry its zone ("fe80::1%eth0"): one interface's /64 is one key.
  const std::string without_zone = address.substr(0, address.find('%'));
  in6_addr v6{};
  if (inet_pton(AF_INET6, without_zone.c_str(), &v6) != 1) return address;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    std::memcpy(&v4, v6.s6_addr + 12, sizeof(v4));
    return inet_ntop(AF_INET, &v4, text.data(), text.size()) != nullptr ? text.data() : address;
  }
  std::memset(v6.s6_addr + 8, 0, 8);
  if (inet_ntop(AF_INET6, &v6, text.data(), text.size()) == nullptr) return address;
  return absl::StrCat(text.data(), "/64");
}

}  // namespace dvexport::auth
