#ifndef DVEXPORT_SERVICE_AUTH_AUTHENTICATOR_H_
#define DVEXPORT_SERVICE_AUTH_AUTHENTICATOR_H_

// The authentication service around Verify (verify.h): a cache of verified identities, worker
// threads that verify cache misses without blocking gRPC's threads, one verification shared by
// concurrent misses of one credential, a bounded queue of verifications, and limits on failed
// attempts per peer address and per username (brute force). docs/SECURITY.md, "How a call
// authenticates".

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "service/auth/verify.h"
#include "service/db/read_session_options.h"

namespace dvexport::db {
class ConnectionPool;
class ReadSession;
}  // namespace dvexport::db

namespace dvexport::auth {

struct AuthenticatorOptions {
  // How long a verified identity is reused without asking the database again: a token revoked, a
  // user disabled or a sharing changed in DHIS2 takes effect within it. 0: every call verifies.
  std::chrono::seconds cache_ttl{60};
  // Identities kept at most (beyond it, expired ones and then any are dropped).
  int max_cached = 10000;
  // Threads that verify (database lookups and bcrypt), at a lower CPU priority than exports.
  int workers = 2;
  // Verifications waiting for a worker at most (distinct credentials: concurrent calls with one
  // credential share one); one more is refused with RESOURCE_EXHAUSTED.
  int max_pending = 256;
  // Failed attempts (wrong or unknown credentials) a peer address may make in a burst (an IPv4
  // address, or an IPv6 /64: FailureLimitKey), and per username (Basic, whether or not the user
  // exists): each limit is a token bucket of that many attempts, refilled evenly over
  // failure_window. An attempt takes its tokens when it starts verifying (so that a burst of
  // concurrent guesses cannot overtake the limit) and gets them back unless it fails.
  int max_failures_per_peer = 20;
  int max_failures_per_user = 10;
  std::chrono::seconds failure_window{300};
  // The database side of each verification (its deadline is the call's).
  db::ReadSessionOptions session;
};

// Why a call was refused an identity, when the refusal itself carries no RefusalReason (verify.h):
// the refusals of the Authenticator itself.
enum class AuthRefusal {
  kRejected,     // a refusal of Present, Verify or CheckPerCall (its RefusalReason says more)
  kRateLimited,  // too many failed attempts from the peer or for the username
  kQueueFull,    // max_pending verifications waiting
  kUnavailable,  // the database failed, the deadline came, the call was cancelled, shutdown
};

// "rejected", "rate_limited", "queue_full", "unavailable".
const char* AuthRefusalName(AuthRefusal refusal);

// What the Authenticator reports, for the metrics: from any thread, never under its lock.
class AuthObserver {
 public:
  virtual ~AuthObserver() = default;
  // "reason": RefusalReason of the refusal ("wrong_password", "token_expired", ...), else
  // AuthRefusalName: a fixed set, nothing of the caller.
  virtual void AuthRefused(const std::string& reason) = 0;
  // A call's credential was found in the cache (hit) or had to be verified (miss).
  virtual void AuthCacheLookup(bool hit) = 0;
};

// Asynchronous authentication of calls. Authenticate never blocks its caller: a cache hit, a
// malformed credential and a refused attempt answer at once (on the calling thread); a miss
// waits for a worker, which verifies it in a db::ReadSession bounded by the call's deadline and
// answers on its own thread. Thread-safe.
class Authenticator {
 public:
  using Done = std::function<void(absl::StatusOr<Identity>)>;

  // "*pool" and "*observer" (may be null) must outlive the Authenticator.
  Authenticator(db::ConnectionPool* pool, const AuthenticatorOptions& options,
                AuthObserver* observer);
  // Cancels the running verifications and answers every waiting call (Unavailable); then joins
  // the workers.
  ~Authenticator();
  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

  // Authenticates one call: "done" is called exactly once, with the call's identity or
  // Unauthenticated (with DHIS2's message, or one saying that there were too many failed
  // attempts and when to retry), ResourceExhausted (too many verifications waiting),
  // Unavailable / DeadlineExceeded (the database), Cancelled (Abandon). "peer_ip": the caller's
  // address (for the limits and the token's IP list). Returns the call's ticket for Abandon.
  uint64_t Authenticate(const Credentials& credentials, std::string peer_ip,
                        std::chrono::system_clock::time_point deadline, Done done);

  // The call went away: if its "done" has not been called yet, it is called now (Cancelled), on
  // this thread; a verification nobody waits for any more is dropped (or cancelled if running).
  // Idempotent; any ticket value.
  void Abandon(uint64_t ticket);

  // Identities in the cache now (expired ones included until they are dropped).
  int cached() const;
  // Verifications waiting for a worker now.
  int pending() const;
  // What waits and runs now.
  struct Counts {
    int pending = 0;    // verifications waiting for a worker (pending())
    int verifying = 0;  // verifications a worker runs
    int waiting = 0;    // calls waiting for a verification's outcome (queued or running)
  };
  Counts counts() const;
  // Waits until "condition(counts())" holds, or at most "at_most"; whether it held. "condition" is
  // asked under the lock, at once and each time a count changes, so that a state that lasts is
  // never missed: tests wait on what happens in here, not on time.
  bool AwaitCounts(const std::function<bool(const Counts&)>& condition,
                   std::chrono::milliseconds at_most) const;

 private:
  struct Waiter {
    Done done;
    std::string peer_ip;
    std::string method;                   // the request's, for the token's rules
    std::optional<std::string> referrer;  // the request's Referer, if any
    Transport transport = Transport::kGrpc;
    std::string key;  // the job's cache key
  };
  struct Job {
    PresentedCredential credential;
    std::vector<uint64_t> waiters;
    std::chrono::system_clock::time_point deadline;
    bool started = false;
    // The limiter buckets it holds a token of (given back unless it fails).
    std::string peer_bucket;
    std::string user_bucket;
    db::ReadSession* session = nullptr;  // while it runs
  };
  struct Cached {
    Identity identity;
    std::chrono::steady_clock::time_point expires;
  };
  struct Bucket {
    double tokens = 0;
    std::chrono::steady_clock::time_point updated;
  };

  void RunWorker();
  static Waiter MakeWaiter(Done done, std::string peer_ip, const Credentials& credentials,
                           const std::string& key);
  // Takes the failure-limit tokens a new verification of "presented" needs (into "*job"'s
  // buckets); the refusal if its address or username has none left.
  std::optional<absl::Status> TakeFailureTokensLocked(const PresentedCredential& presented,
                                                      const std::string& peer_ip,
                                                      std::chrono::steady_clock::time_point now,
                                                      Job* job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A cached identity answers the call: the per-call checks (token's IPs, methods, referrers).
  void AnswerFromCache(Identity identity, const Credentials& credentials,
                       const std::string& peer_ip, Done done);
  // Counts the refusal and tells the call, on this thread.
  void RefuseNow(AuthRefusal kind, const absl::Status& status, Done done);
  void Verified(const std::string& key, absl::StatusOr<Identity> identity);
  // Takes one token of bucket "key" of capacity "capacity"; else the time until one is back.
  std::optional<std::chrono::seconds> TakeLocked(const std::string& key, int capacity,
                                                 std::chrono::steady_clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void GiveBackLocked(const std::string& key, int capacity) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefundLocked(const Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SweepBucketsLocked(std::chrono::steady_clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Refuse(AuthRefusal kind, const absl::Status& status);
  Counts CountsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  db::ConnectionPool* const pool_;
  const AuthenticatorOptions options_;
  AuthObserver* const observer_;

  mutable std::mutex mu_;
  std::condition_variable work_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_ticket_ ABSL_GUARDED_BY(mu_) = 1;
  std::unordered_map<uint64_t, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);  // keys of jobs not started
  int verifying_ ABSL_GUARDED_BY(mu_) = 0;              // jobs a worker runs
  // Notified whenever a count of Counts changes (AwaitCounts).
  mutable std::condition_variable counts_changed_;
  std::unordered_map<std::string, Cached> cache_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  size_t buckets_at_last_sweep_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> workers_;
};

// The per-address failure bucket "address" (the caller's resolved address, the pipeline's
// ClientAddressText) counts against: an IPv4 address as itself ("10.0.0.1"; an IPv4-mapped IPv6
// address
// "::ffff:10.0.0.1" as its IPv4 address); an IPv6 address as its /64 ("2001:db8:1:2::/64",
// its zone dropped), since one IPv6 client commonly holds a whole /64; anything else (a Unix
// socket's peer) as it is.
std::string FailureLimitKey(std::string_view address);

}  // namespace dvexport::auth

#endif  // DVEXPORT_SERVICE_AUTH_AUTHENTICATOR_H_
